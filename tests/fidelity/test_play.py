"""Fidelity suite for play: the turn loop applies every check's result as the seeds say (issue 38).

Written blind: every expected number and effect is worked by hand from the seed texts
(shared/seeds/), shared/RULES.md and the rulings R1-R4 of issue 38 (quoted where used); no
engine module was read. Each test draws a small map and a scenario in tmp_path, plays many seeded
runs with `tacgrid run SCENARIO --run-seed N --log FILE` and checks EVERY logged occurrence of
the effect against the seed.

What the tests read of an event log (JSON lines, seen in the logs of shipped scenarios):
- `{"type": "start", "tokens": {ID: STATE}}`, then `{"type": "turn", "turn": N}` before each turn;
- `{"type": "roll", "token", "expression", "faces", "total", "decided"}`: every die roll;
- `{"type": "check", "token", "cell", "what", "target", "degree", "success"}` after its roll;
- `{"type": "move", "token", "path", "turns"}` and `{"type": "state", "token", "state": STATE}`,
  STATE = `{"cell", "mode", "conditions", "progress", "counters"}`, once per token and turn.
Names read from today's logs and relied on: D6 `what` "move PACE ...", `target` "DN n" and the
collision roll's `decided` "collision damage ..." ; condition names `kneeling`, `prone`,
`no_actions`, `fell`, `in_gap`; Whisperspace falls as a roll "1d12+MOD" whose `decided` starts
"fall"; the counter `damage` (Whisperspace falls keep it). Assumed where no log shows it yet: a
condition whose name contains "asphyx", and Speedpoints fall damage in the counters `damage` and
`stun`.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction as F
from math import floor
from pathlib import Path
from typing import Any

import pytest

from .conftest import tacgrid

# ---------------------------------------------------------------- maps, scenarios, logs


def _prop(name: str, value: Any) -> str:
    kind = ' type="float"' if isinstance(value, float) else ""
    return f'<property name="{name}"{kind} value="{value}"/>'


def own_tmx(
    rows: list[str],
    legend: dict[str, dict[str, Any]],
    *,
    hexgrid: bool = False,
    props: dict[str, Any] | None = None,
) -> str:
    """A .tmx of the drawing with a tileset of our own legend (tests/tmxtext.py's shared legend
    has no difficulty levels, heights or depths of our choosing)."""
    chars = list(legend)
    tiles = "".join(
        f'<tile id="{i}"><properties>'
        + "".join(_prop(k, v) for k, v in legend[ch].items())
        + "</properties></tile>"
        for i, ch in enumerate(chars)
    )
    height, width = len(rows), len(rows[0])
    assert all(len(r) == width for r in rows), "ragged drawing"
    data = ",\n".join(",".join(str(chars.index(ch) + 1) for ch in row) for row in rows)
    grid = 'orientation="orthogonal" tilewidth="32" tileheight="32"'
    if hexgrid:  # pointy-top, odd rows shifted (as the other suites' HEX)
        grid = (
            'orientation="hexagonal" tilewidth="28" tileheight="32" hexsidelength="16" '
            'staggeraxis="y" staggerindex="odd"'
        )
    mprops = "".join(_prop(k, v) for k, v in (props or {}).items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" {grid} renderorder="right-down" width="{width}" '
        f'height="{height}" infinite="0"><properties>{mprops}</properties>'
        f'<tileset firstgid="1" name="own" tilewidth="32" tileheight="32" '
        f'tilecount="{len(chars)}" columns="{len(chars)}">{tiles}</tileset>'
        f'<layer id="1" name="ground" width="{width}" height="{height}">'
        f'<data encoding="csv">\n{data}\n</data></layer></map>\n'
    )


def play(
    folder: Path,
    name: str,
    *,
    system: str,
    rows: list[str],
    legend: dict[str, dict[str, Any]],
    tokens: list[dict[str, Any]],
    turns: int,
    seeds: range,
    settings: dict[str, Any] | None = None,
    hexgrid: bool = False,
    props: dict[str, Any] | None = None,
) -> list[list[dict[str, Any]]]:
    """Write the map and scenario, play one logged run per seed; the logs' events."""
    (folder / f"{name}.tmx").write_text(own_tmx(rows, legend, hexgrid=hexgrid, props=props))
    scenario = {
        "name": name,
        "map": f"{name}.tmx",
        "system": system,
        "seed": 1,
        "runs": 1,
        "turns": turns,
        "goals": {"capture": 0},
        "settings": {"tokens_block": "none", **(settings or {})},
        "tokens": [{"side": "x", "policy": "waypoints", **t} for t in tokens],
    }
    sc = folder / f"{name}.yaml"
    sc.write_text(json.dumps(scenario), encoding="utf-8")  # JSON is YAML
    logs = []
    for seed in seeds:
        log = folder / f"{name}_{seed}.jsonl"
        rc, _out, err = tacgrid("run", sc, "--run-seed", seed, "--log", log)
        assert rc == 0, f"run {name} seed {seed}: {err.strip()}"
        logs.append([json.loads(line) for line in log.read_text().splitlines() if line.strip()])
    return logs


def frac(value: Any) -> F:
    """A JSON figure (int, float or "a/b" string) as an exact Fraction."""
    if isinstance(value, str):
        return F(value)
    if isinstance(value, float):
        return F(value).limit_denominator(10**6)
    return F(value)


class Run:
    """One run's log, cut by turn, for one token."""

    def __init__(self, events: list[dict[str, Any]], token: str) -> None:
        self.token = token
        self.start = events[0]["tokens"][token]
        self.turns: dict[int, list[dict[str, Any]]] = {}
        turn = 0
        for e in events:
            if e["type"] == "turn":
                turn = e["turn"]
                self.turns[turn] = []
            elif turn and e.get("token") == token:
                self.turns[turn].append(e)

    def of(self, turn: int, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.turns.get(turn, []) if e["type"] == kind]

    def state(self, turn: int) -> dict[str, Any]:
        """The token's state at the end of `turn` (0: the start): the last one logged by then
        (a token that did nothing in a turn may log none)."""
        for t in range(turn, 0, -1):
            states = self.of(t, "state")
            if states:
                return states[-1]["state"]
        return self.start

    def roll_before(self, turn: int, check: dict[str, Any]) -> dict[str, Any]:
        evs = self.turns[turn]
        i = next(i for i, e in enumerate(evs) if e is check)
        rolls = [e for e in evs[:i] if e["type"] == "roll"]
        assert rolls, f"{self.token} turn {turn}: check without its roll"
        return rolls[-1]

    def rolls_after(self, turn: int, check: dict[str, Any]) -> list[dict[str, Any]]:
        evs = self.turns[turn]
        i = next(i for i, e in enumerate(evs) if e is check)
        return [e for e in evs[i + 1 :] if e["type"] == "roll"]


def col(state: dict[str, Any]) -> int:
    return state["cell"][0]


# ================================================================ D6 (seed 003)

D6_W = 200
D6_LEGEND = {
    ".": {"move": "walk", "difficulty": "moderate"},
    "d": {"move": "walk", "difficulty": "difficult"},
    "#": {"move": "blocked"},
}
# one token a corridor: (id, row, pace, dexterity); every round's move is a roll (RULES.md 3:
# high: moderate "roll at that level", harder "one level up"; all-out: +1 / +2 levels), so the
# margins spread over every band of seed 003's Movement Failures table
D6_TOKENS = [
    ("a", 1, "all_out", "3D"),  # moderate -> difficult, DN 18: margins 0-15
    ("b", 3, "all_out", "2D"),  # DN 18: 6-16
    ("c", 5, "all_out", "3D"),  # on "d": difficult -> heroic, DN 31: 13-28
    ("d", 7, "high", "2D"),  # on "d": difficult -> very difficult, DN 25: 13-23
    ("e", 9, "high", "3D"),  # on "d": DN 25: 7-22
    ("f", 11, "high", "2D"),  # moderate: DN 13: 1-11
]
D6_ROWS_TERRAIN = {1: ".", 3: ".", 5: "d", 7: "d", 9: "d", 11: "."}
D6_TURNS = 8
# seed 003 Move Speeds: cautious Move / 2, cruising Move, high Move x 2, all-out Move x 4
PACE_FACTOR = {"cautious": F(1, 2), "cruising": F(1), "high": F(2), "all_out": F(4)}
# seed 003 Collisions: cautious 1D, cruising 2D, high 3D, all-out 4D
COLLISION_D = {"cautious": 1, "cruising": 2, "high": 3, "all_out": 4}


@pytest.fixture(scope="module")
def d6_runs(tmp_path_factory) -> list[Run]:
    rows = []
    for r in range(13):
        rows.append(D6_ROWS_TERRAIN[r] * D6_W if r in D6_ROWS_TERRAIN else "#" * D6_W)
    tokens = [
        {
            "id": tid,
            "cell": [0, row],
            "waypoints": [[D6_W - 1, row]],
            "pace": pace,
            "stats": {"move": 10, "dexterity": dex, "strength": "3D", "speed": pace},
        }
        for tid, row, pace, dex in D6_TOKENS
    ]
    logs = play(
        tmp_path_factory.mktemp("d6"),
        "d6",
        system="d6",
        rows=rows,
        legend=D6_LEGEND,
        tokens=tokens,
        turns=D6_TURNS,
        seeds=range(1, 41),
        props={"cell_size": 2.0, "cell_unit": "m", "diagonals": "none"},
    )
    return [Run(ev, tid) for ev in logs for tid, *_ in D6_TOKENS]


def band(margin: int) -> str:
    """Seed 003 Movement Failures: the row of a failure margin (DN - roll); "ok" for a success."""
    if margin <= 0:
        return "ok"
    for top, name in ((3, "1-3"), (6, "4-6"), (10, "7-10"), (15, "11-15"), (20, "16-20")):
        if margin <= top:
            return name
    return "21+"


# R1: "margin 1-3 all of it; 4-6 half; 7-10 half; 11-15 a quarter; 16-20 and 21+ a quarter"
SHARE = {
    "ok": F(1),
    "1-3": F(1),
    "4-6": F(1, 2),
    "7-10": F(1, 2),
    "11-15": F(1, 4),
    "16-20": F(1, 4),
    "21+": F(1, 4),
}


def d6_rounds(run: Run):
    """Each round the token rolled to move: (turn, pace, band, check)."""
    for turn in range(1, D6_TURNS + 1):
        checks = run.of(turn, "check")
        if not checks:
            continue
        assert len(checks) == 1, f"{run.token} turn {turn}: one movement roll a round (RULES.md 3)"
        check = checks[0]
        m = re.match(r"move (cautious|cruising|high|all_out)\b", check["what"])
        assert m, f"unexpected move check {check['what']!r}"
        dn = int(re.search(r"DN (\d+)", check["target"]).group(1))
        roll = run.roll_before(turn, check)
        yield turn, m.group(1), band(dn - roll["total"]), check


def test_d6_failed_move_covers_its_bands_share(d6_runs):
    """Seed 003 Movement Failures: "1-3 | Slight slip: Complete movement" / "4-6 | Slip: Move
    half distance" / "7-10 | Fall: Fall halfway" / "11-15 | Minor tumble: Fall after one-quarter
    move"; RULES.md 3: "16-20 stop at a quarter (ruling) ... 21+ stop at a quarter". R1: "the
    token still makes a share of the move it set out to make that round ... rounded DOWN to whole
    cells entered". On a straight open corridor with its waypoint far ahead the token sets out
    to make the whole of its speed's distance (seed: all-out "Move x 4 (Move 10 -> 40 meters)" =
    20 cells of 2 m; high 20 m = 10 cells) or what is left to the waypoint; a success moves
    all of it ("Success: move normally")."""
    seen: dict[str, int] = {}
    for run in d6_runs:
        for turn, pace, b, _check in d6_rounds(run):
            start, end = run.state(turn - 1), run.state(turn)
            assert end["cell"][1] == start["cell"][1]
            planned = min(floor(10 * PACE_FACTOR[pace] / 2), D6_W - 1 - col(start))
            want = floor(SHARE[b] * planned)
            got = col(end) - col(start)
            assert got == want, (
                f"{run.token} turn {turn} {pace} {b}: moved {got} cells of a planned {planned}, "
                f"the seed's share is {SHARE[b]} -> {want}"
            )
            seen[b] = seen.get(b, 0) + 1
    assert all(seen.get(b, 0) >= 5 for b in SHARE), f"bands seen: {seen}"


def test_d6_tumble_loses_the_next_round(d6_runs):
    """Seed 003: "11-15 | Minor tumble: Fall after one-quarter move; no actions this round or
    next" (16-20 and 21+ are worse tumbles). Seed: "Moving is an action". R2: "a token with 'no
    actions' (... 11+: this round and the next) does not move in that round": no move roll,
    the same cell at the end of the next round."""
    lost = 0
    for run in d6_runs:
        for turn, _pace, b, _check in d6_rounds(run):
            if b not in ("11-15", "16-20", "21+") or turn == D6_TURNS:
                continue
            nxt = turn + 1
            assert not run.of(nxt, "check"), f"{run.token} rolled to move in turn {nxt} after {b}"
            assert run.state(nxt)["cell"] == run.state(turn)["cell"], (
                f"{run.token} moved in turn {nxt}, the round after a {b} tumble"
            )
            lost += 1
    assert lost >= 20


def test_d6_fall_ends_kneeling_and_gets_up_when_it_acts(d6_runs):
    """Seed 003: "7-10 | Fall: Fall halfway; ends kneeling. No actions for rest of round".
    R2: "A kneeling or prone posture from a failed roll ends at the start of the first round in
    which the token may act again": a round in which the token rolls to move and succeeds or
    only slips (1-6) ends neither kneeling nor prone."""
    falls = acted = 0
    for run in d6_runs:
        for turn, _pace, b, _check in d6_rounds(run):
            conditions = run.state(turn)["conditions"]
            if b == "7-10":
                assert "kneeling" in conditions, f"{run.token} turn {turn}: 7-10 not kneeling"
                falls += 1
            elif b in ("ok", "1-3", "4-6"):
                assert "kneeling" not in conditions and "prone" not in conditions, (
                    f"{run.token} turn {turn}: acted ({b}) but still {conditions}"
                )
                acted += 1
    assert falls >= 10 and acted >= 50


def test_d6_collision_damage_by_band_and_speed(d6_runs):
    """Seed 003: "11-15 | ... Take collision damage -3D (often 1D if all-out; none if slower)" /
    "16-20 | Tumble: Full collision damage." / "21+ | Major tumble: Collision damage +2D." and
    Collisions "Cautious 1D | Cruising 2D | High Speed 3D | All-Out 4D"; "Rhen runs at high speed
    and fails by 18 -> Tumble. She takes 3D collision damage." Margins up to 10: no collision."""
    extra = {"11-15": -3, "16-20": 0, "21+": 2}
    counted = {}
    for run in d6_runs:
        for turn, pace, b, check in d6_rounds(run):
            dice = COLLISION_D[pace] + extra[b] if b in extra else 0
            got = [
                r["expression"] for r in run.rolls_after(turn, check) if "collision" in r["decided"]
            ]
            want = [f"{dice}D"] if dice > 0 else []
            assert got == want, f"{run.token} turn {turn} {pace} {b}: collision {got}, want {want}"
            counted[(pace, b)] = counted.get((pace, b), 0) + 1
    for key in (
        ("all_out", "11-15"),
        ("all_out", "16-20"),
        ("all_out", "21+"),
        ("high", "11-15"),
        ("high", "16-20"),
        ("high", "21+"),
    ):
        assert counted.get(key, 0) >= 3, f"too few {key}: {counted}"


def test_d6_no_actions_not_kept_on_a_token_that_moves(d6_runs):
    """Seed 003: "No actions" comes only with a fall (7-10, "No actions for rest of round") or
    a tumble (11+, "no actions this round or next"); R2: such a token "does not move in that
    round". So a token that moved in a round whose roll succeeded or only slipped (1-6) does
    not end that round with `no_actions`."""
    movers = 0
    for run in d6_runs:
        for turn, _pace, b, _check in d6_rounds(run):
            moved = run.state(turn)["cell"] != run.state(turn - 1)["cell"]
            if moved and b in ("ok", "1-3", "4-6"):
                assert "no_actions" not in run.state(turn)["conditions"], (
                    f"{run.token} turn {turn}: moved after a {b} roll, yet no_actions"
                )
                movers += 1
    assert movers >= 50


# ================================================================ Whisperspace (seeds 000, 001)

WS_PROPS = {"cell_size": 5.0, "cell_unit": "ft"}
# RULES.md 1: "Mode penalties (ruling): crawl +1, swim +2, climb +2"; "speed = clamp(base +
# 10 x net, 0, 2 x base)" with net = bonuses - penalties; seed 000: "Each movement penalty
# reduces your movement speed by 10 ft".
MODE_PENALTY = 2
# RULES.md 1: "Swim/climb results (apply to the rest of that Move action): extreme success -1
# penalty; success nothing; failure +1 penalty"
RESULT_PENALTY = {"extreme_success": -1, "success": 0, "failure": 1, "extreme_failure": 0}
SPEED = 50  # ft a Move action; swim/climb 30 ft (6 cells)


def ws_feet(degree: str, asphyxiating: bool) -> int:
    net = MODE_PENALTY + RESULT_PENALTY[degree] + (1 if asphyxiating else 0)
    return max(0, min(2 * SPEED, SPEED - 10 * net))


SWIM_W = 140
SWIM_TURNS = 5


@pytest.fixture(scope="module")
def ws_swims(tmp_path_factory) -> list[Run]:
    # moderate water: DC 9 (RULES.md 1); athletics 3: extreme success on d12 >= 10, success
    # 6-9, failure 3-5, extreme failure 1-2 (margin <= -4: total <= 5)
    legend = {"~": {"move": "swim", "difficulty": "moderate"}, "#": {"move": "blocked"}}
    logs = play(
        tmp_path_factory.mktemp("wsswim"),
        "swim",
        system="whisperspace",
        rows=["#" * SWIM_W, "~" * SWIM_W, "#" * SWIM_W],
        legend=legend,
        tokens=[
            {
                "id": "s",
                "cell": [0, 1],
                "waypoints": [[SWIM_W - 1, 1]],
                "pace": "sprint",
                "stats": {"speed": SPEED, "athletics": 3},
            }
        ],
        turns=SWIM_TURNS,
        seeds=range(1, 41),
        props=WS_PROPS,
        # never out of Asphyxiating once in it (seed 000: "a successful Asphyxiation check
        # immediately removes this condition"; DC 99 is never met), so its +1 lasts the run
        settings={"asphyxiation_dc": 99},
    )
    return [Run(ev, "s") for ev in logs]


def swim_checks(run: Run, turn: int) -> list[dict[str, Any]]:
    return [c for c in run.of(turn, "check") if "asphyx" not in c["what"].lower()]


def move_action_cells(run: Run, turn: int) -> list[tuple[str, int]]:
    """(degree, cells) of each Move action of the turn: each starts with a check on its first
    cell (RULES.md 0: a check "on entering the first cell of a stretch of the same mode and
    difficulty in one move (one Move action ...)"), so a Move action's cells run from its
    check's cell to the cell before the next check (the last: to where the turn ends)."""
    checks = swim_checks(run, turn)
    # seed 000: "You may use an action to move up to your speed"; sprint = 3 Move actions
    assert len(checks) == 3, f"turn {turn}: {len(checks)} swim checks, want 3 Move actions"
    assert checks[0]["cell"][0] == col(run.state(turn - 1)) + 1
    firsts = [c["cell"][0] for c in checks] + [col(run.state(turn)) + 1]
    return [(c["degree"], firsts[i + 1] - firsts[i]) for i, c in enumerate(checks)]


def test_whisperspace_swim_results_last_the_move_action(ws_swims):
    """Seed 000 Swimming check results: "Extreme Success: ... reduce movement penalty by -1." /
    "Failure: swim is more draining than expected; receive +1 movement penalty." / "Extreme
    Failure: gain the Asphyxiating condition." / "While asphyxiating during swimming, gain +1
    movement penalty." RULES.md 1: they "apply to the rest of that Move action"; swim +2
    penalties. Speed 50: success 50 - 20 = 30 ft = 6 cells; extreme success 40 ft = 8; failure
    20 ft = 4 (the token keeps swimming, slower); asphyxiating adds +1 (-10 ft) from its
    extreme failure on, the rest of the run here."""
    tally: dict[str, int] = {}
    for run in ws_swims:
        asphyxiating = False
        for turn in range(1, SWIM_TURNS + 1):
            for i, (degree, cells) in enumerate(move_action_cells(run, turn)):
                asphyxiating = asphyxiating or degree == "extreme_failure"
                want = ws_feet(degree, asphyxiating) // 5
                assert cells == want, (
                    f"seed run {ws_swims.index(run) + 1} turn {turn} Move action {i + 1}: "
                    f"{degree}{' asphyxiating' if asphyxiating else ''}: {cells} cells, want {want}"
                )
                tally[degree] = tally.get(degree, 0) + 1
    assert all(tally.get(d, 0) >= 10 for d in RESULT_PENALTY), tally


def test_whisperspace_swim_extreme_failure_asphyxiates(ws_swims):
    """Seed 000: "Extreme Failure: gain the Asphyxiating condition." (RULES.md 1: "extreme
    failure: swimming gives Asphyxiating"). The removal check never succeeds here (DC 99), so
    from the turn of the first extreme failure on, every state carries it."""
    hits = 0
    for run in ws_swims:
        since = None
        for turn in range(1, SWIM_TURNS + 1):
            if since is None and any(
                c["degree"] == "extreme_failure" for c in swim_checks(run, turn)
            ):
                since = turn
            if since is not None:
                conditions = [c.lower() for c in run.state(turn)["conditions"]]
                assert any("asphyx" in c for c in conditions), (
                    f"turn {turn}: no Asphyxiating after the extreme failure of turn {since}"
                )
                hits += 1
    assert hits >= 10


CLIMB_FT = 120
CLIMB_TURNS = 6
FOOT = [4, 1]
CLIMB_CELL = [5, 1]
# RULES.md 1: "Falling: feet fallen to band: <= 5 Melee (-2), <= 15 Very Near (-1), <= 30 Near
# (0), <= 60 Medium (+2), <= 120 Long (+4), <= 250 Very Long (+6), more Extreme (+9)."
FALL_BANDS = ((5, -2), (15, -1), (30, 0), (60, 2), (120, 4), (250, 6))


def fall_modifier(feet: int) -> int:
    return next((mod for top, mod in FALL_BANDS if feet <= top), 9)


def ws_climb_row(difficulty: str) -> tuple[list[str], dict[str, dict[str, Any]]]:
    legend = {
        ".": {"move": "walk"},
        "C": {"move": "climb", "difficulty": difficulty, "height": float(CLIMB_FT)},
        "#": {"move": "blocked"},
    }
    return ["#" * 40, "." * 5 + "C" + "." * 34, "#" * 40], legend


@pytest.fixture(scope="module")
def ws_climbs(tmp_path_factory) -> list[Run]:
    rows, legend = ws_climb_row("moderate")  # DC 9 (RULES.md 1); athletics 4: extreme
    # success on d12 >= 9, success 5-8, failure 2-4, extreme failure 1 (total <= 5)
    logs = play(
        tmp_path_factory.mktemp("wsclimb"),
        "climb",
        system="whisperspace",
        rows=rows,
        legend=legend,
        turns=CLIMB_TURNS,
        seeds=range(1, 81),
        props=WS_PROPS,
        tokens=[
            {
                "id": "k",
                "cell": FOOT,
                "waypoints": [[39, 1]],
                "pace": "sprint",
                "stats": {"speed": SPEED, "athletics": 4},
            }
        ],
    )
    return [Run(ev, "k") for ev in logs]


class Climb:
    """The seed's climb, worked along one run: feet climbed, falls, turn-end figures."""

    def __init__(self) -> None:
        self.feet = 0
        self.done = False
        self.fell = False
        self.turn_ends: list[tuple[int, F]] = []  # (feet climbed, logged progress)
        self.falls: list[tuple[int, str]] = []  # (feet fallen, the fall roll's expression)

    def check(self, run: Run, turn: int, check: dict[str, Any]) -> None:
        assert not self.done, f"turn {turn}: a climb check after the climb was crossed"
        if check["degree"] == "extreme_failure":
            rolls = run.rolls_after(turn, check)
            if self.feet == 0:
                # Nothing climbed yet: the project reads a fall of 0 ft as no fall (no roll).
                self.fell = True
                return
            assert rolls, f"turn {turn}: an extreme failure climbing and no fall roll"
            self.falls.append((self.feet, rolls[0]["expression"]))
            self.fell = True
            return
        self.feet += ws_feet(check["degree"], False)
        self.done = self.feet >= CLIMB_FT

    def turn_end(self, run: Run, turn: int, checks: int) -> None:
        state = run.state(turn)
        if self.fell:  # RULES.md 1: "a fall from the height climbed so far": at the foot
            assert state["cell"] == FOOT, f"turn {turn}: fell, but at {state['cell']}"
        elif self.done:
            assert col(state) >= CLIMB_CELL[0], f"turn {turn}: crossed, but at {state['cell']}"
        else:
            # R3: "the token stays where it is, its state's progress records how much of that
            # crossing is done"; one check a Move action, three a turn at sprint
            assert state["cell"] == FOOT, f"turn {turn}: mid-climb at {state['cell']}"
            assert checks == 3, f"turn {turn}: {checks} climb checks, want one a Move action"
            self.turn_ends.append((self.feet, frac(state["progress"])))


def work_climb(run: Run) -> Climb:
    climb = Climb()
    for turn in range(1, CLIMB_TURNS + 1):
        checks = run.of(turn, "check")  # only the climb asks for checks on this map
        for check in checks:
            if not climb.fell:
                climb.check(run, turn, check)
        climb.turn_end(run, turn, len(checks))
        if climb.fell or climb.done:
            break
    return climb


def test_whisperspace_climb_results_and_falls(ws_climbs):
    """Seed 000 Climbing check results: "Extreme success: handholds are easier to find than
    expected; reduce movement penalty by -1." / "Failure: climb takes longer than expected;
    receive +1 movement penalty." / "Extreme failure: climb results in a fall". RULES.md 1: they
    "apply to the rest of that Move action", and "climbing gives a fall from the height climbed
    so far"; falls by band. R3: a 120-ft cliff is crossed over turns, one check a Move action.
    Speed 50, climb +2: a Move action climbs 30 ft, 40 after an extreme success, 20 after a
    failure (it keeps climbing, slower); the progress logged at each turn's end is in
    proportion to the feet climbed; an extreme failure rolls the fall band of the feet climbed
    before it."""
    ends: list[tuple[int, F]] = []
    falls: list[tuple[int, str]] = []
    crossed = 0
    for run in ws_climbs:
        climb = work_climb(run)
        ends += climb.turn_ends
        falls += climb.falls
        crossed += climb.done
    assert crossed >= 10 and len(ends) >= 40
    ratios = {p / feet for feet, p in ends}
    assert len(ratios) == 1 and 0 not in ratios, f"progress not in proportion to feet: {ends}"
    checked = 0
    for feet, expression in falls:
        if feet == 0:
            continue  # a fall from no height: see the report (band Melee or no roll)
        m = re.fullmatch(r"1d12([+-]\d+)?", expression)
        assert m, f"fall roll {expression!r}"
        assert int(m.group(1) or 0) == fall_modifier(feet), f"fell from {feet} ft: {expression}"
        checked += 1
    assert checked >= 3


def test_whisperspace_tall_climb_crossed_over_turns(tmp_path):
    """R3: "A cell that takes longer than a whole turn to cross is crossed over several turns:
    the token stays where it is, its state's progress records how much of that crossing is
    done and the next turn goes on with it". RULES.md 1: "an easy wall (difficulty none) asks
    none" (no check); climb +2 penalties: speed 50 -> 30 ft a Move action, 90 ft a sprinting
    turn. A 120-ft climb: turn 1 climbs 90 ft (at the foot, progress > 0); turn 2 climbs the
    last 30 ft in its first Move action, then walks two Move actions of 50 ft (10 cells each)
    from the cliff's cell 5,1 to 25,1."""
    rows, legend = ws_climb_row("none")
    for ev in play(
        tmp_path,
        "tall",
        system="whisperspace",
        rows=rows,
        legend=legend,
        turns=2,
        seeds=range(1, 4),
        props=WS_PROPS,
        tokens=[
            {
                "id": "k",
                "cell": FOOT,
                "waypoints": [[39, 1]],
                "pace": "sprint",
                "stats": {"speed": SPEED},
            }
        ],
    ):
        run = Run(ev, "k")
        first = run.state(1)
        assert first["cell"] == FOOT and frac(first["progress"]) > 0, first
        assert run.state(2)["cell"] == [25, 1], run.state(2)


def test_whisperspace_heavy_swimmer_rolls_no_heavy_load_check(tmp_path):
    """Seed 000 Swimming: "While a character is swimming, regular encumbrance checks do not
    apply." Heavy Encumbrance: "At the start of each of your turns while heavily encumbered,
    roll an Endurance (DC6) encumbrance check." RULES.md 1: capacity 5 + 5 x PHYS = 5 slots at
    PHYS 0; bulk 12 > 2 x 5: heavily encumbered (swim DC 6 + 6). The same token on dry land (the control)
    rolls it every turn; in water, never. Endurance 1 makes the check's roll "1d12+1"."""
    legend = {
        ".": {"move": "walk"},
        "~": {"move": "swim", "difficulty": "easy"},
        "#": {"move": "blocked"},
    }
    # athletics 10 vs DC 6 + 6 = 12: no extreme failure (total >= 11), so no Asphyxiating
    # and no Asphyxiation check to tell apart from the encumbrance check
    stats = {"speed": 60, "athletics": 10, "endurance": 1, "bulk": 12}
    logs = play(
        tmp_path,
        "heavy",
        system="whisperspace",
        legend=legend,
        turns=4,
        rows=["#" * 60, "~" * 60, "#" * 60, "." * 60, "#" * 60],
        seeds=range(1, 11),
        props=WS_PROPS,
        tokens=[
            {
                "id": "swim",
                "cell": [0, 1],
                "waypoints": [[59, 1]],
                "pace": "sprint",
                "stats": stats,
            },
            {
                "id": "land",
                "cell": [0, 3],
                "waypoints": [[59, 3]],
                "pace": "sprint",
                "stats": stats,
            },
        ],
    )

    def heavy_checks(run: Run, turn: int) -> int:
        return sum(
            1
            for r in run.of(turn, "roll")
            if r["expression"] == "1d12+1" or "endurance" in r["decided"].lower()
        )

    for ev in logs:
        swim, land = Run(ev, "swim"), Run(ev, "land")
        assert swim.start["encumbrance"] == "heavy"
        for turn in range(1, 5):
            assert heavy_checks(land, turn) == 1, f"land token, turn {turn}"
            assert heavy_checks(swim, turn) == 0, f"swimming token rolled encumbrance, turn {turn}"


def test_mode_is_the_terrains_while_swimming_climbing_crawling(tmp_path):
    """R4: "The state's `mode` in play is the mode of the terrain the token stands in (walk,
    swim, climb, ladder, crawl ...): 'swimming' means its mode is swim." RULES.md 0: "Mode comes
    from the terrain". Whisperspace, no checks (difficulty none), one token a row of one mode;
    every logged state of each (the start included) names that mode."""
    modes = {"~": "swim", "c": "climb", "H": "ladder", "_": "crawl", ".": "walk"}
    legend = {ch: {"move": m} for ch, m in modes.items()} | {"#": {"move": "blocked"}}
    rows, tokens = [], []
    for i, ch in enumerate(modes):
        rows += ["#" * 40, ch * 40]
        tokens.append(
            {
                "id": modes[ch],
                "cell": [0, 2 * i + 1],
                "waypoints": [[39, 2 * i + 1]],
                "pace": "sprint",
                "stats": {"speed": 50},
            }
        )
    rows.append("#" * 40)
    for ev in play(
        tmp_path,
        "modes",
        system="whisperspace",
        rows=rows,
        legend=legend,
        turns=3,
        seeds=range(1, 3),
        props=WS_PROPS,
        tokens=tokens,
    ):
        for mode in modes.values():
            run = Run(ev, mode)
            states = [run.start] + [run.state(t) for t in (1, 2, 3)]
            assert col(states[-1]) > 0, f"the {mode} token never moved"
            assert [s["mode"] for s in states] == [mode] * 4, f"{mode} token: {states}"


# ================================================================ Mythmaster (seed 002)

MM_PROPS = {"cell_size": 2.0, "cell_unit": "m"}
MM_TURNS = 30
MM_CLIMBS = {"short": (1, 2.0), "tall": (3, 8.0)}  # token: (row, climb height m)


@pytest.fixture(scope="module")
def mm_runs(tmp_path_factory) -> list[tuple[str, Run]]:
    legend = {
        ".": {"move": "walk"},
        "#": {"move": "blocked"},
        "c": {"move": "climb", "difficulty": "difficult", "height": 2.0},
        "C": {"move": "climb", "difficulty": "difficult", "height": 8.0},
    }
    w = 12
    rows = ["#" * w, "..c" + "." * (w - 3), "#" * w, "..C" + "." * (w - 3), "#" * w]
    tokens = [
        {
            "id": tid,
            "cell": [1, row],
            "waypoints": [[w - 1, row]],
            "pace": "sprint",
            "stats": {"adaptability": 14, "physical": 12, "climbing": 15},
        }
        for tid, (row, _h) in MM_CLIMBS.items()
    ]
    logs = play(
        tmp_path_factory.mktemp("mm"),
        "mm",
        system="mythmaster",
        rows=rows,
        legend=legend,
        tokens=tokens,
        turns=MM_TURNS,
        seeds=range(1, 41),
        hexgrid=True,
        props=MM_PROPS,
    )
    return [(tid, Run(ev, tid)) for ev in logs for tid in MM_CLIMBS]


def succeeds(roll: dict[str, Any]) -> bool:
    """RULES.md 2: "21 Challenge: 2d10 + skill + adjustment >= 21. Natural 20: success ...
    Natural 2: failure"; skill 15, difficult -2."""
    faces = roll["faces"]
    assert len(faces) == 2 and roll["total"] == sum(faces) + 13, roll
    if sum(faces) == 20:
        return True
    return sum(faces) != 2 and roll["total"] >= 21


class SkillClimb:
    """Seed 002's climb, worked along one run, in successes (BM 6, difficult: 1/30 x 6 = 0.2
    hex a success): a 2-m (1 hex) cliff needs 5, an 8-m (4 hex) one 20."""

    def __init__(self, height_m: float) -> None:
        self.need = int(height_m / 2 / F(1, 5))
        self.have = 0
        self.done_turn = 0
        self.slips = self.falls = 0
        self.ends: list[tuple[int, F]] = []

    def turn(self, rolls: list[dict[str, Any]], turn: int) -> None:
        assert rolls, f"turn {turn}: no 21C while climbing (seed 002: one each turn)"
        first = rolls[0]
        if sum(first["faces"]) != 2:  # no slip: one roll, a success moves 0.2 hex
            assert len(rolls) == 1, f"turn {turn}: {len(rolls)} climbing rolls"
            self.have += succeeds(first)
        else:  # RULES.md 2: "natural 2: lose that turn's progress (ruling) and roll again at
            # once, failing that is a fall from the height reached"
            assert len(rolls) == 2, f"turn {turn}: a natural 2 and {len(rolls)} rolls"
            self.slips += 1
            self.have = max(0, self.have - 1)
            if not succeeds(rolls[1]):
                self.have = 0
                self.falls += 1
        if self.have >= self.need:
            self.done_turn = turn


def work_skill_climb(tid: str, run: Run) -> SkillClimb:
    row, height = MM_CLIMBS[tid]
    climb = SkillClimb(height)
    for turn in range(1, MM_TURNS + 1):
        climb.turn([r for r in run.of(turn, "roll") if r["expression"].startswith("2d10")], turn)
        state = run.state(turn)
        if climb.done_turn:  # crossing done at the end of the turn: in the climb's cell
            assert state["cell"] == [2, row], f"{tid} turn {turn}: crossed, at {state['cell']}"
            break
        assert state["cell"] == [1, row], f"{tid} turn {turn}: mid-climb at {state['cell']}"
        climb.ends.append((climb.have, frac(state["progress"])))
    return climb


def test_mythmaster_skill_climb_played_turn_by_turn(mm_runs):
    """Seed 002 Climb Move: "Using the climbing skill to move uses all of your actions for the
    turn" / "this is the rate of movement per turn when you succeed your 21C using Climbing
    Skill - if you fail the roll you don't move at all. Critical failure leads to a slip and a
    regression, requiring another Climbing roll to avoid a fall". Example: "15 Climbing skill
    ... Somewhat Difficult (-2) ... Base Move of 6, so each success moves them 1/30 x 6 = 0.2
    hexes ... needs to roll 8 or higher on 2d10". R3: the token stays at the foot, `progress`
    records the crossing, a 21C each turn. Every turn: one 21C (two after a natural 2), the
    progress in proportion to the successes banked (less a slip's, nothing after a fall), the
    cliff's cell entered at the end of the turn of the last success needed."""
    ratio: dict[str, set[F]] = {tid: set() for tid in MM_CLIMBS}
    crossed = {tid: 0 for tid in MM_CLIMBS}
    slips = 0
    for tid, run in mm_runs:
        climb = work_skill_climb(tid, run)
        for have, progress in climb.ends:
            assert (have == 0) == (progress == 0), f"{tid}: {have} successes, progress {progress}"
            if have:
                ratio[tid].add(progress / have)
        crossed[tid] += bool(climb.done_turn)
        slips += climb.slips
    assert all(len(r) == 1 for r in ratio.values()), (
        f"progress not a fixed share a success: {ratio}"
    )
    assert crossed["short"] >= 30 and crossed["tall"] >= 5 and slips >= 3, (crossed, slips)


# ================================================================ Speedpoints (seed 004)

SP_PROPS = {"cell_size": 2.0, "cell_unit": "m"}
CLIMB_0 = "1d20"  # a roll at ability 0 (as `tacgrid roll --system speedpoints ability=0` writes it)


def test_speedpoints_rope_climb_two_turns_a_space(tmp_path):
    """Seed 004 climbing table: "5 | rope, pole | 1 meter per turn"; RULES.md 4: "5 (rope,
    pole): 1 m (half a space) per turn", "One climbing roll per climb, made as the climb
    starts". R3: a longer crossing goes on over turns, `progress` keeping it. A rope two spaces
    long (two cells of 2 m): at the foot with progress after turn 1, on its first cell after
    turn 2, on its second after turn 4; one roll (climbing 14: 1d20 + 14 >= 15 always)."""
    legend = {
        ".": {"move": "walk"},
        "#": {"move": "blocked"},
        "e": {"move": "climb", "difficulty": "easy"},
    }
    for ev in play(
        tmp_path,
        "rope",
        system="speedpoints",
        legend=legend,
        turns=5,
        rows=["#" * 12, "..ee" + "." * 8, "#" * 12],
        seeds=range(1, 4),
        props=SP_PROPS,
        tokens=[
            {
                "id": "r",
                "cell": [1, 1],
                "waypoints": [[11, 1]],
                "pace": "run",
                "stats": {"running": 3, "climbing": 14},
            }
        ],
    ):
        run = Run(ev, "r")
        cells = [run.state(t)["cell"] for t in range(1, 6)]
        assert cells[:4] == [[1, 1], [2, 1], [2, 1], [3, 1]], cells
        assert cells[4][0] > 3, cells
        for t in (1, 3):
            assert frac(run.state(t)["progress"]) > 0, run.state(t)
        assert sum(len(run.of(t, "check")) for t in range(1, 6)) == 1


def fall_roll_after(run: Run, turn: int, check: dict[str, Any], expression: str) -> dict | None:
    rolls = run.rolls_after(turn, check)
    return rolls[0] if rolls and rolls[0]["expression"] == expression else None


def damage_delta(run: Run, turn: int) -> tuple[int, int]:
    before, after = run.state(turn - 1)["counters"], run.state(turn)["counters"]
    return (
        after.get("damage", 0) - before.get("damage", 0),
        after.get("stun", 0) - before.get("stun", 0),
    )


def expected_fall(kind: str, success: bool) -> tuple[int, int | None]:
    """RULES.md 4 (seed 004): "Dangerous: success unharmed, failure damage and stun equal to
    toughness. Lethal: success damage and stun equal to toughness, failure damage equal to
    stamina." Toughness 7, stamina 13; (damage, stun) - stun None where the seed names none."""
    if kind == "dangerous":
        return (0, 0) if success else (7, 7)
    return (7, 7) if success else (13, None)


def check_falls(runs: list[Run], plan: dict[str, tuple[str, str, str, int]]) -> dict[str, int]:
    """Each failed check rolled as `via` of a token in `plan` (token: (via, kind, fall roll
    expression, target)) is followed by its fall roll; where the turn holds only those two
    rolls, the damage."""
    falls = {tid: 0 for tid in plan}
    for run in runs:
        if run.token not in plan:
            continue
        via, kind, expression, target = plan[run.token]
        for turn in sorted(run.turns):
            for check in run.of(turn, "check"):
                if check["success"] or run.roll_before(turn, check)["expression"] != via:
                    continue
                roll = fall_roll_after(run, turn, check, expression)
                assert roll, f"{run.token} turn {turn}: no {expression} fall roll after {check}"
                falls[run.token] += 1
                if len(run.of(turn, "roll")) == 2:
                    damage, stun = expected_fall(kind, roll["total"] >= target)
                    got = damage_delta(run, turn)
                    assert got[0] == damage and stun in (None, got[1]), (
                        f"{run.token} turn {turn}: {kind} fall {roll['total']} vs {target}: "
                        f"damage, stun {got}, want {damage}, {stun}"
                    )
    return falls


def safe_token_never_rolls(runs: list[Run], token: str, expression: str) -> int:
    failed = 0
    for run in (r for r in runs if r.token == token):
        for turn in run.turns:
            assert not [r for r in run.of(turn, "roll") if r["expression"] == expression]
            failed += sum(1 for c in run.of(turn, "check") if not c["success"])
    return failed


@pytest.fixture(scope="module")
def sp_pits(tmp_path_factory) -> list[Run]:
    legend = {
        ".": {"move": "walk"},
        "#": {"move": "blocked"},
        "L": {"move": "gap", "height": 10.0},  # over 6 m: lethal
        "D": {"move": "gap", "height": 4.0},  # over 3 m: dangerous
        "S": {"move": "gap", "height": 2.0},
    }  # up to 3 m: safe
    w = 20
    rows = ["#" * w]
    for ch in "LDS":
        rows += ["." * 6 + ch + "." * (w - 7), "#" * w]
    base = {"running": 3, "toughness": 7, "stamina": 13}
    stats = {
        "L": {"acrobatics": 8, "climbing": 1, "agility": 2},
        "D": {"acrobatics": 3, "climbing": 6, "agility": 2},
        "S": {"acrobatics": 8, "climbing": 0, "agility": 2},
    }
    tokens = [
        {
            "id": ch,
            "cell": [2, 2 * i + 1],
            "waypoints": [[w - 1, 2 * i + 1]],
            "pace": "run",
            "stats": base | stats[ch],
        }
        for i, ch in enumerate("LDS")
    ]
    logs = play(
        tmp_path_factory.mktemp("sppit"),
        "pits",
        system="speedpoints",
        rows=rows,
        legend=legend,
        tokens=tokens,
        turns=8,
        seeds=range(1, 41),
        props=SP_PROPS,
    )
    return [Run(ev, ch) for ev in logs for ch in "LDS"]


def test_speedpoints_failed_jump_falls_and_rolls_the_fall(sp_pits):
    """Seed 004 Jumping: "If the character can barely jump across a gap (within 1 meter of their
    maximum jumping distance) they must make a success roll using their acrobatics ability or
    fall into the gap." Running 3: a run-up jump of 3 m over a 2-m pit asks the roll. Climbing:
    "When the height of the climb is more than one story or 3 meters, a fall may be potentially
    dangerous ... more than two stories or 6 meters, the fall may be potentially lethal" /
    "make another success roll ... adds his agility to the roll and he can use either his
    climbing ability or his acrobatics ability". RULES.md 4: "Roll: the climb's difficulty (10
    when not from a climb), climbing or acrobatics (the better) + agility": 1d20 + 10 >= 20
    for L (acrobatics 8 + agility 2), 1d20 + 8 >= 20 for D (climbing 6 + 2); the 2-m pit S is
    safe: no fall roll."""
    # the jump's roll is acrobatics: "1d20+8" (L), "1d20+3" (D)
    plan = {"L": ("1d20+8", "lethal", "1d20+10", 20), "D": ("1d20+3", "dangerous", "1d20+8", 20)}
    falls = check_falls(sp_pits, plan)
    assert falls["L"] >= 5 and falls["D"] >= 5, falls
    assert safe_token_never_rolls(sp_pits, "S", "1d20+10") >= 5


def test_speedpoints_pit_conditions_cleared_out_of_the_pit(sp_pits):
    """Seed 004: a failed jump makes the token "fall into the gap" (MAP-FORMAT: `gap` = a pit to
    jump or fall into). Once it stands on a cell that is not the pit, it is no longer in it:
    its state carries neither `in_gap` nor `fell`."""
    out = 0
    for run in sp_pits:
        was_in = False
        for turn in sorted(run.turns):
            state = run.state(turn)
            in_pit = state["cell"][0] == 6
            was_in = was_in or in_pit
            if was_in and not in_pit:
                assert not {"in_gap", "fell"} & set(state["conditions"]), (
                    f"{run.token} turn {turn} at {state['cell']}: {state['conditions']}"
                )
                out += 1
    assert out >= 5


def test_speedpoints_failed_climb_falls_by_the_climbs_height(tmp_path):
    """Seed 004 Climbing: "For each climb make a success roll using the character's climbing
    ability vs. the difficulty of the climb ... If the character is not successful he looses his
    grip and falls." / "more than one story or 3 meters ... potentially dangerous ... more than
    two stories or 6 meters ... potentially lethal" / "This roll has the same difficulty as the
    climbing roll but the falling character adds his agility to the roll and he can use either
    his climbing ability or his acrobatics ability." RULES.md 4: "how dangerous the fall is
    follows the height of the climb". An 8-m ladder (difficulty 0, climbing 0: 1d20 >= 10;
    fall 1d20 + acrobatics 4 + agility 1 >= 10, lethal), a 4-m rope (5: 1d20 + 5 >= 15; fall
    1d20 + acrobatics 7 + 1 >= 15, dangerous), a 2-m rope (safe: no fall roll)."""
    legend = {
        ".": {"move": "walk"},
        "#": {"move": "blocked"},
        "H": {"move": "ladder", "height": 8.0},
        "R": {"move": "climb", "difficulty": "easy", "height": 4.0},
        "Q": {"move": "climb", "difficulty": "easy", "height": 2.0},
    }
    w = 14
    rows = ["#" * w]
    for ch in "HRQ":
        rows += [".." + ch + "." * (w - 3), "#" * w]
    base = {"running": 3, "toughness": 7, "stamina": 13}
    stats = {
        "H": {"climbing": 0, "acrobatics": 4, "agility": 1},
        "R": {"climbing": 5, "acrobatics": 7, "agility": 1},
        "Q": {"climbing": 5, "acrobatics": 9, "agility": 1},
    }
    tokens = [
        {
            "id": ch,
            "cell": [1, 2 * i + 1],
            "waypoints": [[w - 1, 2 * i + 1]],
            "pace": "run",
            "stats": base | stats[ch],
        }
        for i, ch in enumerate("HRQ")
    ]
    logs = play(
        tmp_path,
        "climbs",
        system="speedpoints",
        rows=rows,
        legend=legend,
        tokens=tokens,
        turns=8,
        seeds=range(1, 41),
        props=SP_PROPS,
    )
    runs = [Run(ev, ch) for ev in logs for ch in "HRQ"]
    plan = {"H": (CLIMB_0, "lethal", "1d20+5", 10), "R": ("1d20+5", "dangerous", "1d20+8", 15)}
    falls = check_falls(runs, plan)
    assert falls["H"] >= 5 and falls["R"] >= 5, falls
    assert safe_token_never_rolls(runs, "Q", "1d20+10") >= 5
