"""The docs hold what the tool shows: every stat and setting `tacgrid systems` names, every
field of the JSON documents, every map property `info` and the reader know, every scenario
key; and nothing printed to a user points outside the repository (to ../shared).

A new stat, setting, JSON field, map property or scenario key fails here until docs/ says what
it is. Documents are taken from the commands themselves (`main([... "--json"])`) on small
maps drawn by the test, so the fields checked are the ones a script reads.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from conftest import ROOT

from engine.cli import main
from engine.report.systems import format_systems, systems_report

DOCS = ROOT / "docs"
#: What a user-facing string must never name: the project's notes outside the repository.
OUTSIDE = re.compile(r"RULES\.md|CONTRACT\.md|MAP-FORMAT\.md|\.\./shared|TABLE-NOTES|TECH-NOTES")


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(doc: str, heading: str) -> str:
    """The part of ``doc`` under the heading line ``heading`` (e.g. ``### d6``), up to the
    next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = doc.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        pytest.fail(f"no heading {heading!r}")
    out = []
    for line in lines[start + 1 :]:
        m = re.match(r"(#+) ", line)
        if m and len(m.group(1)) <= level:
            break
        out.append(line)
    return "\n".join(out)


def missing(names: Iterable[str], doc: str) -> list[str]:
    """The names not written in ``doc`` as code: `` `name` ``, or a key ``"name"`` of a JSON
    shape written out (`` `{"cell", "turns"}` ``)."""
    return sorted({n for n in names if f"`{n}`" not in doc and f'"{n}"' not in doc})


def cli_json(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, json.loads(out.getvalue())


def keys_of(docs: Iterable[Any], path: tuple[str, ...]) -> set[str]:
    """The keys found at ``path`` (``"[]"`` steps into every list entry) in ``docs``."""
    found: set[str] = set()

    def walk(node: Any, rest: tuple[str, ...]) -> None:
        if not rest:
            if isinstance(node, dict):
                found.update(node)
            return
        head, tail = rest[0], rest[1:]
        if head == "[]":
            for item in node if isinstance(node, list) else []:
                walk(item, tail)
        elif isinstance(node, dict) and isinstance(node.get(head), dict | list):
            walk(node[head], tail)

    for d in docs:
        walk(d, path)
    return found


# ---------------------------------------------------------------------------------------------
# tacgrid systems: every stat, setting and act, in its system's section of rules.md
# ---------------------------------------------------------------------------------------------

SYSTEMS = systems_report()["systems"]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _rows(doc: str, header: str | None = None) -> dict[str, list[str]]:
    """Table rows by their first cell's first code name: ``| `x` | a | b |`` -> cells; with
    ``header``, only the rows of the tables whose first column is headed so."""
    rows: dict[str, list[str]] = {}
    inside = header is None
    for line in doc.splitlines():
        if not line.startswith("|"):
            inside = header is None
            continue
        first = line.strip("|").split("|")[0].strip()
        if header is not None and first == header:
            inside = True
        m = re.match(r"\| `([^`]+)`", line)
        if m and inside:
            rows.setdefault(m.group(1), [c.strip() for c in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.parametrize("sysdoc", SYSTEMS, ids=lambda d: d["name"])
def test_every_stat_and_setting_is_in_its_systems_section(sysdoc: dict[str, Any]) -> None:
    sec = section(text("rules.md"), f"### {sysdoc['name']}")
    stats = [s["name"] for s in sysdoc["stats"]]
    assert not missing(stats, sec), f"stats of {sysdoc['name']} not in rules.md's section"
    assert not missing(stats, " ".join(" ".join(r[:1]) for r in _rows(sec, "stat").values()))
    rows = _rows(sec, "setting")
    for st in sysdoc["settings"]:
        name = st["name"]
        assert name in rows, f"setting {name} has no row in rules.md's {sysdoc['name']} table"
        cells = rows[name]
        # | setting | default | choices | what it means | the seed's words |
        assert len(cells) == 5, f"{name}: row {cells}"
        assert cells[1].strip("`") == _shown(st["default"]), (
            f"{name}: rules.md says default {cells[1]}, tacgrid systems {st['default']!r}"
        )
        assert not missing(st.get("choices", ()), cells[2]), f"{name}: choices {cells[2]}"
        assert cells[3] and cells[4], f"{name}: says nothing of its meaning or its seed"
        if "ruling" in st.get("help", ""):
            assert "ruling" in cells[3], f"{name} is a ruling; its row must say so"


def test_every_act_is_in_the_acts_table() -> None:
    acts = section(text("rules.md"), "### Actions besides moving (acts)")
    rows = {
        m.group(1): line
        for line in acts.splitlines()
        if (m := re.match(r"\| `([a-z0-9_]+)` \|", line))
    }
    for sysdoc in SYSTEMS:
        names = [a["name"] for a in sysdoc.get("acts", [])]
        assert sysdoc["name"] in rows, f"no acts row for {sysdoc['name']}"
        assert not missing(names, rows[sysdoc["name"]]), sysdoc["name"]


def test_systems_json_fields_are_documented() -> None:
    sec = section(text("commands.md"), "### `systems`")
    entry = set().union(*(d.keys() for d in SYSTEMS))
    turn = keys_of(SYSTEMS, ("turn",))
    params = keys_of(SYSTEMS, ("stats", "[]")) | keys_of(SYSTEMS, ("settings", "[]"))
    acts = keys_of(SYSTEMS, ("acts", "[]"))
    assert not missing({"systems"} | entry | turn | params | acts, sec)


# ---------------------------------------------------------------------------------------------
# stats, path, reach, fly, odds, roll, info: every field of the --json documents
# ---------------------------------------------------------------------------------------------

STAT_SAMPLES = {
    "whisperspace": ["", "items=light*3+crate:5,speed=35,prone=true,bulk=20,dragging=true"],
    "mythmaster": ["", "flyer=true,body_weight=80,carriers=2,climbing=12,swimming=3,dash=true"],
    "d6": ["", "items=20,running=4D,speed=high"],
    "speedpoints": ["", "airspeed=10,toughness=3,stamina=5,load=200"],
    "generic": ["", "fly=true,speed=40"],
}


def _stats_tables() -> tuple[str, dict[str, str]]:
    """commands.md's common `stats` fields, and each system's own rows joined."""
    sec = section(text("commands.md"), "### `stats`")
    common = sec.split("#### ", 1)[0]
    own = section(sec, "#### Each system's own figures")
    per: dict[str, str] = {}
    current = ""
    for line in own.splitlines():
        m = re.match(r"\| (`[a-z0-9_]+`)? *\|", line)
        if m and line.startswith("| "):
            if m.group(1):
                current = m.group(1).strip("`")
            per[current] = per.get(current, "") + line + "\n"
    return common, per


@pytest.mark.parametrize("system", sorted(STAT_SAMPLES))
def test_stats_fields_are_documented(system: str) -> None:
    reps = []
    for spec in STAT_SAMPLES[system]:
        argv = ["stats", "--system", system, "--json"] + (["--token", spec] if spec else [])
        if system == "d6":
            argv += ["--set", "encumbrance=true", "--distance", "22000", "--terrain", "difficult"]
        code, rep = cli_json(*argv)
        assert code == 0
        reps.append(rep)
    common, per = _stats_tables()
    own = per.get(system, "")
    gaps = [k for k in set().union(*reps) if missing([k], common) and missing([k], own)]
    assert not gaps, f"{system} stats fields not in commands.md: {sorted(gaps)}"
    assert not missing(keys_of(reps, ("turn",)) | keys_of(reps, ("state",)), common)


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("docmaps")
    return {
        "wall": tmxtext.write(d / "wall.tmx", ["..~^..", "..~^..", "..~^.."]),
        "gap": tmxtext.write(d / "gap.tmx", [".....O.....", "..........."]),
        "pareto": tmxtext.write(d / "pareto.tmx", ["#####", "#.~.#", "#.^.#", "#...#", "#####"]),
        "closed": tmxtext.write(d / "closed.tmx", ["..#.."]),
    }


def _paths(maps: dict[str, Path]) -> list[dict[str, Any]]:
    asks = [
        ("wall", "whisperspace", "athletics=1", "0,0", "5,0"),
        ("wall", "whisperspace", "prone=true", "0,1", "2,1"),
        ("wall", "mythmaster", "climbing=12,swimming=5", "0,0", "5,0"),
        ("wall", "d6", "", "0,0", "5,0"),
        ("gap", "speedpoints", "running=6", "0,0", "10,0"),
        ("pareto", "whisperspace", "", "1,1", "3,1"),
        ("closed", "generic", "", "0,0", "4,0"),
    ]
    out = []
    for m, system, token, start, goal in asks:
        argv = ["path", str(maps[m]), "--system", system, "--from", start, "--to", goal]
        code, rep = cli_json(*argv, *(["--token", token] if token else []), "--json")
        assert code == (1 if m == "closed" else 0), rep
        out.append(rep)
    return out


def test_path_fields_are_documented(maps: dict[str, Path]) -> None:
    reps = _paths(maps)
    found = {
        "path": keys_of(reps, ()),
        "step": keys_of(reps, ("steps", "[]")),
        "check": keys_of(reps, ("steps", "[]", "check")),
        "failure": keys_of(reps, ("steps", "[]", "check", "failures", "[]")),
        "climb": keys_of(reps, ("steps", "[]", "climb")),
        "jump": keys_of(reps, ("steps", "[]", "jump")),
        "plan": keys_of(reps, ("plan", "[]")),
        "pareto": keys_of(reps, ("pareto", "[]")),
    }
    # The samples reach every part of the document (else this test checks less than it says).
    for part in ("climb", "jump", "failure", "pareto"):
        assert found[part], f"no sample path has a {part}"
    assert {"first", "on_failure", "reason"} <= found["step"] | found["path"]
    sec = section(text("commands.md"), "### `path`")
    assert not missing(set().union(*found.values()), sec)
    effects = {e for r in reps for e in r.get("on_failure", [])}
    assert not missing(effects, sec)


def test_reach_fields_are_documented(maps: dict[str, Path]) -> None:
    reps = []
    for system in ("whisperspace", "d6"):
        code, rep = cli_json(
            "reach", str(maps["gap"]), "--system", system, "--from", "0,0", "--turns", "2", "--json"
        )
        assert code == 0
        reps.append(rep)
    sec = section(text("commands.md"), "### `reach`")
    assert not missing(keys_of(reps, ()) | keys_of(reps, ("cells", "[]")), sec)
    assert "`turn2`" in sec


def test_fly_fields_are_documented() -> None:
    reps = []
    for argv in (
        ["--system", "mythmaster", "--token", "adaptability=14,flyer=true", "--from", "2,2"]
        + ["--to", "20,12", "--land"],
        ["--system", "mythmaster", "--token", "adaptability=14,flyer=true", "--from", "2,2"]
        + ["--to", "8,6", "--ground-pace", "run"],
        ["--system", "speedpoints", "--token", "airspeed=10", "--from", "2,20", "--to", "10,20"],
    ):
        code, rep = cli_json("fly", str(ROOT / "maps" / "hex_pointy.tmx"), *argv, "--json")
        assert code == 0, rep
        reps.append(rep)
    found = (
        keys_of(reps, ())
        | keys_of(reps, ("plan", "[]"))
        | keys_of(reps, ("end",))
        | {a for r in reps for t in r["plan"] for a in t["actions"]}
    )
    assert {"events", "altitude", "take_off_speed"} <= found
    assert not missing(found, section(text("commands.md"), "### `fly`"))


ODDS = [
    ("whisperspace", "athletics=2 dc=6 bonus=1"),
    ("whisperspace", "fall=25"),
    ("mythmaster", "skill=15 adjust=-2"),
    ("d6", "dice=3D dn=13"),
    ("speedpoints", "ability=4 difficulty=5"),
    ("speedpoints", "fall=7 ability=3 surface=soft"),
]


def test_odds_and_roll_fields_are_documented() -> None:
    reps = []
    for system, check in ODDS:
        for extra in ([], ["--seed", "3"]):
            cmd = "roll" if extra else "odds"
            code, rep = cli_json(cmd, "--system", system, *check.split(), *extra, "--json")
            assert code == 0
            reps.append(rep)
    sec = section(text("commands.md"), "### `odds` and `roll`")
    degrees = keys_of(reps, ("outcomes",))
    assert not missing(keys_of(reps, ()) | keys_of(reps, ("events", "[]")) | degrees, sec)


@pytest.mark.parametrize("system", ["whisperspace", "mythmaster", "d6", "speedpoints"])
def test_check_keys_are_documented(system: str) -> None:
    import importlib

    module = importlib.import_module(f"engine.systems.{system}")
    keys = set(module._CHECK_KEYS) | set(getattr(module, "_FALL_KEYS", {}))
    rows = _rows(section(text("commands.md"), "### `odds` and `roll`"))
    assert not missing(keys, " ".join(rows[system])), f"{system}'s CHECK keys"


def test_info_fields_are_documented(tmp_path: Path) -> None:
    reps = [
        cli_json("info", str(ROOT / "maps" / name), "--json")[1]
        for name in ("chase.tmx", "hex_pointy.tmx", "vtt_room.dd2vtt")
    ]
    world = tmp_path / "w.world"
    tmxtext.write(tmp_path / "a.tmx", ["..", ".."])
    world.write_text(json.dumps({"type": "world", "maps": [{"fileName": "a.tmx", "x": 0, "y": 0}]}))
    code, wrep = cli_json("info", str(world), "--json")
    assert code == 0
    found = keys_of(reps, ()) | keys_of([wrep], ()) | keys_of([wrep], ("maps", "[]"))
    for part in ("spawns", "exits", "walls"):
        found |= keys_of(reps, (part, "[]"))
    found |= keys_of(reps, ("cells",))
    assert {"id", "kind", "open", "name"} <= found  # the samples have walls and doors
    assert not missing(found, section(text("commands.md"), "### `info`"))


# ---------------------------------------------------------------------------------------------
# Map properties (maps.md) and scenario keys (scenarios.md)
# ---------------------------------------------------------------------------------------------


def _map_properties_read() -> set[str]:
    """Every map property the Tiled reader reads: ``mprops.get("NAME" ...)``/``mprops["NAME"]``."""
    names: set[str] = set()
    for p in (ROOT / "engine" / "tiled").glob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "get" and node.args:
                    target, arg = node.func.value, node.args[0]
            elif isinstance(node, ast.Subscript):
                target, arg = node.value, node.slice
            if (
                isinstance(target, ast.Name)
                and target.id == "mprops"
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                names.add(arg.value)
    return names


def test_map_properties_are_documented() -> None:
    from engine.grid import DIAGONAL_RULES
    from engine.mapmodel import CORNER_RULES, FALLS, TERRAIN_KEYS, UNITS, WALL_KINDS
    from engine.terrain import DIFFICULTIES, MODES

    props = _map_properties_read()
    assert {"cell_size", "cell_unit", "diagonals", "system", "corners"} <= props
    doc = text("maps.md")
    map_rows = _rows(section(doc, "## Map properties"))
    assert not sorted(props - set(map_rows)), "map properties without a row in maps.md"
    terrain_rows = _rows(section(doc, "## Terrain"))
    assert not sorted(set(TERRAIN_KEYS) - set(terrain_rows)), "terrain properties without a row"
    values = {
        "move": MODES,
        "difficulty": DIFFICULTIES,
        "fall": FALLS,
    }
    for key, allowed in values.items():
        assert not missing(allowed, " ".join(terrain_rows[key])), f"values of {key}"
    assert not missing(DIAGONAL_RULES, " ".join(map_rows["diagonals"]))
    assert not missing(CORNER_RULES, " ".join(map_rows["corners"]))
    assert not missing(UNITS, " ".join(map_rows["cell_unit"]))
    objects = section(doc, "## Objects")
    assert not missing((*WALL_KINDS, "spawn", "exit", "open"), objects)
    assert not missing(("terrain_layer", "corners"), doc)


def test_scenario_keys_are_documented() -> None:
    from engine.scenario import (
        EDITABLE_TERRAIN,
        EDITABLE_TOKEN,
        GOAL_KEYS,
        TOKEN_KEYS,
        TOP_KEYS,
    )

    doc = text("scenarios.md")
    rows = _rows(section(doc, "## The fields"))
    firsts = " ".join(" ".join(r[:1]) for r in rows.values())
    assert not missing((*TOP_KEYS, *TOKEN_KEYS), firsts), "scenario keys without a row"
    assert not missing(GOAL_KEYS, " ".join(rows["goals"])), "goals"
    assert not missing(("heading", "speed", "altitude"), " ".join(rows["flight"])), "flight"
    assert not missing(("vary", "runs", "seed"), " ".join(rows["sweep"])), "sweep"
    edits = (*EDITABLE_TERRAIN, *(f"TOKEN.{k}" for k in EDITABLE_TOKEN))
    assert not missing(edits, text("batches.md")), "what a sweep or --set may change"


# ---------------------------------------------------------------------------------------------
# Nothing shown to a user points outside the repository; the docs' links resolve
# ---------------------------------------------------------------------------------------------


def _user_strings() -> list[str]:
    """Every string literal in engine/ that is not a docstring, as ``file:line: text``
    (comments and docstrings are for developers and may cite the project's notes)."""
    hits = []
    for p in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        docs = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and OUTSIDE.search(node.value)
            ):
                hits.append(f"{p.relative_to(ROOT)}:{node.lineno}: {node.value[:80]}")
    return hits


def test_no_user_facing_output_names_the_shared_notes() -> None:
    assert not _user_strings(), "strings a user may see name ../shared files"
    rep = systems_report()
    for shown in (format_systems(rep), json.dumps(rep)):
        assert not OUTSIDE.search(shown)
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        hits = [
            f"{doc.name}:{n}"
            for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
            if OUTSIDE.search(line)
        ]
        assert not hits, f"user docs name ../shared files: {hits}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {
        _slug(line.lstrip("#"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"#+ ", line)
    }


def test_links_into_docs_resolve() -> None:
    """Every link of README.md and docs/*.md to a page (and its #anchor) exists, and so does
    every docs/PAGE#anchor that `tacgrid systems` prints."""
    bad = []
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            page, _, anchor = target.partition("#")
            path = (doc.parent / page) if page else doc
            if not path.exists():
                bad.append(f"{doc.name}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                bad.append(f"{doc.name}: {target}")
    shown = format_systems(systems_report())
    for page, anchor in re.findall(r"docs/([a-z_]+\.md)(?:#([a-z0-9_-]+))?", shown):
        if not (DOCS / page).exists() or (anchor and anchor not in _anchors(DOCS / page)):
            bad.append(f"tacgrid systems: docs/{page}#{anchor}")
    assert not bad, bad
    assert "docs/rules.md#d6" in shown
