"""The project's one error tree.

Every error a user can cause is a :class:`TacgridError`. Its message says what was given,
where, and how to fix it; the command line prints it as one line and exits with status 2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Wording:
    """Text that names arguments: a format ``template`` whose fields are the ``roles`` it
    names (``"... run again with {resume}"``; the user's text in it through
    :func:`literal`). A note or a stop's message is one, so that the command line says
    ``--resume`` and an API caller ``resume``."""

    template: str
    roles: tuple[str, ...] = ()

    @classmethod
    def plain(cls, text: str) -> Wording:
        """``text`` as it is, naming no argument."""
        return cls(literal(text))

    def naming(self, names: Mapping[str, str] | None = None) -> str:
        """The text with each role called ``names[role]`` (else the role's own word)."""
        names = names or {}
        return self.template.format_map({r: names.get(r, r) for r in self.roles})

    def __str__(self) -> str:
        return self.naming()


class TacgridError(ValueError):
    """Root of every user-facing error (bad file, bad argument, bad stat).

    Raised with a message alone, it is that message. Raised with a ``role`` (which
    argument: ``"start"``, ``"token"``, ``"out"``, ...), the value as ``given`` and the
    ``problem``, its message is ``"<role> <given>: <problem>"`` and a front end names the
    argument its own way (:meth:`naming`; the command line by its flag, ``--from`` for
    ``start``: engine.cli). A problem that refers to other arguments lists their roles in
    ``others`` and writes each as ``{role}``; the problem is then a format template, and
    the user's text in it goes through :func:`literal`. An error that wraps another keeps
    its roles (:meth:`within`).
    """

    def __init__(
        self,
        message: str = "",
        *,
        role: str | None = None,
        given: str = "",
        problem: str = "",
        others: tuple[str, ...] = (),
    ) -> None:
        if message:
            template = literal(message)
        elif role is None and not others:
            template = literal(f"{given}: {problem}" if given else problem)
        else:
            body = problem if others else literal(problem)
            named = "{" + role + "}" if role else ""
            subject = " ".join(p for p in (named, literal(given)) if p)
            template = f"{subject}: {body}" if subject else body
        self._setup(template, ((role,) if role else ()) + others, role, given, problem)

    def _setup(
        self, template: str, roles: tuple[str, ...], role: str | None, given: str, problem: str
    ) -> None:
        #: The message as a format template: user text brace-quoted, each named argument
        #: ``{role}`` (one of ``roles``).
        self.template = template
        self.roles = roles
        self.role = role
        self.given = given
        self.problem = problem
        ValueError.__init__(self, self.naming())

    def naming(self, names: Mapping[str, str] | None = None) -> str:
        """The message with each argument it names called ``names[role]`` (the role's own
        word where ``names`` has none: an API user reads ``out``, ``resume``)."""
        return Wording(self.template, self.roles).naming(names)

    def detail(self) -> str:
        """The message without its argument's name (``move=x: expected a number``), for a
        front end that says where the value came from itself (a scenario's token)."""
        if self.role is None:
            return str(self)
        return self.naming({self.role: ""}).lstrip(" ")

    def within(self, prefix: str, cls: type[TacgridError] | None = None) -> TacgridError:
        """This error's message after ``prefix`` (plain text), as a ``cls`` (this error's
        class if not given) that still names the same arguments."""
        return _rebuild(
            cls or type(self), literal(prefix) + self.template, self.roles, None, "", ""
        )

    def __reduce__(self) -> tuple[Callable[..., TacgridError], tuple[object, ...], dict[str, Any]]:
        # The roles travel with the error when it is pickled (from a batch worker).
        state = (self.template, self.roles, self.role, self.given, self.problem)
        return (_rebuild, (type(self), *state), dict(self.__dict__))


def literal(text: str) -> str:
    """``text`` as plain text inside an error's template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _rebuild(
    cls: type[TacgridError],
    template: str,
    roles: tuple[str, ...],
    role: str | None,
    given: str,
    problem: str,
) -> TacgridError:
    # OSError's own __new__ where the class is one too (a WriteError): the others refuse it
    new = OSError.__new__ if issubclass(cls, OSError) else cls.__new__
    err = new(cls)
    TacgridError._setup(err, template, roles, role, given, problem)
    return err


class MapError(TacgridError):
    """A map file that cannot be read or is not a usable grid."""


class ArgumentError(TacgridError):
    """A command-line argument or an API argument with a bad value (a ``role``, the value
    ``given`` and the ``problem``: :class:`TacgridError`)."""


class StatError(TacgridError):
    """An unknown stat, or a stat value out of range."""


class CheckError(TacgridError):
    """A check expression that cannot be parsed."""


class ScenarioError(TacgridError):
    """A malformed scenario file."""


class WriteError(ArgumentError, OSError):
    """An output file that cannot or must not be written (see :mod:`engine.safeio`).

    Also an :class:`OSError` (with the cause's ``errno`` where there was one, and a short
    ``strerror``), so code that handles failed writes as OS errors still sees them; it
    prints as its one-line message.
    """

    def __init__(
        self,
        message: str = "",
        errno: int | None = None,
        reason: str | None = None,
        *,
        role: str | None = None,
        given: str = "",
        problem: str = "",
    ) -> None:
        super().__init__(message, role=role, given=given, problem=problem)
        self.errno = errno
        self.strerror = reason or str(self)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Callable[..., TacgridError], tuple[object, ...], dict[str, Any]]:
        # errno and strerror are OSError's slots, not in __dict__: kept by name.
        rebuild, args, state = super().__reduce__()
        return rebuild, args, {**state, "errno": self.errno, "strerror": self.strerror}


#: The package's extras (pyproject.toml's ``[project.optional-dependencies]``) and what each
#: brings; the base install runs the engine and the viewer without them.
EXTRAS = {
    "analysis": "pyarrow, matplotlib, pandas",
    "cluster": "dask, distributed",
}


class MissingExtra(ArgumentError):
    """What was asked for needs an extra that is not installed: one line naming the extra
    and the pip command. ``what`` names the asker (``sweep``, ``report --charts``) where no
    argument (``role``) does."""

    def __init__(self, extra: str, what: str = "", *, role: str | None = None) -> None:
        problem = f"needs the {extra} extra ({EXTRAS[extra]}): pip install 'tacgrid[{extra}]'"
        super().__init__(role=role, given="" if role else what, problem=problem)
        self.extra = extra


class Stopped(KeyboardInterrupt):
    """A stop asked for by a signal: SIGINT (Ctrl-C) or SIGTERM (``kill``), numbered
    ``signum``. A KeyboardInterrupt, so a SIGTERM unwinds as Ctrl-C does: every ``finally``
    runs, :mod:`engine.safeio` removes a file half-written. The command line raises it for
    SIGTERM (``engine.cli.main``), says what was stopped (``message``, or the signal's
    name; ``wording`` is the message with the arguments it names, for a front end to name)
    and exits with status 128 + ``signum``."""

    def __init__(self, signum: int, message: str | Wording = "") -> None:
        self.wording = message if isinstance(message, Wording) else Wording.plain(message)
        super().__init__(str(self.wording))
        self.signum = signum
        self.message = str(self.wording)


def stop_signal(exc: KeyboardInterrupt) -> tuple[int, str]:
    """The number and name of the signal that stopped a command: a :class:`Stopped` says
    which; any other KeyboardInterrupt is Ctrl-C's SIGINT."""
    import signal  # only when stopped: quick commands start without it

    signum = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
    return signum, signal.Signals(signum).name


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``.

    >>> did_you_mean("whisperspce", ["whisperspace", "d6"])
    " (did you mean 'whisperspace'?)"
    """
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _escapes(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    for code in [*range(0x20), 0x7F]:
        table[code] = f"\\x{code:02x}"
    table.update({0x0D: "\\r", 0x0A: "\\n"})
    del table[0x09]  # a tab moves the cursor along the line only
    if keep_newlines:
        del table[0x0A]
    # C1 controls (U+0085 is a line break to some terminals and to Python's splitlines),
    # the line and paragraph separators, and the bidirectional overrides that reorder
    # what a line shows: written as JSON writes them, so a JSON document stays JSON.
    for code in [*range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F)]:
        table[code] = f"\\u{code:04x}"
    for code in range(0x2066, 0x206A):
        table[code] = f"\\u{code:04x}"
    return table


_ONE_LINE = _escapes(keep_newlines=False)
_LINES = _escapes(keep_newlines=True)


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` safe to print: every control character (ESC, BEL, ``\\r``, ...), C1 control
    (``\\x85``), line or paragraph separator (U+2028, U+2029) and bidirectional override
    escaped, so what a file holds can neither drive the terminal nor break a line. With
    ``lines`` the text's own line breaks (``\\n``) stay: for a printer of several lines
    whose fields were quoted one-line already.

    Every line the command line prints goes through here (errors, ``info``,
    ``replay --text``, notes, warnings), as does every quote of user text in a message
    (:func:`engine.sources.clip`).

    >>> printable("a\\x1b[2Jb\\u2028c\\nd")
    'a\\\\x1b[2Jb\\\\u2028c\\\\nd'
    """
    return text.translate(_LINES if lines else _ONE_LINE)
