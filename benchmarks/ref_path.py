"""The reference `path` command for bench_search: python-tcod (``pip install -e '.[bench]'``).

    python benchmarks/ref_path.py MAP.tmx C0,R0 C1,R1

One process, a whole command like ``tacgrid path --json``: parse the same .tmx with
ElementTree, read each tile's ``move`` and ``cost`` from the embedded tileset, decode the
csv layer with numpy, build tcod's integer cost array (0 = blocked), search to the goal
with ``tcod.path.Pathfinder`` (A* with tcod's admissible heuristic), and print the path
and its cost as JSON.

The graphs, each the closest faithful tcod form of tacgrid's rule:

* ``diagonals=equal``: ``SimpleGraph(cost, cardinal=1, diagonal=1)``;
* ``diagonals=alternate`` (5-10-5): a ``CustomGraph`` of shape (2, h, w), the layer the
  parity of diagonals taken so far (as tacgrid's own graph): cardinal steps stay in their
  layer, a diagonal from layer 0 costs the cell once and goes to layer 1, one from layer 1
  costs it twice and goes back; the goal is the cheaper of its two layers. Exact, unlike
  ``SimpleGraph(cardinal=2, diagonal=3)``, which prices every diagonal at 1.5;
* hexagonal, stagger axis y: a ``CustomGraph`` with two 3x3 edge maps, one for the even
  rows and one for the odd (shifted) rows, each given as a ``condition`` on the rows.
"""

import json
import sys
from xml.etree import ElementTree as ET

import numpy as np
import tcod.path


def read(path: str) -> tuple[ET.Element, np.ndarray]:
    root = ET.parse(path).getroot()
    w, h = int(root.get("width")), int(root.get("height"))
    ts = root.find("tileset")
    first = int(ts.get("firstgid"))
    table = np.zeros(first + int(ts.get("tilecount")), dtype=np.int32)
    for tile in ts.iter("tile"):
        props = {p.get("name"): p.get("value") for p in tile.iter("property")}
        if props.get("move", "walk") != "blocked":
            table[first + int(tile.get("id"))] = round(float(props.get("cost", 1)))
    data = root.find("layer/data")
    gids = np.fromstring(data.text, dtype=np.int64, sep=",").reshape(h, w)
    return root, table[gids]


def main() -> int:
    root, cost = read(sys.argv[1])
    (c0, r0), (c1, r1) = (tuple(map(int, a.split(","))) for a in sys.argv[2:4])
    h, w = cost.shape
    diagonals = next(
        (
            p.get("value")
            for p in root.findall("properties/property")
            if p.get("name") == "diagonals"
        ),
        "alternate",
    )
    if root.get("orientation") == "hexagonal":
        graph = tcod.path.CustomGraph((h, w))
        odd = 1 if root.get("staggerindex", "odd") == "odd" else 0
        even_map = [[1, 1, 0], [1, 0, 1], [1, 1, 0]]  # unshifted rows: up-left, up
        odd_map = [[0, 1, 1], [1, 0, 1], [0, 1, 1]]  # shifted rows: up, up-right
        shifted = (np.arange(h)[:, None] % 2 == odd) & np.ones((1, w), dtype=bool)
        graph.add_edges(edge_map=even_map, cost=cost, condition=~shifted)
        graph.add_edges(edge_map=odd_map, cost=cost, condition=shifted)
        graph.set_heuristic(cardinal=1, diagonal=1)
        goals = [(r1, c1)]
        root_node: tuple[int, ...] = (r0, c0)
    elif diagonals == "alternate":
        graph = tcod.path.CustomGraph((2, h, w))
        cost3 = np.stack([cost, cost])
        layer0 = np.zeros((2, h, w), dtype=bool)
        layer0[0] = True
        graph.add_edges(edge_map=[[0, 1, 0], [1, 0, 1], [0, 1, 0]], cost=cost3)
        for dr in (-1, 1):
            for dc in (-1, 1):
                graph.add_edge((1, dr, dc), 1, cost=cost3, condition=layer0)
                graph.add_edge((-1, dr, dc), 2, cost=cost3, condition=~layer0)
        graph.set_heuristic(cardinal=1, diagonal=1, z=0)
        goals = [(0, r1, c1), (1, r1, c1)]
        root_node = (0, r0, c0)
    else:
        graph = tcod.path.SimpleGraph(cost=cost, cardinal=1, diagonal=1)
        goals = [(r1, c1)]
        root_node = (r0, c0)
    pf = tcod.path.Pathfinder(graph)
    pf.add_root(root_node)
    for goal in goals:
        pf.resolve(goal)
    best = min(goals, key=lambda g: int(pf.distance[g]))
    total = int(pf.distance[best])
    if total >= 2**31 - 1:
        print(json.dumps({"cells": [], "reason": "no path"}))
        return 1
    nodes = pf.path_to(best)
    cells = [[int(n[-1]), int(n[-2])] for n in nodes]
    print(json.dumps({"cells": cells, "cost": total}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
