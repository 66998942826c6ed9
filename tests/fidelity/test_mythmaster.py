"""Fidelity suite for Mythmaster (`--system mythmaster`), seed 002 (RULES.md sections 0, 2 and 6).

Every expected number below is derived by hand from the seed text
(shared/seeds/002_b2073e3d65f5c31e.txt) and, where the seed is silent, from RULES.md; the
quote sits beside the arithmetic. Nothing here is taken from tacgrid's own module or tests.
"""

from __future__ import annotations

import math
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest

from .conftest import tacgrid, tacgrid_json

SYS = ("--system", "mythmaster")
HEX = {"orientation": "hexagonal", "tile": (28, 32), "hexside": 16, "stagger": ("y", "odd")}
HEX_FLAT = {"orientation": "hexagonal", "tile": (32, 28), "hexside": 16, "stagger": ("x", "even")}

# Our own legend (MAP-FORMAT.md tile properties); heights are in the map's cell_unit (m here:
# RULES.md 2 "Units: hexes of 2 m").
LEGEND: dict[str, dict[str, Any]] = {
    ".": {"terrain": "open", "move": "walk"},
    "#": {"terrain": "wall", "move": "blocked"},
    "_": {"terrain": "crawlspace", "move": "crawl"},
    "H": {"terrain": "ladder", "move": "ladder"},
    "~": {"terrain": "water", "move": "swim", "difficulty": "easy"},
    "c": {"terrain": "cliff2", "move": "climb", "difficulty": "difficult", "height": 2.0},
    "C": {"terrain": "cliff8", "move": "climb", "difficulty": "difficult", "height": 8.0},
    "m": {"terrain": "slope2", "move": "climb", "difficulty": "moderate", "height": 2.0},
}
CHARS = list(LEGEND)


def _prop(name: str, value: Any) -> str:
    kind = ' type="float"' if isinstance(value, float) else ""
    return f'<property name="{name}"{kind} value="{value}"/>'


def _tmx(
    rows: list[str],
    orientation="orthogonal",
    tile=(32, 32),
    hexside=0,
    stagger=("y", "odd"),
    properties=None,
) -> str:
    h, w = len(rows), len(rows[0])
    tiles = "".join(
        f'<tile id="{i}" type="{LEGEND[ch]["terrain"]}"><properties>'
        + "".join(_prop(k, v) for k, v in LEGEND[ch].items() if k != "terrain")
        + "</properties></tile>"
        for i, ch in enumerate(CHARS)
    )
    tileset = f'<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="{len(CHARS)}" columns="{len(CHARS)}">{tiles}</tileset>'
    data = ",\n".join(",".join(str(CHARS.index(ch) + 1) for ch in r) for r in rows)
    hexattrs = ""
    if orientation == "hexagonal":
        hexattrs = (
            f' hexsidelength="{hexside}" staggeraxis="{stagger[0]}" staggerindex="{stagger[1]}"'
        )
    props = ""
    if properties:
        props = (
            "<properties>" + "".join(_prop(k, v) for k, v in properties.items()) + "</properties>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" renderorder="right-down" '
        f'width="{w}" height="{h}" tilewidth="{tile[0]}" tileheight="{tile[1]}"{hexattrs} infinite="0">'
        f'{props}{tileset}<layer id="1" name="ground" width="{w}" height="{h}">'
        f'<data encoding="csv">\n{data}\n</data></layer></map>\n'
    )


@pytest.fixture
def mm(tmp_path: Path):
    counter = iter(range(10**6))

    def _draw(rows: list[str], **kwargs: Any) -> str:
        p = tmp_path / f"mm{next(counter)}.tmx"
        p.write_text(_tmx(rows, **kwargs), encoding="utf-8")
        return str(p)

    return _draw


def frac(x: Any) -> F:
    """A JSON figure (int, float or "a/b" string) as a Fraction."""
    return F(x) if not isinstance(x, float) else F(x).limit_denominator(10**9)


def stats(token: str, *sets: str) -> dict:
    extra: list[str] = []
    for s in sets:
        extra += ["--set", s]
    return tacgrid_json("stats", *SYS, "--token", token, *extra)


def path(map_: str, token: str, frm: str, to: str, *more: str, expect_rc: int = 0) -> dict:
    return tacgrid_json(
        "path", map_, *SYS, "--token", token, "--from", frm, "--to", to, *more, expect_rc=expect_rc
    )


# --- hand arithmetic helpers (the seed's rules, written out) ---------------------------------


def base_move(adaptability: int, adjustments: int = 0) -> int:
    # seed: "Base Move = (Adaptability + Adjustments) * 0.44" "rounded to the nearest whole number";
    # RULES.md 2: "round half up".  0.44 = 11/25 exactly.
    return math.floor(F(adaptability + adjustments) * F(11, 25) + F(1, 2))


def p21(total_mod: int, trained: bool = True) -> dict[str, F]:
    """2d10 + modifier >= 21 (RULES.md 2: natural 20 success, critical if trained; natural 2 failure)."""
    out = {"critical_success": F(0), "success": F(0), "failure": F(0), "catastrophe": F(0)}
    for a in range(1, 11):
        for b in range(1, 11):
            s, w = a + b, F(1, 100)
            if s == 20:
                out["critical_success" if trained else "success"] += w
            elif s == 2:
                out["catastrophe"] += w
            elif s + total_mod >= 21:
                out["success"] += w
            else:
                out["failure"] += w
    return out


def p_success(total_mod: int, trained: bool = True) -> F:
    o = p21(total_mod, trained)
    return o["critical_success"] + o["success"]


def solve(a: list[list[F]], b: list[F]) -> list[F]:
    """Exact Gauss-Jordan elimination over Fractions."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = next(r for r in range(c, n) if m[r][c] != 0)
        m[c], m[piv] = m[piv], m[c]
        pv = m[c][c]
        m[c] = [x / pv for x in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][n] for i in range(n)]


def climb_chain(n: int, p: F, q: F, slip: bool) -> tuple[F, F]:
    """(expected climbing turns, P(no fall)) for a climb needing n successes.

    Seed: "this is the rate of movement per turn when you succeed your 21C ... if you fail the
    roll you don't move at all. Critical failure leads to a slip and a regression, requiring
    another Climbing roll to avoid a fall". RULES.md 2: "natural 2: lose that turn's progress
    (ruling) and roll again at once, failing that is a fall from the height reached".
    State k = successes banked. Per turn: +1 with p; natural 2 (q = 1/100): back to max(k-1, 0)
    when slip (climb_slip=lose_turn), then the re-roll fails with 1-p: a fall (only from a height,
    k >= 1); otherwise no progress. Time counts every climbing turn (a fall is the risk, reported
    in p_no_failure, not a change to the time).
    """
    # Expected time: E_k = 1 + p E_{k+1} + q E_{down} + (1-p-q) E_k, E_n = 0.
    a = [[F(0)] * n for _ in range(n)]
    b = [F(1)] * n
    for k in range(n):
        down = max(k - 1, 0) if slip else k
        a[k][k] += 1 - (1 - p - q)
        if k + 1 < n:
            a[k][k + 1] -= p
        a[k][down] -= q
    e0 = solve(a, b)[0]
    # P(top before a fall): P_k = p P_{k+1} + q p P_down + q (1-p) [k == 0] P_k + (1-p-q) P_k, P_n = 1.
    a = [[F(0)] * n for _ in range(n)]
    b = [F(0)] * n
    for k in range(n):
        down = max(k - 1, 0) if slip else k
        a[k][k] += 1 - (1 - p - q) - (q * (1 - p) if k == 0 else 0)
        if k + 1 < n:
            a[k][k + 1] -= p
        else:
            b[k] += p
        a[k][down] -= q * p
    return e0, solve(a, b)[0]


# --- Base Move, Bulk Factor, rates -----------------------------------------------------------


@pytest.mark.parametrize(
    "adapt,adj,bm",
    [
        (14, 0, 6),  # 14 x 0.44 = 6.16 -> 6 (the seed example's climber has Base Move 6)
        (11, 0, 5),  # 4.84 -> 5
        (8, 0, 4),  # 3.52 -> 4
        (14, 2, 7),  # (14 + 2) x 0.44 = 7.04 -> 7
        (10, -3, 3),  # 7 x 0.44 = 3.08 -> 3
        (25, 0, 11),  # 11.00 -> 11
        (1, 0, 0),  # 0.44 -> 0
    ],
)
def test_base_move(adapt, adj, bm):
    """Seed: "Base Move = (Adaptability + Adjustments) * 0.44" ... "rounded to the nearest whole number"."""
    assert base_move(adapt, adj) == bm  # our arithmetic, written out in the comment
    d = stats(f"adaptability={adapt},adjustments={adj}")
    assert d["base_move"] == bm
    assert d["bulk_factor"] == 0 and d["effective_base_move"] == bm


@pytest.mark.parametrize(
    "adapt,phys,bulk,bf,eff",
    [
        (14, 12, 30, 2, 4),  # RULES.md 2 example: BM 6, Physical 12, bulk 30: BF 2, effective BM 4
        (
            14,
            12,
            12,
            0,
            6,
        ),  # "You can carry up to Physical stat worth of bulk before suffering any penalties"
        (14, 12, 12.5, 1, 5),  # ceil(12.5/12) - 1 = 1; 6 - ceil(6 x 1 / 10) = 5
        (14, 12, 24, 1, 5),  # ceil(24/12) - 1 = 1
        (14, 12, 24.5, 2, 4),  # ceil(24.5/12) - 1 = 2; 6 - ceil(12/10) = 4
        (25, 10, 25, 2, 8),  # BM 11; BF ceil(2.5) - 1 = 2; 11 - ceil(22/10) = 8
        (14, 12, 120, 9, 0),  # BF 9: 6 - ceil(54/10) = 0
        (
            14,
            12,
            121,
            10,
            0,
        ),  # "more than 10x your Physical ... Bulk Factor is 10 and your Base Move is necessarily zero"
    ],
)
def test_bulk_factor_and_effective_base_move(adapt, phys, bulk, bf, eff):
    """Seed: "For each additional increment of your Physcial stat that you are carrying above the
    first, your Bulk Factor increases by 1 and your Base Move is reduced by 10% (rounded up)."
    RULES.md 2: "Bulk Factor: 0 while bulk <= Physical; else min(10, ceil(bulk / Physical) - 1).
    Effective BM (ruling) = BM - ceil(BM x BF / 10)"."""
    bm = base_move(adapt)
    assert min(10, max(0, math.ceil(F(bulk) / phys) - 1)) == bf
    assert bm - math.ceil(F(bm * bf, 10)) == eff or bf == 10
    d = stats(f"adaptability={adapt},physical={phys},bulk={bulk}")
    assert (d["base_move"], d["bulk_factor"], d["effective_base_move"]) == (bm, bf, eff)
    if bf == 0:
        assert d["encumbrance"] == "none"
    elif eff == 0:
        assert d["encumbrance"] == "immobile"
        assert frac(d["per_turn"]["walk"]) == 0
    else:
        assert d["encumbrance"] not in ("none", "immobile")
    # "all of your other movement rates are derived from your Base Move": sprint = 3 x effective BM
    assert frac(d["per_turn"]["walk"]) == 3 * eff


@pytest.mark.parametrize(
    "setting,eff",
    [
        # BM 11, BF 2 (adaptability 25, physical 10, bulk 25)
        ("total", 8),  # 11 - ceil(11 x 2 / 10) = 11 - 3
        ("per_factor", 7),  # settings text: BM - BF x ceil(BM / 10) = 11 - 2 x 2
        (
            "compound",
            8,
        ),  # 10% rounded up off what is left, per factor: 11 - ceil(1.1) = 9; 9 - ceil(0.9) = 8
    ],
)
def test_bulk_reduction_settings(setting, eff):
    """Seed: "your Base Move is reduced by 10% (rounded up)" for each increment; RULES.md 2 ruling
    `total` is the default, `tacgrid systems` names the two other readings."""
    d = stats("adaptability=25,physical=10,bulk=25", f"bulk_reduction={setting}")
    assert d["effective_base_move"] == eff


@pytest.mark.parametrize("adapt,bulk", [(14, 0), (11, 0), (14, 30), (25, 0)])
def test_rates_walk_run_sprint_sneak_down_ladder(adapt, bulk):
    """Seed: Base Move "in (h/t)" per action; "Run Move ... 2x their Base Move"; "Sprint Move ...
    3x their Base Move"; Sneak: "two actions to move your Base Move" (BM/2 an action); Down:
    "1/6 of your standing Base Move"; Climb Move: "a ladder ... at 1/6 your Base Move"; Swim:
    "In order to move at all while swimming you must have the Swimming skill".
    "Actual Speed ... a hex representing 2 meters ... dividing their movement rate by 2.5"."""
    bm = base_move(adapt)
    bf = max(0, math.ceil(F(bulk) / 12) - 1)
    e = bm - math.ceil(F(bm * bf, 10))
    d = stats(f"adaptability={adapt},physical=12,bulk={bulk}")
    r = {k: frac(v) for k, v in d["rates"].items()}
    # rates are in the system's unit (m): hexes x 2 m
    assert r["walk"] == 2 * e
    assert r["run"] == 2 * (2 * e)
    assert r["sprint"] == 2 * (3 * e)
    assert r["sneak"] == 2 * F(e, 2)
    assert r["down"] == 2 * F(e, 6)
    assert r["ladder"] == 2 * F(e, 6)
    assert r["swim"] == 0  # no Swimming skill
    pt = {k: frac(v) for k, v in d["per_turn"].items()}
    # a whole turn = 3 actions moving
    assert pt["walk"] == 3 * e
    assert pt["crawl"] == 3 * F(e, 6)
    assert pt["ladder"] == 3 * F(e, 6)
    assert pt["swim"] == 0
    ms = {k: frac(v) for k, v in d["speed_m_per_s"].items()}
    assert ms["walk"] == F(e) / F(5, 2)
    assert ms["run"] == F(2 * e) / F(5, 2)
    assert ms["sprint"] == F(3 * e) / F(5, 2)


def test_dash_doubles_run_and_sprint_not_walk():
    """Seed: "The Dash perk ... allows the possibility to double movement speed" (run, sprint).
    RULES.md 2: "Dash perk doubles run and sprint (4 x BM for 2 actions, 6 x BM for 3), not walk"."""
    d = stats("adaptability=14,dash=true")
    r = {k: frac(v) for k, v in d["rates"].items()}
    assert (r["walk"], r["run"], r["sprint"]) == (2 * 6, 2 * 24, 2 * 36)  # BM 6: 6, 24, 36 hexes
    assert frac(d["per_turn"]["walk"]) == 36
    # crawling is not run or sprint: BM/6 an action still
    assert frac(d["per_turn"]["crawl"]) == 3


def test_swim_needs_skill_and_aquatic_full_unadjusted():
    """Seed: "If you have the swimming skill, your movement while swimming is equal to 1/6 of your
    Base Move ... Uniquely, merfolk and lizari use their unadjusted Base Move while swimming."
    RULES.md 2: "swim BM/6 and only with the Swimming skill (aquatic species: full unadjusted BM)"."""
    d = stats("adaptability=14,swimming=3")
    assert frac(d["rates"]["swim"]) == 2 * F(6, 6)  # 1 hex an action = 2 m
    assert frac(d["per_turn"]["swim"]) == 3
    d = stats("adaptability=14,swimming=3,bulk=30")  # BF 2, effective BM 4
    assert frac(d["per_turn"]["swim"]) == 3 * F(4, 6)
    # aquatic, Adaptability 14 + 2 (adjusted BM 7.04 -> 7); unadjusted: 14 x 0.44 = 6.16 -> 6 an action
    d = stats("adaptability=14,adjustments=2,swimming=3,aquatic=true")
    assert d["base_move"] == 7
    assert frac(d["per_turn"]["swim"]) == 3 * 6
    assert frac(d["per_turn"]["walk"]) == 3 * 7


@pytest.mark.parametrize("adapt,bulk,km", [(14, 0, 30), (14, 30, 20), (11, 0, 25), (25, 0, 55)])
def test_travel_per_day(adapt, bulk, km):
    """Seed: "To calculate travel distance, multiply your character's Base Move by 5. ... 8 hours
    ... leaves the traveller's Stamina reduced by 8 points ... the same distance in 10 hours ...
    no lost Stamina ... extended by 5% for each hour and each point of Stamina invested"
    (Base Move impaired by bulk: "all of your other movement rates are derived from your Base Move")."""
    d = stats(f"adaptability={adapt},physical=12,bulk={bulk}")
    t = d["travel"]
    assert frac(t["km_per_day"]) == km
    assert frac(t["day"]["km"]) == km and t["day"]["hours"] == 8 and t["day"]["stamina_lost"] == 8
    assert frac(t["day_with_stops"]["km"]) == km and t["day_with_stops"]["hours"] == 10
    assert t["day_with_stops"]["stamina_lost"] == 0
    assert frac(t["extra_hour"]["km"]) == km * F(5, 100) and t["extra_hour"]["stamina_lost"] == 1
    # "24 continuous hours ... 1.8x their travel distance for 24 points of Stamina": 8 + 16 x 5%
    assert km + 16 * frac(t["extra_hour"]["km"]) == km * F(18, 10)


@pytest.mark.parametrize(
    "level,adjust,k",
    [
        ("easy", 0, 1),
        ("moderate", -1, 2),
        ("difficult", -2, 3),
        ("very_difficult", -3, 4),
        ("heroic", -7, 8),
    ],
)
def test_climbing_table(level, adjust, k):
    """Seed: "starting at 1/10 Base Move for Normal Difficulty, 1/20 Base Move for Unfavorable,
    1/30 for Somewhat Difficult and continuing up to 1/80 Base Move for an Impossible diffculty
    climb"; example: "15 Climbing skill ... Somewhat Difficult (-2) ... 1/30 x 6 = 0.2 hexes ...
    needs to roll 8 or higher on 2d10". RULES.md 2 levels/divisors."""
    d = stats("adaptability=14,climbing=15")
    row = d["climbing"][level]
    assert row["adjust"] == adjust
    assert frac(row["per_success"]) == F(6, 10 * k)
    assert row["needs_on_2d10"] == 21 - 15 - adjust
    assert frac(row["p_success"]) == p_success(15 + adjust)
    if level == "difficult":
        assert frac(row["per_success"]) == F(1, 5) and frac(row["p_success"]) == F(79, 100)


# --- odds of the 21 Challenge ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,mod,trained",
    [
        (("skill=15", "adjust=-2"), 13, True),  # seed: "roll 8 or higher on 2d10"
        (("skill=10",), 10, True),
        (("skill=10", "adjust=3"), 13, True),  # very_easy +3
        (("skill=12", "adjust=-2", "bf=2"), 8, True),  # -Bulk Factor
        (("skill=25", "adjust=-7"), 18, True),  # needs 3: only a natural 2 fails
        (("skill=40",), 40, True),  # natural 2 still fails
        (("skill=0",), 0, True),  # needs 21: only a natural 20 succeeds
        (("skill=-5",), -5, True),
        (("skill=5", "has_skill=false"), 5, False),  # untrained: natural 20 success, not critical
    ],
)
def test_odds_21_challenge(args, mod, trained):
    """RULES.md 2: "21 Challenge: 2d10 + skill + adjustment >= 21. Natural 20: success (critical if
    the roller has the skill). Natural 2: failure (catastrophe). Bulk-affected skills ... get
    -Bulk Factor." Enumerated over the 100 equally likely 2d10 rolls."""
    d = tacgrid_json("odds", *SYS, *args)
    want = p21(mod, trained)
    assert abs(d["p_success"] - float(want["critical_success"] + want["success"])) < 1e-12
    assert F(d["p_success_exact"]) == want["critical_success"] + want["success"]
    got = {k: F(v) for k, v in d["exact"].items()}
    for key, p in want.items():
        assert got.get(key, F(0)) == p, key
    for key, p in d["outcomes"].items():
        assert abs(p - float(want[key])) < 1e-12


def test_odds_edge_values_by_hand():
    """Spelled out: skill 15 at -2 needs 8+ on 2d10: 100 - (1+2+3+4+5+6) = 79 of 100 (seed "about
    80%"); skill 0: only the natural 20, 1/100; skill 25 at -7 needs 3+: all but the natural 2."""
    assert p_success(13) == F(79, 100)
    assert p_success(0) == F(1, 100)
    assert p_success(18) == F(99, 100)
    assert F(tacgrid_json("odds", *SYS, "skill=15", "adjust=-2")["p_success_exact"]) == F(79, 100)
    assert F(tacgrid_json("odds", *SYS, "skill=0")["p_success_exact"]) == F(1, 100)
    assert F(tacgrid_json("odds", *SYS, "skill=25", "adjust=-7")["p_success_exact"]) == F(99, 100)


# --- paths and reach: walking ------------------------------------------------------------------


@pytest.mark.parametrize("pace,per_turn", [("walk", 6), ("run", 12), ("sprint", 18)])
def test_hex_straight_walk_over_turns(mm, pace, per_turn):
    """Seed: Base Move per action, "two of their actions ... 2x", "all three ... 3x". BM 6 on a
    25-hex row: 24 hexes / (actions x 6) turns; 2 m a hex."""
    m = mm(["." * 25], **HEX)
    d = path(m, "adaptability=14", "0,0", "24,0", "--pace", pace)
    assert d["turns"] == pytest.approx(float(F(24, per_turn)), abs=1e-12)
    assert d["distance"] == 48 and d["unit"] == "m"
    assert all(s["mode"] == "walk" and s["check"] is None for s in d["steps"])
    assert d["p_no_failure"] == 1


def test_hex_distance_pointy_and_flat(mm):
    """Hex: "every step is one cell" (RULES.md 0). Cube coordinates (MAP-FORMAT.md): y/odd
    (3,3): q = 3 - (3-1)/2 = 2, r = 3, s = -5: 5 steps; x/even (3,3): q = 3, r = 3 - (3+1)/2 = 1,
    s = -4: 4 steps. BM 6 sprint: 18 hexes a turn."""
    d = path(mm(["....."] * 5, **HEX), "adaptability=14", "0,0", "3,3")
    assert len(d["cells"]) - 1 == 5 and d["distance"] == 10
    assert d["turns"] == pytest.approx(5 / 18, abs=1e-12)
    d = path(mm(["....."] * 5, **HEX_FLAT), "adaptability=14", "0,0", "3,3")
    assert len(d["cells"]) - 1 == 4 and d["distance"] == 8
    assert d["turns"] == pytest.approx(4 / 18, abs=1e-12)


@pytest.mark.parametrize("diag,cells", [("alternate", 6), ("equal", 4), ("none", 8)])
def test_square_diagonal_rules(mm, diag, cells):
    """Square maps: RULES.md 0 "alternate = 1-2-1 (5-10-5)", "equal = 1-1-1", "none = 4
    neighbours". (0,0) -> (4,4): 4 diagonals = 1+2+1+2 = 6 / 4 / 8 cells; BM 6 sprint 18 a turn,
    cells of 2 m (RULES.md 2)."""
    m = mm(["....."] * 5, properties={"diagonals": diag})
    d = path(m, "adaptability=14", "0,0", "4,4")
    assert d["turns"] == pytest.approx(cells / 18, abs=1e-12)
    assert d["distance"] == pytest.approx(2 * cells)


def test_dash_and_bulk_in_paths(mm):
    """Dash sprint 6 x BM (RULES.md 2): 24 hexes / 36 = 2/3 turn. Bulk 30 (BF 2, effective BM 4):
    sprint 12 a turn: 24 / 12 = 2 turns."""
    m = mm(["." * 25], **HEX)
    assert path(m, "adaptability=14,dash=true", "0,0", "24,0")["turns"] == pytest.approx(
        2 / 3, abs=1e-12
    )
    assert path(m, "adaptability=14,bulk=30", "0,0", "24,0")["turns"] == pytest.approx(
        2.0, abs=1e-12
    )


def test_reach_bands_hex(mm):
    """Reach in one turn, BM 6: walk (1 action) 6 hexes, run 12, sprint 18 (seed Run/Sprint Move)."""
    d = tacgrid_json(
        "reach",
        mm(["." * 25], **HEX),
        *SYS,
        "--token",
        "adaptability=14",
        "--from",
        "0,0",
        "--turns",
        "1",
    )
    cells = {tuple(c["cell"]): c for c in d["cells"]}
    assert set(cells) == {(c, 0) for c in range(19)}
    for c in range(1, 19):
        assert cells[(c, 0)]["turns"] == pytest.approx(c / 18, abs=1e-12)
        assert cells[(c, 0)]["band"] == ("walk" if c <= 6 else "run" if c <= 12 else "sprint")


# --- progress carries over (crawl, ladder) ---------------------------------------------------


@pytest.mark.parametrize("row", ["._____.", ".HHHHH."])
def test_progress_carries_over_between_turns(mm, row):
    """RULES.md 2: "Fractions are exact and progress carries over between turns while the mode
    stays the same." Seed: down move and ladder "1/6 of your ... Base Move" an action.
    Adaptability 11: BM 5 (4.84); 5/6 hex an action, 5/2 a turn (sprint). 5 cells: 5 / (5/2) = 2
    turns exactly (without carry-over only 2 whole cells a turn: 3 turns), then 1 walk hex at 15
    a turn: 2 + 1/15 = 31/15."""
    d = path(mm([row], **HEX), "adaptability=11", "0,0", "6,0")
    assert d["turns"] == pytest.approx(float(F(31, 15)), abs=1e-12)
    assert [s["mode"] for s in d["steps"][1:]] == [d["steps"][1]["mode"]] * 5 + ["walk"]
    # the third cell is finished at 3 x 2/5 = 6/5 turns: in turn 2, with turn 1's 1/2 hex carried
    assert d["steps"][3]["turns"] == pytest.approx(1.2, abs=1e-12)


def test_reach_crawl_one_action_a_turn(mm):
    """Walk pace = 1 action a turn: crawling BM 5 is 5/6 hex a turn, so no whole hex in turn 1,
    and with progress carried over the first crawl hex is done at 6/5 turns, the second at 12/5."""
    m = mm(["._____."], **HEX)
    base = ("reach", m, *SYS, "--token", "adaptability=11", "--from", "0,0", "--pace", "walk")
    one = {tuple(c["cell"]) for c in tacgrid_json(*base, "--turns", "1")["cells"]}
    assert one == {(0, 0)}
    two = {tuple(c["cell"]): c["turns"] for c in tacgrid_json(*base, "--turns", "2")["cells"]}
    assert set(two) == {(0, 0), (1, 0)}
    assert two[(1, 0)] == pytest.approx(1.2, abs=1e-12)


# --- swimming --------------------------------------------------------------------------------


def test_swim_path_needs_skill(mm):
    """Seed: "In order to move at all while swimming you must have the Swimming skill." With it:
    BM 6 / 6 = 1 hex an action, 3 a turn: 6 hexes = 2 turns; the easy water asks a Swimming 21C
    (RULES.md 0/2: easy = adjustment 0): skill 10 needs 11+ on 2d10: 55/100."""
    m = mm([".~~~~~~"], **HEX)
    path(m, "adaptability=14", "0,0", "6,0", expect_rc=1)
    d = path(m, "adaptability=14,swimming=10", "0,0", "6,0")
    assert d["turns"] == pytest.approx(2.0, abs=1e-12)
    first = d["steps"][1]
    assert first["mode"] == "swim"
    assert first["check"]["p_success"] == pytest.approx(float(p_success(10)), abs=1e-12) == 0.55
    # one swimming hex: a single check
    d = path(mm([".~."], **HEX), "adaptability=14,swimming=10", "0,0", "1,0")
    assert d["p_no_failure"] == pytest.approx(0.55, abs=1e-12)
    assert d["turns"] == pytest.approx(1 / 3, abs=1e-12)


# --- skill climbing (rules that depend on what happened earlier) -----------------------------

SEED_CLIMBER = "adaptability=14,climbing=15"  # BM 6, Climbing 15, zero bulk (the seed's example)


def test_climb_seed_example_expected_turns_without_slips(mm):
    """Seed example: "15 Climbing skill ... Somewhat Difficult (-2) ... 1/30 x 6 = 0.2 hexes ...
    8 or higher on 2d10". RULES.md 2: "0.2 hex per success, 79% per turn, 20 successes for 4
    hexes: about 25.3 turns on average". With climb_slip=none no slip regresses: the number of
    turns to 20 successes at 79/100 has mean 20 / (79/100) = 2000/79 = 25.316."""
    m = mm([".C"], **HEX)  # one cliff hex 8 m high = 4 hexes of climbing
    d = path(m, SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=none")
    assert d["steps"][1]["mode"] == "climb"
    assert d["turns"] == pytest.approx(float(F(2000, 79)), abs=1e-9)
    assert d["steps"][1]["check"]["p_success"] == pytest.approx(0.79, abs=1e-12)


def test_climb_seed_example_expected_turns_with_slips(mm):
    """Seed: "Critical failure leads to a slip and a regression"; RULES.md 2: "natural 2: lose
    that turn's progress (ruling)"; settings: "a natural 2 climbing loses a turn's progress, BM /
    (10 k)". Chain over 20 successes: +1 with 79/100, -1 (not below 0) with 1/100, else nothing:
    mean time ~25.6246 turns (exact Fraction from climb_chain)."""
    e, _ = climb_chain(20, F(79, 100), F(1, 100), slip=True)
    assert 25.62 < float(e) < 25.63
    m = mm([".C"], **HEX)
    d = path(m, SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=lose_turn")
    assert d["turns"] == pytest.approx(float(e), abs=1e-9)


def test_climb_slip_setting_changes_expected_time(mm):
    """RULES.md 2: the slip loses progress (lose_turn, the default); `none`: no loss. The mean
    time over the seed's 4-hex climb must then differ: 2000/79 (none) < ~25.62 (lose_turn)."""
    m = mm([".C"], **HEX)
    none = path(m, SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=none")["turns"]
    lose = path(m, SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=lose_turn")["turns"]
    assert lose > none


def test_climb_p_no_failure_is_chance_of_no_fall(mm):
    """Seed: "if you fail the roll you don't move at all. Critical failure leads to a slip and a
    regression, requiring another Climbing roll to avoid a fall". So a failed 21C is not a failure
    of the path: the risk is a natural 2 (1/100) followed by a failed re-roll (21/100) while above
    the ground. Over the seed's climb (4 hexes as four 1-hex cells, 20 successes), P(top before a
    fall) from climb_chain (lose_turn) ~0.950 — not 0.79^4 = 0.3895."""
    e, p_top = climb_chain(20, F(79, 100), F(1, 100), slip=True)
    assert 0.95 < float(p_top) < 0.97
    m = mm([".cccc"], **HEX)
    d = path(m, SEED_CLIMBER, "0,0", "4,0")
    assert d["p_no_failure"] == pytest.approx(float(p_top), abs=1e-9)


def test_climb_progress_carries_over_across_cells(mm):
    """RULES.md 2: "progress carries over between turns while the mode stays the same": four
    1-hex cliff cells are the same 4-hex climb as one 4-hex cell: 20 successes, 2000/79 turns
    (climb_slip=none, so no slip model is involved)."""
    one = path(mm([".C"], **HEX), SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=none")
    four = path(mm([".cccc"], **HEX), SEED_CLIMBER, "0,0", "4,0", "--set", "climb_slip=none")
    assert four["turns"] == pytest.approx(one["turns"], abs=1e-9)
    assert four["turns"] == pytest.approx(float(F(2000, 79)), abs=1e-9)


def test_climb_three_moderate_hexes(mm):
    """Moderate ("Unfavorable", -1): 1/20 x 6 = 0.3 hex a success; Climbing 15 - 1 needs 7+ on
    2d10: 100 - (1+2+3+4+5) = 85/100. Three 1-hex cells, progress carried over: 3 / 0.3 = 10
    successes: 10 / (85/100) = 200/17 turns (climb_slip=none)."""
    d = path(mm([".mmm"], **HEX), SEED_CLIMBER, "0,0", "3,0", "--set", "climb_slip=none")
    assert d["turns"] == pytest.approx(float(F(200, 17)), abs=1e-9)


def test_climb_partial_success_needs_whole_successes(mm):
    """Seed: "this is the rate of movement per turn when you succeed your 21C ... if you fail the
    roll you don't move at all". One moderate 1-hex cliff at 0.3 hex a success: after 3 successes
    the climber is at 0.9 hex, so the top takes a 4th success: 4 / (85/100) = 80/17 = 4.706 turns
    on average (climb_slip=none)."""
    d = path(mm([".m"], **HEX), SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=none")
    assert d["turns"] == pytest.approx(float(F(80, 17)), abs=1e-9)


def test_climb_cannot_share_a_turn_with_walking(mm):
    """Seed: "Using the climbing skill to move uses all of your actions for the turn, so you cannot
    sprint or perform any other action if you move while using the climbing skill." Walking one
    hex spends an action of turn 1, so the climb (20 successes, 2000/79 turns, climb_slip=none)
    starts at turn 2: 1 + 2000/79."""
    d = path(mm(["..C"], **HEX), SEED_CLIMBER, "0,0", "2,0", "--set", "climb_slip=none")
    assert d["turns"] == pytest.approx(float(1 + F(2000, 79)), abs=1e-9)


def test_climb_after_walking_waits_again_for_a_turn(mm):
    """Seed: "Using the climbing skill to move uses all of your actions for the turn". A climb
    ends with the turn of its last success; walking one hex after it (1/18 of a sprint turn:
    BM 6 x 3 = 18 hexes) leaves the rest of that turn, so a second cliff starts a turn later:
    1 (walk, wait) + 2000/79 (climb) + 1 (walk, wait) + 2000/79 (climb), climb_slip=none."""
    d = path(mm(["..C.C"], **HEX), SEED_CLIMBER, "0,0", "4,0", "--set", "climb_slip=none")
    assert frac(d["turns_exact"]) == 2 + 2 * F(2000, 79)
    # A climb on the first step needs no wait: 2000/79 + 1 (walk, wait) + 2000/79.
    d = path(mm([".C.C"], **HEX), SEED_CLIMBER, "0,0", "3,0", "--set", "climb_slip=none")
    assert frac(d["turns_exact"]) == 1 + 2 * F(2000, 79)


def _p_through(n: int, p: F, q: F, turns: int) -> F:
    """P(n successes banked within ``turns`` climbing turns, no fall), climb_slip=none. Seed: "if
    you fail the roll you don't move at all. Critical failure leads to a slip and a regression,
    requiring another Climbing roll to avoid a fall"; with climb_slip=none a natural 2 loses
    nothing, and above the foot its re-roll (p) holds, else a fall."""
    dist = [F(1)] + [F(0)] * n
    for _ in range(turns):
        new = [F(0)] * (n + 1)
        new[n] = dist[n]
        for k in range(n):
            new[k + 1] += dist[k] * p
            new[k] += dist[k] * ((1 - p - q) + (q if k == 0 else q * p))
        dist = new
    return dist[n]


def test_climb_figures_reported_are_exact(mm):
    """Every reported figure is the exact one, not the search's mean rate (BM 6 x 1/30 = 0.2 hex
    a success x 79/100 a turn). The seed's 4-hex climb after one hex of walking (it starts at
    turn 2: "uses all of your actions for the turn"): `path` turns 1 + 2000/79 (climb_slip=none);
    p_within_turns: through within ceil(1 + 2000/79) = 27 turns, i.e. 20 successes in the 26
    climbing turns without a fall; `reach` gives the climb's cell the same exact figure."""
    m = mm(["..C."], **HEX)
    d = path(m, SEED_CLIMBER, "0,0", "2,0", "--set", "climb_slip=none")
    assert frac(d["turns_exact"]) == 1 + F(2000, 79)
    assert frac(d["p_within_turns_exact"]) == _p_through(20, F(79, 100), F(1, 100), 26)
    r = tacgrid_json(
        "reach", m, *SYS, "--token", SEED_CLIMBER, "--from", "0,0", "--turns", "30",
        "--set", "climb_slip=none",
    )  # fmt: skip
    got = {tuple(c["cell"]): c["turns"] for c in r["cells"]}
    assert got[(2, 0)] == pytest.approx(float(1 + F(2000, 79)), abs=1e-9)
    assert got[(3, 0)] == pytest.approx(float(1 + F(2000, 79) + F(1, 18)), abs=1e-9)
    # Default climb_slip=lose_turn: 1 + ~25.62 turns, so in expectation not within 26 turns,
    # though the mean rate alone (1/18 + 4 / (0.2 x 79/100) = ~25.37) would say it is.
    e, _ = climb_chain(20, F(79, 100), F(1, 100), slip=True)
    r = tacgrid_json("reach", m, *SYS, "--token", SEED_CLIMBER, "--from", "0,0", "--turns", "30")
    got = {tuple(c["cell"]): c["turns"] for c in r["cells"]}
    assert got[(2, 0)] == pytest.approx(float(1 + e), abs=1e-9)
    r = tacgrid_json("reach", m, *SYS, "--token", SEED_CLIMBER, "--from", "0,0", "--turns", "26")
    assert [2, 0] not in [c["cell"] for c in r["cells"]]


def test_climb_on_square_map(mm):
    """Square grid, same seed climber and the same 4-hex (8 m) cliff: 2000/79 turns (climb_slip=none)."""
    d = path(mm([".C"]), SEED_CLIMBER, "0,0", "1,0", "--set", "climb_slip=none")
    assert d["turns"] == pytest.approx(float(F(2000, 79)), abs=1e-9)


# --- flight (RULES.md 6) -----------------------------------------------------------------------

FLYER = "adaptability=5,flyer=true"  # BM round(2.2) = 2; cap 18 x 2 = 36


def fly(m: str, *args: str, expect_rc: int = 0) -> dict:
    return tacgrid_json("fly", m, *SYS, "--token", FLYER, *args, expect_rc=expect_rc)


def check_speeds(d: dict, start: int, bm: int = 2) -> None:
    """Replay each turn by the seed's rules: "Maintain ... 1 Action"; "Accelerate ... each Action
    ... increase their current speed by Base Move"; "expending no Actions to maintain speed or
    accelerate will automatically reduce their current speed by Base Move, and each additional
    Action they spend will decrease their current speed by Base Move"; cap "18x their Base Move";
    RULES.md 6 "(3) Move exactly that many cells"."""
    speed = start
    for t in d["plan"]:
        acts = t["actions"]
        acc, dec, keep = acts.count("accelerate"), acts.count("decelerate"), acts.count("maintain")
        assert len(acts) <= 3
        if acc:
            speed += acc * bm
        elif not keep:
            speed -= (dec + 1) * bm
        speed = max(0, min(18 * bm, speed))
        assert t["speed"] == speed
        assert len(t["cells"]) == speed
        if "land" in acts:
            assert speed <= 3 * bm  # RULES.md 6: "Landing faster than 3 x BM ... is a collision"


def test_flight_take_off_and_accelerate(mm):
    """From the ground at 0: take off (1 action) + 2 accelerate = 4 in turn 1; then +6 a turn at
    most: 4, 10, 16 = 30 hexes in 3 turns < 40, so 40 hexes need 4 turns."""
    m = mm(["." * 60] * 3, **HEX)
    d = fly(m, "--from", "0,1", "--heading", "90", "--speed", "0", "--to", "40,1")
    assert d["turns"] == 4
    assert "take_off" in d["plan"][0]["actions"]
    check_speeds(d, 0)
    assert all("turn" not in t["actions"] for t in d["plan"])  # straight east: no turning


def test_flight_landing_speed(mm):
    """Land on a cell 20 hexes east, from the ground: 2 turns reach at most 4 + 10 = 14, so 3
    turns; the landing turn's speed is at most 3 x BM = 6 (RULES.md 6)."""
    m = mm(["." * 60] * 3, **HEX)
    d = fly(m, "--from", "0,1", "--heading", "90", "--speed", "0", "--to", "20,1", "--land")
    assert d["turns"] == 3
    assert d["end"]["landed"] is True and d["end"]["cell"] == [20, 1]
    check_speeds(d, 0)


def test_flight_speed_cap_18_bm(mm):
    """Seed: "the maximum speed a creature ... can achieve is equal to 18x their Base Move":
    BM 2, cap 36. At 36 a cell 37 hexes ahead cannot be entered in one turn (accelerating would
    give 38 without the cap), so 2 turns; a start speed of 40 is refused."""
    m = mm(["." * 80] * 3, **HEX)
    d = fly(m, "--from", "0,1", "--heading", "90", "--speed", "36", "--to", "37,1")
    assert d["turns"] == 2
    assert all(t["speed"] <= 36 for t in d["plan"])
    check_speeds(d, 36)
    rc, out, err = tacgrid(
        "fly",
        m,
        *SYS,
        "--token",
        FLYER,
        "--from",
        "0,1",
        "--heading",
        "90",
        "--speed",
        "40",
        "--to",
        "60,1",
        "--json",
    )
    assert rc == 2 and out == ""


def test_flight_square_straight(mm):
    """Square maps: headings of 45 degrees (RULES.md 6); straight east from the ground to 40 cells
    takes 4 turns as on hexes (4, 10, 16 < 40 in 3)."""
    m = mm(["." * 60] * 3)
    d = fly(m, "--from", "0,1", "--heading", "90", "--speed", "0", "--to", "40,1")
    assert d["turns"] == 4
    check_speeds(d, 0)
