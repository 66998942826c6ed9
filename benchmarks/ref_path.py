"""Reference for bench_search: parse a map with pytmx, run scipy's Dijkstra corner to corner.

This is the least a path command must do: read the file, make a graph of its cells
(8 neighbours, unit weights where a tile exists) and search it.
"""

import sys

import numpy as np
import pytmx
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra

tm = pytmx.TiledMap(sys.argv[1])
layer = tm.layers[0]
grid = np.array(layer.data, dtype=np.int64)
h, w = grid.shape
n = h * w
ok = (grid > 0).ravel()
idx = np.arange(n).reshape(h, w)
src, dst = [], []
for dr in (-1, 0, 1):
    for dc in (-1, 0, 1):
        if dr == dc == 0:
            continue
        r0, r1 = max(0, -dr), h - max(0, dr)
        c0, c1 = max(0, -dc), w - max(0, dc)
        s = idx[r0:r1, c0:c1].ravel()
        d = idx[r0 + dr : r1 + dr, c0 + dc : c1 + dc].ravel()
        keep = ok[d]
        src.append(s[keep])
        dst.append(d[keep])
src = np.concatenate(src)
dst = np.concatenate(dst)
g = csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))
dist = dijkstra(g, indices=0)
print(dist[n - 1])
