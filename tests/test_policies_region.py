"""The quarry with no safe exit keeps the largest region it holds (engine.sim.flee.held_cell),
and the bounded search that measures a region (engine.policies.region.held_region) gives
the cells the plain way gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tmxtext
from conftest import ROOT
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra

from engine.policies.region import held_region
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.fields import Profile
from engine.sim.flee import flee_choice
from engine.sim.view import times_from

HEX = ROOT / "scenarios" / "hex_hunt.yaml"

# A corridor (row 4) from a dead-end room in the west to a large room in the east; the
# pursuer comes up a side corridor just east of the quarry, so the cells of this turn
# farthest from it are in the dead end.
W, H = 21, 9
QUARRY, PURSUER = (10, 4), (12, 8)


def _rooms() -> list[str]:
    open_ = set()
    open_ |= {(x, 4) for x in range(W)}
    open_ |= {(x, y) for x in range(0, 3) for y in range(3, 6)}
    open_ |= {(x, y) for x in range(14, W) for y in range(H)}
    open_ |= {(12, y) for y in range(5, H)}
    return ["".join("." if (x, y) in open_ else "#" for x in range(W)) for y in range(H)]


def _scenario(tmp_path: Path) -> Path:
    tmxtext.write(tmp_path / "rooms.tmx", _rooms())
    path = tmp_path / "rooms.yaml"
    path.write_text(
        "map: rooms.tmx\nsystem: generic\nseed: 1\nturns: 10\ngoals: {capture: 0}\n"
        "tokens:\n"
        f"  - {{id: runner, side: quarry, policy: quarry, cell: {list(QUARRY)}, "
        "stats: {speed: 15}}\n"
        f"  - {{id: hunter, side: pursuer, policy: pursuer, cell: {list(PURSUER)}, "
        "stats: {speed: 15}}\n",
        encoding="utf-8",
    )
    return path


def _held(prof: Profile, cell: tuple[int, int], threat: np.ndarray) -> int:
    g = prof.graph
    return held_region(
        prof.indptr, prof.indices, prof.data, g.n, g.node(cell), threat - 1.0, g.denominator
    )


def test_the_quarry_keeps_the_larger_room_not_the_dead_end(tmp_path: Path) -> None:
    """The old choice (the cell of this turn farthest from the pursuer) runs into the dead
    end, holding its dozen cells; the new one passes the side corridor before the hunter
    gets there and holds the large room."""
    sc = load_scenario(_scenario(tmp_path))
    sim = Simulation(sc, 1, fields=FieldCache(sc), record=False)
    prof = sim.profile_now("runner")
    g = prof.graph
    mine = prof.turns_from(QUARRY)
    threat = sim.fields.threat([times_from(sim, "hunter")], g.n)
    taken = frozenset({PURSUER})
    old = flee_choice(g, QUARRY, mine, threat, taken)
    new = flee_choice(g, QUARRY, mine, threat, taken, prof=prof)
    assert old is not None and new is not None
    assert old[0] < QUARRY[0] < PURSUER[0] < new[0]  # west into the dead end; east past it
    held_old, held_new = _held(prof, old, threat), _held(prof, new, threat)
    assert held_old <= 3 * 3 + QUARRY[0]  # the dead end and the corridor to it, at most
    assert held_new > 2 * held_old
    # In play: its first move takes it east, out of the dead end's way.
    sim.take_turn("runner")
    cell = sim.tokens["runner"].state.cell
    assert cell is not None and cell[0] > PURSUER[0]


def _plain(prof: Profile, start: int, deadline: np.ndarray) -> int:
    """The plain way: the whole field from ``start`` over the nodes kept, the nodes
    reached in time kept, again until none is cut (the greatest such set: the nodes
    reached by a way each of whose nodes is reached in time)."""
    g = prof.graph
    n, size = g.n, g.n * g.n_states
    csr = prof.csr
    keep = np.ones(size, dtype=bool)
    rows = np.repeat(np.arange(size), np.diff(csr.indptr))
    while True:
        on = keep[rows] & keep[csr.indices]
        m = csr_array((csr.data[on], (rows[on], csr.indices[on])), shape=(size, size))
        dist = dijkstra(m, indices=start)
        inside = dist / g.denominator < deadline[np.arange(size) % n]
        now = keep & inside
        if not now[start]:
            return 0
        if (now == keep).all():
            return len(set((np.flatnonzero(now) % n).tolist()))
        keep = now


@pytest.mark.parametrize("seed", range(6))
def test_the_bounded_search_holds_what_the_plain_way_holds(seed: int, tmp_path: Path) -> None:
    """On the hex map (swims, climbs, gaps) and on a square map of alternating diagonals
    (two parity states a cell), for random pursuers' deadlines."""
    rng = np.random.default_rng(seed)
    hexes = load_scenario(HEX)
    tmxtext.write(tmp_path / "rooms.tmx", _rooms())
    rooms = load_scenario(_scenario(tmp_path))
    for sc, tid in ((hexes, "beast"), (rooms, "runner")):
        prof = Simulation(sc, 1, record=False).profile_now(tid)
        g = prof.graph
        for _ in range(5):
            start = g.node(g.grid.cell_of_index(int(rng.integers(g.n))))
            deadline = rng.uniform(0.0, 6.0, g.n)
            deadline[rng.random(g.n) < 0.1] = np.inf
            got = held_region(
                prof.indptr, prof.indices, prof.data, g.n, start, deadline, g.denominator
            )
            listed = held_region(*prof.lists(), g.n, start, deadline.tolist(), g.denominator)  # type: ignore[misc]
            plain = _plain(prof, start, deadline)
            assert got == listed == plain
            for cap in (1, 5, 40):
                capped = held_region(
                    prof.indptr, prof.indices, prof.data, g.n, start, deadline, g.denominator, cap
                )
                assert capped == min(plain, cap)


@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_kept_centres_choose_as_the_cells_own_centres(name: str) -> None:
    """held_cell reads its cells' directions from the grid's centres kept by the field
    cache (flee.cell_centres) where it has them: each the grid's own cell_center, and
    the same flight from every pair of cells the quarry and a pursuer may stand on."""
    from engine.sim.flee import cell_centres

    sc = load_scenario(str(ROOT / "scenarios" / f"{name}.yaml"))
    fields = FieldCache(sc)
    grid = sc.model.grid
    centres = cell_centres(grid)
    for i in range(0, grid.width * grid.height, 7):
        assert tuple(centres[i]) == grid.cell_center(grid.cell_of_index(i))
    assert fields.centres(grid) is fields.centres(grid)
    sim = Simulation(sc, 1, fields=fields, record=False)
    prof = sim.profile_now(sim.quarries[0])
    hunter = sim.profile_now(sim.pursuers[0])
    g = prof.graph
    rng = np.random.default_rng(4)
    every = (grid.cell_of_index(i) for i in range(g.n))
    cells = [c for c in every if np.isfinite(prof.turns_from(c)).sum() > 1]
    weighed = 0
    for _ in range(60):
        here, there = (cells[int(k)] for k in rng.integers(0, len(cells), 2))
        mine = prof.turns_from(here)
        threat = hunter.turns_from(there)
        taken = frozenset({there})
        plain = flee_choice(g, here, mine, threat, taken, prof=prof)
        kept = flee_choice(g, here, mine, threat, taken, prof=prof, centres=centres)
        assert kept == plain, (here, there)
        weighed += plain is not None
    assert weighed > 10


def test_the_safest_exit_searches_only_where_an_exit_is_ahead() -> None:
    """FieldCache.safest_exit searches the quarry's safe way (reached_safely) only where
    some exit is reached before every pursuer: the same exit as the plain way, which
    searches every time, from random cells of the quarry and the two pursuers."""
    from engine.policies.region import reached_safely

    sc = load_scenario(str(ROOT / "scenarios" / "chase.yaml"))
    fields = FieldCache(sc)
    sim = Simulation(sc, 1, fields=fields, record=False)
    prof = sim.profile_now("quarry")
    hunters = [sim.profile_now(p) for p in sim.pursuers]
    g = prof.graph
    grid = g.grid
    exits = sorted(sc.exit_cells)
    index = np.array([grid.index(c) for c in exits], dtype=np.int64)

    def plain(mine: np.ndarray, threat: np.ndarray, cell: tuple[int, int]) -> object:
        inside = reached_safely(prof.indptr, prof.indices, g.n, grid.index(cell), mine < threat)
        best = None
        for k, c in enumerate(exits):
            i = int(index[k])
            if inside[i] and mine[i] < threat[i] and (best is None or (mine[i], c) < best):
                best = (mine[i], c)
        return None if best is None else best[1]

    every = (grid.cell_of_index(i) for i in range(g.n))
    cells = [c for c in every if np.isfinite(prof.turns_from(c)).sum() > 1]
    rng = np.random.default_rng(8)
    found = 0
    for _ in range(200):
        q, a, b = (cells[int(k)] for k in rng.integers(0, len(cells), 3))
        mine = prof.turns_from(q)
        threat = fields.threat([hunters[0].turns_from(a), hunters[1].turns_from(b)])
        got = fields.safest_exit(mine, threat, prof, q)
        assert got == plain(mine, threat, q), (q, a, b)
        found += got is not None
    assert 10 < found < 190  # both cases, many times


def test_the_frontier_among_the_regions_cells_is_frontier_choices() -> None:
    """The pursuer's shortcut (engine.policies.builtin._shrink): with the region against
    ``others`` made already and ``mine`` no less than ``others`` on the cells weighed (the
    safe exits, else the region), frontier_among on those cells is frontier_choice on the
    whole arrays, whatever ``mine`` is off them (inf where claim_turns settled nothing,
    or below ``others``); ties in turns and in lateness everywhere."""
    from engine.policies.region import frontier_among, frontier_choice, safe_mask

    rng = np.random.default_rng(4)

    def turns(n: int) -> np.ndarray:
        t = rng.integers(0, 6, size=n).astype(np.float64) / 2
        t[rng.random(n) < 0.15] = np.inf
        return t

    checked = 0
    for _ in range(600):
        n = int(rng.integers(1, 60))
        quarry, others = turns(n), turns(n)
        exits = np.flatnonzero(rng.random(n) < rng.choice([0.0, 0.1, 0.5]))
        region = safe_mask(quarry, others) & (quarry > 0)
        cells = exits[region[exits]] if region[exits].any() else np.flatnonzero(region)
        mine = np.full(n, np.inf)
        off = rng.random(n) < 0.5
        mine[off] = turns(n)[off]  # off the cells: anything, lower than others too
        mine[cells] = others[cells] + rng.integers(0, 3, size=len(cells)) / 2
        assert frontier_among(cells, mine[cells], quarry) == frontier_choice(
            mine, others, quarry, exits
        )
        checked += int(len(cells) > 1)
    assert checked > 200
