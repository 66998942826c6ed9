"""The command line (CONTRACT.md): `tacgrid COMMAND ...`.

Every command that reports takes ``--json`` and then prints exactly one JSON document on
stdout. A user error is one line on stderr and exit status 2 (``--debug`` adds the
traceback); "no path" style answers exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, NoReturn

from engine.errors import ArgumentError, TacgridError, did_you_mean

#: The repository root (maps/, scenarios/, assets/ live beside engine/).
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MAP = ROOT / "maps" / "encounter.tmx"
DEFAULT_SCENARIO = ROOT / "scenarios" / "chase.yaml"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage, so errors stay one line."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")


# --------------------------------------------------------------------------- info


def info_report(path: str) -> dict[str, Any]:
    """The `info` JSON for a map file (CONTRACT.md)."""
    from engine.tiled import load_map

    model = load_map(path)
    g = model.grid
    size, unit, source = model.cell_size, model.cell_unit, "map"
    if size is None or unit is None:
        source = "default"
        size = size if size is not None else 5.0
        unit = unit or "ft"
    staggered = g.orientation in ("hexagonal", "staggered")
    return {
        "path": path,
        "orientation": g.orientation,
        "grid": g.kind,
        "stagger_axis": g.stagger_axis if staggered else None,
        "stagger_index": g.stagger_index if staggered else None,
        "hex_side": g.hex_side if g.orientation == "hexagonal" else None,
        "width": g.width,
        "height": g.height,
        "tile_width": g.tile_width,
        "tile_height": g.tile_height,
        "pixel_size": list(g.pixel_size()),
        "cell_size": size,
        "cell_unit": unit,
        "cell_size_source": source,
        "diagonals": g.diagonals if g.kind != "hex" else None,
        "system": model.system,
        "cells": model.mode_counts(),
        "terrain": model.terrain_counts(),
        "spawns": [{"id": s.id, "cell": list(s.cell)} for s in model.spawns],
        "exits": [{"name": e.name, "cells": [list(c) for c in e.cells]} for e in model.exits],
        "layers": [lay.name for lay in model.layers],
        "origin": list(model.origin),
        "notes": list(model.notes),
    }


def format_info(rep: dict[str, Any]) -> str:
    lines = [f"{rep['path']}"]
    grid = rep["grid"]
    if rep["orientation"] == "hexagonal":
        top = "pointy-top" if rep["stagger_axis"] == "y" else "flat-top"
        grid = f"hex ({top}, stagger {rep['stagger_axis']}/{rep['stagger_index']}, side {rep['hex_side']})"
    elif rep["orientation"] == "staggered":
        grid = f"staggered diamond (stagger {rep['stagger_axis']}/{rep['stagger_index']})"
    elif rep["orientation"] == "isometric":
        grid = "square (drawn isometric)"
    lines.append(f"  grid      {grid}, {rep['width']} x {rep['height']} cells")
    lines.append(
        f"  tiles     {rep['tile_width']} x {rep['tile_height']} px, map "
        f"{rep['pixel_size'][0]} x {rep['pixel_size'][1]} px"
    )
    src = "" if rep["cell_size_source"] == "map" else " (default; set map property cell_size)"
    lines.append(f"  cell      {rep['cell_size']:g} {rep['cell_unit']}{src}")
    if rep["diagonals"]:
        lines.append(f"  diagonals {rep['diagonals']}")
    if rep["system"]:
        lines.append(f"  system    {rep['system']}")
    total = rep["width"] * rep["height"]
    lines.append("  cells by movement mode:")
    for mode, n in rep["cells"].items():
        if n:
            lines.append(f"    {mode:<8} {n:>8}  {100 * n / total:5.1f}%")
    lines.append("  terrain:")
    for name, n in list(rep["terrain"].items())[:12]:
        lines.append(f"    {name:<16} {n:>8}")
    if len(rep["terrain"]) > 12:
        lines.append(f"    ... {len(rep['terrain']) - 12} more")
    if rep["spawns"]:
        spawns = ", ".join(f"{s['id']} {s['cell'][0]},{s['cell'][1]}" for s in rep["spawns"])
        lines.append(f"  spawns    {spawns}")
    if rep["exits"]:
        exits = ", ".join(f"{e['name']} ({len(e['cells'])} cells)" for e in rep["exits"])
        lines.append(f"  exits     {exits}")
    for note in rep["notes"]:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def cmd_info(args: argparse.Namespace) -> int:
    rep = info_report(args.map)
    if args.json:
        _print_json(rep)
    else:
        print(format_info(rep))
    return 0


# --------------------------------------------------------------------------- systems


def parse_sets(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` (repeatable) -> dict."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ArgumentError(f"--set {pair}: expected key=value, e.g. --set wild_one=none")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_system(name: str, sets: list[str] | None) -> Any:
    from engine import systems

    return systems.create(name, parse_sets(sets))


def cmd_systems(args: argparse.Namespace) -> int:
    from engine import systems

    docs = [systems.get(n).describe() for n in systems.names()]
    if args.json:
        _print_json({"systems": docs})
        return 0
    for d in docs:
        print(f"{d['name']}: {d['title']} ({d['source']})")
        print(
            f"  unit {d['unit']}, cell {d['cell_size']} {d['unit']}, {d['turn']['name']} of "
            f"{d['turn']['seconds']} s, {d['turn']['actions']} action(s); paces: "
            f"{', '.join(d['paces'])} (default {d['default_pace']})"
        )
        print("  stats:")
        for st in d["stats"]:
            extra = f" [{' | '.join(st['choices'])}]" if "choices" in st else ""
            print(
                f"    {st['name']:<14} {st['type']:<7} default {st['default']!s:<8}{extra} {st.get('help', '')}"
            )
        if d["settings"]:
            print("  settings (--set key=value):")
            for st in d["settings"]:
                extra = f" [{' | '.join(st['choices'])}]" if "choices" in st else ""
                print(
                    f"    {st['name']:<22} default {st['default']!s:<10}{extra} {st.get('help', '')}"
                )
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    system = make_system(args.system, args.set)
    token = system.token(args.token or "")
    rep = system.stats_report(token)
    if args.distance is not None:
        plan = getattr(system, "long_distance_figure", None)
        if plan is None:
            raise ArgumentError(f"--distance: {system.name} has no long-distance rules")
        from engine.systems.base import jsonable

        rep["long_distance"] = jsonable(plan(token, args.distance))
    if args.json:
        _print_json(rep)
        return 0
    print(f"{rep['system']}: {', '.join(f'{k}={v}' for k, v in rep['stats'].items())}")
    print(f"  rates ({rep['unit']}): " + ", ".join(f"{k} {v}" for k, v in rep["rates"].items()))
    print(
        f"  cells per {rep['turn']['name']} moving the whole {rep['turn']['name']} "
        f"({rep['cell_size']} {rep['unit']} cells):"
    )
    for mode, n in rep["per_turn"].items():
        if mode != "blocked":
            print(f"    {mode:<8} {n}")
    print(f"  encumbrance {rep['encumbrance']}")
    shown = {
        "system",
        "unit",
        "cell_size",
        "turn",
        "stats",
        "rates",
        "per_turn",
        "encumbrance",
        "state",
        "settings",
    }
    for key, value in rep.items():
        if key not in shown:
            print(f"  {key}: {json.dumps(value)}")
    return 0


# --------------------------------------------------------------------------- path and reach

GLYPHS = {
    "walk": ".",
    "crawl": "=",
    "swim": "~",
    "climb": "^",
    "ladder": "H",
    "gap": "O",
    "air": ":",
    "blocked": "#",
}
TURN_MARKS = "123456789abcdefghijklmnopqrstuvwxyz"


def _load_for_search(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from engine.tiled import load_map

    model = load_map(args.map)
    name = args.system or model.system
    if not name:
        raise ArgumentError(
            f"{args.map}: the map names no rule system; give --system (see `tacgrid systems`)"
        )
    system = make_system(name, args.set)
    token = system.token(args.token or "")
    return model, system, token


def draw_cells(model: Any, marks: dict[tuple[int, int], str], margin: int = 3) -> str:
    """The map as text (one glyph per cell by movement mode) with ``marks`` on top.

    Cropped to the marked cells plus a margin; hex rows/columns that Tiled shifts are
    indented by one character so neighbours line up as they do on the map.
    """
    g = model.grid
    if marks:
        cs = [c for c, _ in marks]
        rs = [r for _, r in marks]
        c0, c1 = max(0, min(cs) - margin), min(g.width - 1, max(cs) + margin)
        r0, r1 = max(0, min(rs) - margin), min(g.height - 1, max(rs) + margin)
    else:
        c0, c1, r0, r1 = 0, g.width - 1, 0, g.height - 1
    lines = [f"   cols {c0}..{c1}, rows {r0}..{r1}"]
    for r in range(r0, r1 + 1):
        row = []
        for c in range(c0, c1 + 1):
            row.append(marks.get((c, r)) or GLYPHS[model.terrain_at((c, r)).move])
        sep = " " if g.kind == "hex" else ""
        shift = " " if g.kind == "hex" and g.stagger_axis == "y" and g.parity((0, r)) else ""
        lines.append(f"{r:>4} {shift}{sep.join(row)}")
    return "\n".join(lines)


def cmd_path(args: argparse.Namespace) -> int:
    from engine.movement import MovementGraph
    from engine.search import NoPath, find_path, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "--from"), parse_cell(args.goal, "--to")
    graph = MovementGraph(model, system, token, args.pace)
    try:
        rep = find_path(graph, start, goal, prefer=args.prefer)
    except NoPath as exc:
        if args.json:
            _print_json({"system": system.name, "cells": [], "reason": str(exc)})
        else:
            print(f"no path: {exc}")
        return 1
    if args.json:
        _print_json(rep)
        return 0
    marks = {}
    for step in rep["steps"][1:]:
        marks[tuple(step["cell"])] = TURN_MARKS[min(step["turn"], len(TURN_MARKS)) - 1]
    marks[start], marks[goal] = "S", "G"
    print(
        f"{system.name} path {start[0]},{start[1]} -> {goal[0]},{goal[1]} at {rep['pace']}: "
        f"{rep['turns_exact']} turns ({rep['turns']:.3g}), {rep['distance']} {rep['unit']}, "
        f"{len(rep['cells']) - 1} steps, p(no failure) {rep['p_no_failure']:.4f}"
    )
    print(draw_cells(model, marks))
    print("   S start, G goal, 1-9 a-z: the turn each cell is entered in")
    for step in rep["steps"]:
        if step["check"]:
            ch = step["check"]
            print(
                f"   check at {step['cell'][0]},{step['cell'][1]}: {ch['what']} {ch['target']} "
                f"-> {100 * ch['p_success']:.2f}%"
            )
    for turn in rep["plan"]:
        print(
            f"   turn {turn['turn']}: ends at {turn['end'][0]},{turn['end'][1]}, {len(turn['cells'])} cells"
        )
    for alt in rep.get("pareto", []):
        print(f"   option: {alt['turns']:.3g} turns, p(no failure) {alt['p_no_failure']:.4f}")
    return 0


def _band_glyphs(bands: list[str]) -> dict[str, str]:
    """One distinct letter per band (cautious c, cruising C, ...)."""
    out: dict[str, str] = {}
    for band in bands:
        for ch in (band[0], band[0].upper(), *band[1:]):
            if ch.isalpha() and ch not in out.values():
                out[band] = ch
                break
    return out


def cmd_reach(args: argparse.Namespace) -> int:
    from engine.movement import MovementGraph
    from engine.search import parse_cell, reach

    model, system, token = _load_for_search(args)
    start = parse_cell(args.start, "--from")
    pace = args.pace or system.fastest_pace
    graphs = {p: MovementGraph(model, system, token, p) for p in system.paces}
    if pace not in graphs:
        raise ArgumentError(f"--pace {pace}: {system.name} paces are {', '.join(system.paces)}")
    rep = reach(graphs, pace, start, args.turns)
    rep.pop("tree")
    if args.json:
        _print_json(rep)
        return 0
    glyph = _band_glyphs(rep["bands"])
    marks = {
        tuple(c["cell"]): c["band"][4:] if c["band"].startswith("turn") else glyph[c["band"]]
        for c in rep["cells"]
    }
    marks[start] = "@"
    bands = ", ".join(f"{glyph[b]} = {b}" for b in rep["bands"])
    print(
        f"{system.name} reach from {start[0]},{start[1]} in {args.turns} turn(s) at {pace}: {len(rep['cells'])} cells"
    )
    print(draw_cells(model, marks))
    print(f"   @ start; first turn: {bands}; 2, 3, ...: the turn a cell is reached in")
    return 0


# --------------------------------------------------------------------------- fly


def cmd_fly(args: argparse.Namespace) -> int:
    from engine.flight import fly_report, format_fly
    from engine.search import NoPath, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "--from"), parse_cell(args.goal, "--to")
    try:
        rep = fly_report(
            model,
            system,
            token,
            start,
            args.heading,
            args.speed,
            goal,
            args.land,
            altitude=args.altitude,
            goal_heading=args.end_heading,
        )
    except NoPath as exc:
        if args.json:
            _print_json({"system": system.name, "turns": None, "plan": [], "reason": str(exc)})
        else:
            print(f"no flight plan: {exc}")
        return 1
    if args.json:
        _print_json(rep)
    else:
        print(format_fly(rep, model))
    return 0


# --------------------------------------------------------------------------- run and replay


def cmd_run(args: argparse.Namespace) -> int:
    from engine.batch import run_batch

    overrides = parse_sets(args.set)
    if args.run_seed is not None:
        return _run_one(args, overrides)
    progress = None
    bar = None
    if sys.stderr.isatty() and not args.json:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("runs", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

    try:
        summary = run_batch(
            args.scenario,
            runs=args.runs,
            seed=args.seed,
            workers=args.workers,
            scheduler=args.scheduler,
            out_dir=args.out,
            resume=args.resume,
            overrides=overrides,
            progress=progress,
        )
    finally:
        if bar is not None:
            bar.stop()
    if not args.no_plots:
        summary = _add_plots(args, summary)
    if args.json:
        _print_json(summary)
        return 0
    print(f"{summary['scenario']}: {summary['runs']} runs, seed {summary['seed']}")
    for name, count in summary["outcomes"].items():
        lo, hi = summary["ci95"][name]
        print(
            f"  {name:<8} {count:>6}  {100 * summary['rates'][name]:5.1f}%  (95% CI {100 * lo:.1f}-{100 * hi:.1f}%)"
        )
    t = summary["turns"]
    print(f"  turns    mean {t['mean']:.2f}, median {t['p50']:g}, 90% {t['p90']:g}")
    print(f"  results  {summary['results']}")
    for plot in summary.get("plots", []):
        print(f"  plot     {plot}")
    return 0


def _add_plots(args: argparse.Namespace, summary: dict[str, Any]) -> dict[str, Any]:
    """PNG plots beside summary.json, listed in it (rewritten atomically)."""
    from engine.batch import read_runs
    from engine.scenario import load_scenario

    results = read_runs(os.path.join(args.out, "runs.jsonl"))
    scenario = load_scenario(args.scenario, overrides=parse_sets(args.set))
    from engine.viewer.plots import write_plots

    summary = {
        **summary,
        "plots": write_plots(results, scenario.model.path, args.out, scenario.name),
    }
    path = os.path.join(args.out, "summary.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    os.replace(path + ".tmp", path)
    return summary


def _run_one(args: argparse.Namespace, overrides: dict[str, str]) -> int:
    """One run with its own run seed (as listed in runs.jsonl), with its event log."""
    from engine.scenario import load_scenario
    from engine.sim import Simulation

    _check_writable(args.log, "--log")
    scenario = load_scenario(args.scenario, overrides=overrides)
    sim = Simulation(scenario, args.run_seed)
    result = sim.run().to_dict()
    if args.log:
        try:
            sim.write_log(args.log)
        except OSError as exc:
            raise ArgumentError(f"--log {args.log}: cannot write ({exc.strerror})") from None
        result["log"] = args.log
    result["final"] = sim.final_states()
    if args.json:
        _print_json(result)
    else:
        print(
            f"run seed {args.run_seed}: {result['outcome']} after {result['turns']} turns"
            + (
                f" at {result['cell'][0]},{result['cell'][1]} by {result['by']}"
                if result["cell"]
                else ""
            )
        )
        if args.log:
            print(f"  event log: {args.log} ({result['events']} events)")
    return 0


#: Keys each kind of event must carry for `replay` (other kinds are skipped).
_EVENT_KEYS = {
    "start": ("tokens",),
    "turn": ("turn",),
    "move": ("token", "path"),
    "check": ("token", "cell", "what", "degree"),
    "state": ("token", "state"),
    "end": ("outcome",),
}


def read_event_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:
    """An event log, checked so that replaying it cannot fail half-way.

    ``engine.sim.read_log`` trusts its file; a damaged or foreign one (binary, a folder,
    JSON lines that are not events, events without their keys) is one clear line here.
    ``viewer``: the start event must also name its scenario file.
    """
    from engine.sim import replay_states

    hint = "give an event log written by `tacgrid run SCENARIO --run-seed N --log FILE`"

    def bad(problem: str) -> ArgumentError:
        return ArgumentError(f"{path}: {problem}; {hint}")

    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except FileNotFoundError:
        raise ArgumentError(f"{path}: event log not found") from None
    except IsADirectoryError:
        raise bad("is a folder, not an event log") from None
    except UnicodeDecodeError:
        raise bad("not a text file") from None
    except OSError as exc:
        raise bad(f"cannot read ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise bad("not a usable file name") from None
    events: list[dict[str, Any]] = []
    tokens: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            raise bad(f"line {n} is not JSON") from None
        if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
            raise bad(f"line {n} is not an event (a JSON object with a type)")
        kind = ev["type"]
        if not events and kind != "start":
            raise bad("not a tacgrid event log (no start event)")
        missing = [k for k in _EVENT_KEYS.get(kind, ()) if k not in ev]
        if viewer and kind == "start" and not isinstance(ev.get("scenario"), str):
            missing.append("scenario")
        if missing:
            raise bad(f"line {n}: a {kind} event without {', '.join(missing)}")
        if kind == "start":
            if not isinstance(ev["tokens"], dict) or not all(
                isinstance(s, dict) for s in ev["tokens"].values()
            ):
                raise bad(f"line {n}: the start event's tokens are not token states")
            tokens = set(ev["tokens"])
        elif kind in ("move", "state", "check"):
            if not isinstance(ev["token"], str) or (ev["token"] not in tokens and kind != "state"):
                raise bad(f"line {n}: no token {ev['token']!r} in the start event")
            tokens.add(ev["token"])
            if kind == "move" and not _is_path(ev["path"]):
                raise bad(f"line {n}: the move's path is not a list of [col, row] cells")
            if kind == "state" and not isinstance(ev["state"], dict):
                raise bad(f"line {n}: the state event's state is not a token state")
        events.append(ev)
    if not events:
        raise bad("not a tacgrid event log (no start event)")
    try:
        replay_states(events)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        # What is left are token states with values of the wrong kind (read by sim).
        raise bad(f"a token state cannot be read ({type(exc).__name__}: {exc})") from None
    return events


def _is_path(path: Any) -> bool:
    return (
        isinstance(path, list)
        and bool(path)
        and all(
            isinstance(c, list)
            and len(c) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in c)
            for c in path
        )
    )


def cmd_replay(args: argparse.Namespace) -> int:
    from engine.sim import replay_states

    window = not args.text and not args.json
    events = read_event_log(args.log, viewer=window)
    if window:
        _check_writable(args.screenshot, "--screenshot")
        from engine.viewer.app import replay as view_replay

        return int(view_replay(args.log, frames=args.frames, screenshot=args.screenshot))
    turns: list[dict[str, Any]] = []
    for i, ev in enumerate(events):
        if ev["type"] == "turn":
            turns.append({"turn": ev["turn"], "moves": [], "checks": []})
        elif ev["type"] == "move" and turns:
            turns[-1]["moves"].append({"token": ev["token"], "path": ev["path"]})
        elif ev["type"] == "check" and turns:
            turns[-1]["checks"].append({k: ev[k] for k in ("token", "cell", "what", "degree")})
        del i
    states, outcome = replay_states(events)
    doc = {
        "scenario": events[0].get("scenario"),
        "seed": events[0].get("seed"),
        "turns": turns,
        "outcome": outcome,
        "final": {k: v.to_dict() for k, v in states.items()},
    }
    if args.json:
        _print_json(doc)
        return 0
    print(f"{doc['scenario']} seed {doc['seed']}: {outcome or 'unfinished'}")
    for t in turns:
        moves = "; ".join(
            f"{m['token']} -> {m['path'][-1][0]},{m['path'][-1][1]}" for m in t["moves"]
        )
        fails = [
            c
            for c in t["checks"]
            if c["degree"] not in ("success", "extreme_success", "critical_success")
        ]
        extra = f"  ({len(fails)} failed checks)" if fails else ""
        print(f"  turn {t['turn']}: {moves}{extra}")
    return 0


# --------------------------------------------------------------------------- viewer


def _check_writable(path: str | None, what: str) -> None:
    """Refuse an output file whose folder is missing before any work starts."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ArgumentError(f"{what} {path}: is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ArgumentError(f"{what} {path}: the folder {folder} does not exist; create it first")


def cmd_view(args: argparse.Namespace) -> int:
    from engine.viewer.app import view

    if (args.frames is None) != (args.screenshot is None) and args.screenshot is not None:
        raise ArgumentError("--screenshot needs --frames N (draw N frames, save, exit)")
    _check_writable(args.screenshot, "--screenshot")
    source = args.source or str(DEFAULT_SCENARIO)
    return view(
        source,
        system=args.system,
        sets=parse_sets(args.set),
        token=args.token,
        frames=args.frames,
        screenshot=args.screenshot,
    )


def cmd_render(args: argparse.Namespace) -> int:
    from engine.viewer.app import render_scenario

    w, h = render_scenario(args.source, args.out, system=args.system, scale=args.scale)
    if args.json:
        _print_json({"out": args.out, "width": w, "height": h})
    else:
        print(f"{args.out}: {w} x {h} px")
    return 0


# --------------------------------------------------------------------------- odds and roll


def cmd_odds(args: argparse.Namespace) -> int:
    from engine.checks import format_odds, odds_report

    rep = odds_report(args.system, " ".join(args.check))
    if args.json:
        _print_json(rep)
    else:
        print(format_odds(rep))
    return 0


def cmd_roll(args: argparse.Namespace) -> int:
    from engine.checks import format_roll, roll_report

    # No --seed: draw one, and report it, so the roll can still be reproduced.
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rep = roll_report(args.system, " ".join(args.check), seed)
    if args.json:
        _print_json(rep)
    else:
        print(format_roll(rep))
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0, e.g. --seed 42")
    return value


# --------------------------------------------------------------------------- parser


COMMAND_NAMES: list[str] = []


def build_parser() -> _Parser:
    p = _Parser(prog="tacgrid", description="Tactical grid movement simulator")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("info", help="what a map is")
    s.add_argument("map", help="a Tiled .tmx file")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("systems", help="rule systems, their stats and settings")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_systems)

    s = sub.add_parser("stats", help="a token's derived movement figures")
    _system_args(s)
    s.add_argument(
        "--distance",
        type=_distance,
        default=None,
        metavar="METRES",
        help="long-distance plan over this distance (systems with long-distance rules)",
    )
    s.set_defaults(func=cmd_stats)
    s = sub.add_parser("path", help="best path between two cells")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument("--pace", default=None, help="the system's pace (default: its default)")
    s.add_argument("--prefer", default="fast", choices=("fast", "safe"), help="quickest or safest")
    s.set_defaults(func=cmd_path)

    s = sub.add_parser("reach", help="cells reachable from a cell")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--turns", type=_positive, default=1, help="turns of movement (default 1)")
    s.add_argument("--pace", default=None, help="pace (default: the system's fastest)")
    s.set_defaults(func=cmd_reach)

    s = sub.add_parser("run", help="headless batch of seeded runs of a scenario")
    s.add_argument("scenario", help="a scenario .yaml")
    s.add_argument("--runs", type=_positive, default=None, help="runs (default: the scenario's)")
    s.add_argument("--seed", type=_seed, default=None, help="batch seed (default: the scenario's)")
    s.add_argument("--workers", type=_positive, default=1, help="local worker processes")
    s.add_argument(
        "--scheduler", default=None, metavar="ADDR", help="Dask scheduler, tcp://HOST:PORT"
    )
    s.add_argument("--out", default="runs", help="output folder (default ./runs)")
    s.add_argument("--resume", action="store_true", help="complete an interrupted batch in --out")
    s.add_argument("--run-seed", type=_seed, default=None, help="play one run with this run seed")
    s.add_argument("--log", default=None, help="with --run-seed: write the event log here")
    s.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("replay", help="step through a recorded run")
    s.add_argument("log", help="an event log (tacgrid run SCENARIO --run-seed N --log FILE)")
    s.add_argument("--text", action="store_true", help="print it turn by turn instead of a window")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.add_argument("--frames", type=_positive, default=None, help="draw N frames and exit")
    s.add_argument("--screenshot", default=None, help="with --frames: save the window here")
    s.set_defaults(func=cmd_replay)

    s = sub.add_parser("view", help="the GM viewer (a map or a scenario)")
    s.add_argument("source", nargs="?", default=None, help="a .tmx map or a scenario .yaml")
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--token", default="", help="a bare map's tokens' stats (key=value,...)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--frames", type=_positive, default=None, help="draw N frames and exit")
    s.add_argument("--screenshot", default=None, help="with --frames: save the window here")
    s.set_defaults(func=cmd_view)

    s = sub.add_parser("render", help="draw a map or scenario to a PNG without a window")
    s.add_argument("source", help="a .tmx map or a scenario .yaml")
    s.add_argument("--out", required=True, help="the PNG to write")
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--scale", type=float, default=1.0, help="scale factor (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_render)

    s = sub.add_parser("fly", help="flight plan: fewest turns to a cell (or a landing)")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--heading", type=_whole, default=0, help="degrees clockwise from up")
    s.add_argument("--speed", type=_whole, default=0, help="cells a turn (0: on the ground)")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument("--land", action="store_true", help="end the move there and land safely")
    s.add_argument("--end-heading", type=_whole, default=None, help="arrive with this heading")
    s.add_argument("--altitude", type=_whole, default=0, help="start altitude in m (Speedpoints)")
    s.set_defaults(func=cmd_fly)

    s = sub.add_parser("odds", help="exact chances of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. athletics=2 dc=6 bonus=1")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_odds)

    s = sub.add_parser("roll", help="one seeded roll of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. dice=3D+1 dn=13")
    s.add_argument("--seed", type=_seed, default=None, help="seed (default: drawn and reported)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_roll)
    COMMAND_NAMES[:] = list(sub.choices)
    return p


def _distance(text: str) -> Fraction:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected metres > 0, e.g. 10000")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 1")
    return value


def _system_args(s: argparse.ArgumentParser, token: bool = True, required: bool = True) -> None:
    s.add_argument(
        "--system",
        required=required,
        default=None,
        help="rule system (see `tacgrid systems`)" + ("" if required else "; default: the map's"),
    )
    if token:
        s.add_argument("--token", default="", help="key=value,key=value or a YAML/JSON file")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `tacgrid` and `python main.py`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        if not argv or argv == ["--debug"]:
            # The main job: the GM viewer on the shipped default scenario.
            argv = [*argv, "view"]
        known = set(COMMAND_NAMES)
        first = next((a for a in argv if not a.startswith("-")), None)
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
            traceback.print_exc()
        msg = str(exc)
        # The message quotes what the user gave, which may hold line breaks: keep one line.
        msg = msg.replace("\r", "\\r").replace("\n", "\\n")
        sys.stderr.write(f"tacgrid: {msg}\n" if not msg.startswith("tacgrid") else f"{msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("tacgrid: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
