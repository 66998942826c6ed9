"""The command line (CONTRACT.md): `tacgrid COMMAND ...`.

Every command that reports takes ``--json`` and then prints exactly one JSON document on
stdout. A user error is one line on stderr and exit status 2 (``--debug`` adds the
traceback); "no path" style answers exit 1.

A module per family of commands (info, rules, moves, runs, views), each with one
``_add_<command>`` (its sub-parser) beside its ``cmd_<command>`` (its dispatch); this module
builds the parser from them, runs the command and maps errors to exit statuses. Each command
imports what it needs when it runs, so quick commands start quickly; every report's
formatting lives in :mod:`engine.report`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from engine.cli import info, moves, rules, runs, solve, views
from engine.cli.common import FLAGS, _Parser, make_system, parse_sets, say
from engine.cli.views import read_event_log
from engine.errors import (
    ArgumentError,
    Stopped,
    TacgridError,
    did_you_mean,
    printable,
    stop_signal,
)
from engine.report.maptext import GLYPHS, TURN_MARKS, draw_cells

#: ``GLYPHS``, ``TURN_MARKS`` and ``draw_cells`` live in engine.report.maptext;
#: ``parse_sets`` and ``make_system`` in engine.cli.common; ``read_event_log`` in
#: engine.cli.views; all still importable from here. The shipped maps and scenarios (the
#: default scenario among them) are found by engine.data, installed or not.
__all__ = [
    "GLYPHS",
    "TURN_MARKS",
    "build_parser",
    "draw_cells",
    "main",
    "make_system",
    "parse_sets",
    "read_event_log",
]

#: Longest error line printed (messages quote at most ~80 characters of user input).
MAX_MESSAGE = 1000

COMMAND_NAMES: list[str] = []


def build_parser() -> _Parser:
    p = _Parser(prog="tacgrid", description="Tactical grid movement simulator")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    p.add_argument(
        "--version",
        action="store_true",
        help="print the version and whether the compiled kernel is active (and exit); "
        "with --json as one JSON document",
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    info._add_info(sub)
    rules._add_systems(sub)
    rules._add_stats(sub)
    moves._add_path(sub)
    moves._add_reach(sub)
    runs._add_run(sub)
    views._add_replay(sub)
    views._add_view(sub)
    views._add_render(sub)
    moves._add_fly(sub)
    rules._add_odds(sub)
    rules._add_roll(sub)
    runs._add_sweep(sub)
    runs._add_report(sub)
    solve._add_solve(sub)
    views._add_export(sub)
    COMMAND_NAMES[:] = list(sub.choices)
    return p


#: What ``tacgrid --version`` says of each state of the compiled kernel (engine.kernel.state).
KERNEL_WORDS = {
    "active": "compiled kernel active",
    "off": "compiled kernel off (TACGRID_NO_KERNEL is set): the numpy and scipy loops run",
    "not built": "compiled kernel not built (no C compiler at install): the numpy and scipy "
    "loops run, the same answers, slower on big maps and batches",
    "stale": "compiled kernel stale (built from an older engine/_kernel.c, without {missing}): "
    "the numpy and scipy loops run until it is rebuilt (pip install -e .)",
}


def _version(argv: list[str]) -> int:
    """``tacgrid --version [--json]``: the version (package metadata) and the kernel."""
    import platform

    from engine import kernel, version

    rest = [a for a in argv if a not in ("--version", "--json", "--debug")]
    if rest:
        raise ArgumentError(
            f"tacgrid --version: takes only --json, not {rest[0][:80]}; give a command alone"
        )
    doc: dict[str, Any] = {
        "version": version(),
        "python": platform.python_version(),
        "kernel": kernel.state(),
    }
    if kernel.missing():
        doc["missing"] = list(kernel.missing())
    if "--json" in argv:
        from engine.cli.common import _print_json

        _print_json(doc)
    else:
        words = KERNEL_WORDS[doc["kernel"]].format(missing=", ".join(kernel.missing()))
        say(f"tacgrid {doc['version']} (Python {doc['python']}; {words})")
    return 0


def _raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def _sigterm_stops() -> Any:
    """While a command runs in the main thread: SIGTERM raises :class:`Stopped` (a
    KeyboardInterrupt), where its default would end the process at once. The command then
    unwinds as on Ctrl-C: a file being written is removed, not left as a temporary file
    (engine.safeio), a batch keeps its runs (engine.batch installs its own handlers for its
    runs and puts these back after). Returns the handler to put back, or None where another
    handler than the default was set (a program that calls ``main`` keeps its own)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _raise_stopped)


#: The argument each command reads its input from, in the order looked for: what a
#: MemoryError or RecursionError line names.
READ_ARGUMENTS = ("source", "map", "scenario", "log", "dir")


def _too_much(args: Any, exc: BaseException) -> str:
    """The last guard's line for running out of memory or stack: it names the command's
    input (its main path argument) where the command was parsed, and says what to do."""
    said = (
        "too large or too deeply nested for this machine; give a smaller or flatter file, "
        f"or run tacgrid where more memory is free ({type(exc).__name__})"
    )
    for name in READ_ARGUMENTS:
        value = getattr(args, name, None)
        if isinstance(value, (str, os.PathLike)) and os.fspath(value):
            return f"tacgrid: {os.fspath(value)[:200]}: the file is {said}"
    return f"tacgrid: the input is {said}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `tacgrid` and `python main.py`."""
    old = _sigterm_stops()
    try:
        return _main(argv)
    finally:
        if old is not None:
            import signal

            signal.signal(signal.SIGTERM, old)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    # No command does linear algebra, and OpenBLAS starts a thread pool when numpy is first
    # imported, which every command would pay for at start-up (a user's own setting wins).
    # numpy is not imported yet: engine.lazy defers it to first use.
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args: Any = None  # the parsed command, once parsed: names what it read on a last guard
    try:
        parser = build_parser()
        if not argv or argv == ["--debug"]:
            # The main job: the GM viewer on the shipped default scenario.
            argv = [*argv, "view"]
        known = set(COMMAND_NAMES)
        first = next((a for a in argv if not a.startswith("-")), None)
        if first is None and "--version" in argv:
            return _version(argv)
        if first is not None and first not in known:
            raise ArgumentError(
                f"tacgrid: unknown command '{first}'{did_you_mean(first, sorted(known))}; "
                f"commands: {', '.join(sorted(known))}"
            )
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        return int(args.func(args))
    except TacgridError as exc:
        if debug:
            import traceback  # only here: quick commands start without it

            traceback.print_exc()
        msg = exc.naming(FLAGS)  # each argument the message names by its flag
        # The message quotes what the user gave, which may hold line breaks or terminal
        # controls: escaped (engine.errors.printable), one line.
        msg = printable(msg)
        if len(msg) > MAX_MESSAGE:  # readers quote at most ~80 characters; a last guard
            msg = msg[: MAX_MESSAGE - 3] + "..."
        sys.stderr.write(f"tacgrid: {msg}\n" if not msg.startswith("tacgrid") else f"{msg}\n")
        return 2
    except (RecursionError, MemoryError) as exc:
        # Readers cap sizes and nesting before this can happen; a last guard, one line.
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(printable(_too_much(args, exc)) + "\n")
        return 2
    except KeyboardInterrupt as exc:
        # Ctrl-C, or SIGTERM (Stopped): a command with more to say caught it already.
        import signal

        signum, name = stop_signal(exc)
        if isinstance(exc, Stopped) and exc.message:
            sys.stderr.write(f"tacgrid: {printable(exc.wording.naming(FLAGS))}\n")
        elif signum == signal.SIGINT:
            sys.stderr.write("tacgrid: interrupted\n")
        else:
            sys.stderr.write(f"tacgrid: stopped by {name}\n")
        return 128 + signum
    except BrokenPipeError:
        return 0
