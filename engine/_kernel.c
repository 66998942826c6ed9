/* engine._kernel: the movement search's inner loop, compiled.
 *
 * search() runs A* (or Dijkstra up to a limit) over the framed step tables
 * of engine.movement.StepTables: the same nodes, edges and integer ticks as
 * engine.search.frontier.frontier_search (its numpy twin, which remains the fallback when
 * this module is not built), so both give the same totals. Python calls it through
 * engine.kernel.astar, which names every argument (AStarTables, AStarArgs, Guide). It reads and writes only buffers
 * the caller made (numpy arrays): no numpy headers, only the buffer protocol.
 *
 * A node is layer * pn + framed cell. Ticks of entering a framed cell are read from the
 * system layer's table (layer / n_par), -1 = cannot enter. Under the 5-10-5 rule
 * (parity_state) every other diagonal costs double and flips the parity layer. In-place
 * edges change the system layer on the same cell; jumps are extra edges from a few nodes.
 *
 * The heuristic is either the open-grid distance to the goal times the fewest ticks a cell
 * (as engine.search.frontier._heuristic works it out) or the landmarks' bound
 * (engine.search.landmarks.Landmarks): the largest of field_k[v] + offset_k over a few
 * exact distance fields, read on graph (unframed) node numbers.
 *
 * field() is a plain Dijkstra over a CSR graph of float ticks from many sources at once: the
 * turn loop's distance fields (engine.sim.Profile), which scipy's csgraph.dijkstra gives
 * bit for bit, some five times slower on a chase map.
 *
 * csv_u32() reads a Tiled csv layer's plain numbers into a uint32 buffer, the common case
 * of engine.tiled.layerdata's csv decoding (numpy's parse, kept for everything else, took
 * some 0.1 s of a 2048^2 map's load).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key; /* f << 32 | (UINT32_MAX - g): least estimate first, then the deepest */
    int32_t node;
} Entry;

typedef struct {
    Entry *items;
    Py_ssize_t size, cap;
} Heap;

static int heap_push(Heap *h, uint64_t key, int32_t node) {
    if (h->size == h->cap) {
        Py_ssize_t cap = h->cap ? h->cap * 2 : 1024;
        Entry *items = realloc(h->items, (size_t)cap * sizeof(Entry));
        if (!items) return -1;
        h->items = items;
        h->cap = cap;
    }
    Py_ssize_t i = h->size++;
    Entry *a = h->items;
    while (i > 0) {
        Py_ssize_t up = (i - 1) >> 1;
        if (a[up].key <= key) break;
        a[i] = a[up];
        i = up;
    }
    a[i].key = key;
    a[i].node = node;
    return 0;
}

static Entry heap_pop(Heap *h) {
    Entry *a = h->items;
    Entry top = a[0];
    Entry last = a[--h->size];
    Py_ssize_t n = h->size, i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && a[c + 1].key < a[c].key) c++;
        if (a[c].key >= last.key) break;
        a[i] = a[c];
        i = c;
    }
    if (n > 0) a[i] = last;
    return top;
}

static inline int64_t floordiv2(int64_t x) { return x >= 0 ? x >> 1 : -((-x + 1) >> 1); }
static inline int64_t iabs(int64_t x) { return x < 0 ? -x : x; }
static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* Heuristic kinds (engine.search.frontier._heuristic's cases; engine.kernel.Estimate). */
enum { H_NONE = 0, H_MANHATTAN = 1, H_CHEBYSHEV = 2, H_ALTERNATE = 3, H_HEX = 4 };

typedef struct {
    int kind, stag, axis_y, even, layered;
    int64_t least, n_par, gu, gv, pw, pad, pn, w, n;
    /* landmarks */
    Py_ssize_t n_terms;
    const int64_t **fields;
    const int64_t *offsets;
    int64_t far;
} Guide;

static void axes(const Guide *G, int64_t c, int64_t r, int64_t *u, int64_t *v) {
    if (G->kind == H_HEX) { /* cube q, r of an offset hex cell */
        if (G->axis_y) {
            int64_t half = G->even ? floordiv2(r + (r & 1)) : floordiv2(r - (r & 1));
            *u = c - half;
            *v = r;
        } else {
            int64_t half = G->even ? floordiv2(c + (c & 1)) : floordiv2(c - (c & 1));
            *u = c;
            *v = r - half;
        }
        return;
    }
    if (!G->stag) {
        *u = c;
        *v = r;
        return;
    }
    int64_t x, y;
    if (G->axis_y) {
        x = 2 * c + (G->even ? -(r & 1) : (r & 1));
        y = r;
    } else {
        x = c;
        y = 2 * r + (G->even ? -(c & 1) : (c & 1));
    }
    *u = floordiv2(x + y);
    *v = floordiv2(y - x);
}

/* The estimate of framed node v in ticks; G->far or more: the goal cannot be reached. */
static inline int64_t estimate(const Guide *G, int64_t v) {
    int64_t layer = v / G->pn, cell = v - layer * G->pn;
    int64_t r = cell / G->pw - G->pad, c = cell % G->pw - G->pad;
    if (G->n_terms) {
        int64_t node = layer * G->n + r * G->w + c, e = 0;
        for (Py_ssize_t k = 0; k < G->n_terms; k++) {
            int64_t x = G->fields[k][node] + G->offsets[k];
            if (x > e) e = x;
        }
        return e;
    }
    if (G->kind == H_NONE) return 0;
    int64_t u, w;
    axes(G, c, r, &u, &w);
    int64_t du = u - G->gu, dv = w - G->gv;
    if (G->kind == H_HEX) return imax(imax(iabs(du), iabs(dv)), iabs(du + dv)) * G->least;
    du = iabs(du);
    dv = iabs(dv);
    if (G->kind == H_MANHATTAN) return (du + dv) * G->least;
    int64_t hi = imax(du, dv);
    if (G->kind == H_ALTERNATE) {
        int64_t lo = imin(du, dv);
        if (G->layered) return (hi + ((lo + layer % G->n_par) >> 1)) * G->least;
        return (hi + (lo >> 1)) * G->least;
    }
    return hi * G->least;
}

typedef struct {
    Py_buffer b;
    int held;
} Buf;

static int get_buf(PyObject *obj, Buf *out, int writable, Py_ssize_t itemsize, const char *what) {
    out->held = 0;
    if (obj == Py_None) return 0;
    if (PyObject_GetBuffer(obj, &out->b, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    out->held = 1;
    if (out->b.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes expected, got %zd", what, itemsize,
                     out->b.itemsize);
        return -1;
    }
    return 0;
}

static void release(Buf *b) {
    if (b->held) PyBuffer_Release(&b->b);
    b->held = 0;
}

/* Reach nv from v at nd ticks if that is better; -1 when the heap cannot grow. */
static inline int relax(Heap *heap, const Guide *G, int32_t *dist, int32_t *pred, int64_t v,
                        int64_t nv, int64_t nd, int64_t lim) {
    if (nd > lim || nd >= dist[nv]) return 0;
    dist[nv] = (int32_t)nd;
    pred[nv] = (int32_t)v;
    int64_t e = estimate(G, nv);
    if (e >= G->far) return 0;
    return heap_push(heap, ((uint64_t)(nd + e) << 32) | (UINT32_MAX - (uint32_t)nd),
                     (int32_t)nv);
}

#define NBUF 15

PyDoc_STRVAR(search_doc,
             "search(tables..., dist, pred, src, goal_cell, limit, heuristic..., terms, settled) -> "
             "(end, expanded)\n\n"
             "A* from framed node src to any node on framed cell goal_cell (-1: none, a "
             "Dijkstra up to limit ticks, -1: no limit). Writes dist (int32) and pred "
             "(int32); returns the goal node reached (-1: none) and the nodes expanded, "
             "the first of them, in the order expanded, in settled (int32, or None). "
             "Called through engine.kernel.astar, whose AStarArgs documents the arguments.");

static PyObject *search(PyObject *self, PyObject *args) {
    PyObject *o_delta, *o_diag, *o_ticks, *o_adds, *o_blocked, *o_dist, *o_pred;
    PyObject *o_ia, *o_ib, *o_istand, *o_jsrc, *o_jstart, *o_jdst, *o_jticks, *o_terms;
    PyObject *o_settled;
    long long pn, pw, pad, n_par, n_sys, n_states, k_slots, src, goal_cell, limit;
    int square, axis_y, parity_state;
    int h_kind, h_stag, h_axis_y, h_even;
    long long least, gu, gv, w, n, far;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOLLLLLLLiiiLLLiiiiLLLLLLOO", &o_delta, &o_diag,
                          &o_ticks, &o_adds, &o_blocked, &o_dist, &o_pred, &o_ia, &o_ib,
                          &o_istand, &o_jsrc, &o_jstart, &o_jdst, &o_jticks, &pn, &pw, &pad,
                          &n_par, &n_sys, &n_states, &k_slots, &square, &axis_y, &parity_state,
                          &src, &goal_cell, &limit, &h_kind, &h_stag, &h_axis_y, &h_even,
                          &least, &gu, &gv, &w, &n, &far, &o_terms, &o_settled))
        return NULL;

    Buf bufs[NBUF];
    memset(bufs, 0, sizeof bufs);
    Buf *delta = &bufs[0], *diag = &bufs[1], *ticks_b = &bufs[2], *adds_b = &bufs[3];
    Buf *blocked_b = &bufs[4], *dist_b = &bufs[5], *pred_b = &bufs[6], *ia = &bufs[7];
    Buf *ib = &bufs[8], *istand = &bufs[9], *jsrc = &bufs[10], *jstart = &bufs[11];
    Buf *jdst = &bufs[12], *jticks = &bufs[13], *settled_b = &bufs[14];
    Py_buffer *term_bufs = NULL;
    Py_ssize_t n_terms = 0, held_terms = 0;
    const int64_t **fields = NULL;
    int64_t *offsets = NULL;
    Heap heap = {NULL, 0, 0};
    PyObject *result = NULL;

    if (get_buf(o_delta, delta, 0, 8, "delta") || get_buf(o_diag, diag, 0, 1, "diag") ||
        get_buf(o_ticks, ticks_b, 0, 4, "ticks") || get_buf(o_adds, adds_b, 0, 4, "adds") ||
        get_buf(o_blocked, blocked_b, 0, 2, "blocked") ||
        get_buf(o_dist, dist_b, 1, 4, "dist") || get_buf(o_pred, pred_b, 1, 4, "pred") ||
        get_buf(o_ia, ia, 0, 8, "in-place from") || get_buf(o_ib, ib, 0, 8, "in-place to") ||
        get_buf(o_istand, istand, 0, 8, "in-place ticks") ||
        get_buf(o_jsrc, jsrc, 0, 8, "jump sources") ||
        get_buf(o_jstart, jstart, 0, 8, "jump starts") ||
        get_buf(o_jdst, jdst, 0, 8, "jump targets") ||
        get_buf(o_jticks, jticks, 0, 8, "jump ticks") ||
        get_buf(o_settled, settled_b, 1, 4, "settled"))
        goto done;
    if (!delta->held || !diag->held || !ticks_b->held || !dist_b->held || !pred_b->held) {
        PyErr_SetString(PyExc_TypeError, "delta, diag, ticks, dist and pred are required");
        goto done;
    }
    Py_ssize_t size = (Py_ssize_t)(pn * n_states);
    if (delta->b.len / 8 != 2 * k_slots || diag->b.len != 2 * k_slots ||
        ticks_b->b.len / 4 != pn * n_sys || dist_b->b.len / 4 != size ||
        pred_b->b.len / 4 != size || (adds_b->held && adds_b->b.len / 4 != pn * n_sys) ||
        (blocked_b->held && blocked_b->b.len / 2 != pn) || k_slots > 16 || src < 0 ||
        src >= size || n_par < 1 || n_sys < 1 || n_states != n_par * n_sys) {
        PyErr_SetString(PyExc_ValueError, "search: tables of inconsistent sizes");
        goto done;
    }
    Py_ssize_t n_inplace = ia->held ? ia->b.len / 8 : 0;
    if (n_inplace && (!ib->held || !istand->held || ib->b.len / 8 != n_inplace ||
                      istand->b.len / 8 != n_inplace)) {
        PyErr_SetString(PyExc_ValueError, "search: in-place tables of inconsistent sizes");
        goto done;
    }
    Py_ssize_t n_jsrc = jsrc->held ? jsrc->b.len / 8 : 0;
    if (n_jsrc && (!jstart->held || !jdst->held || !jticks->held ||
                   jstart->b.len / 8 != n_jsrc + 1 || jdst->b.len != jticks->b.len ||
                   ((const int64_t *)jstart->b.buf)[n_jsrc] > jdst->b.len / 8)) {
        PyErr_SetString(PyExc_ValueError, "search: jump tables of inconsistent sizes");
        goto done;
    }

    if (!PySequence_Check(o_terms)) {
        PyErr_SetString(PyExc_TypeError, "terms: a sequence of (field, offset)");
        goto done;
    }
    n_terms = PySequence_Size(o_terms);
    if (n_terms < 0) goto done;
    if (n_terms) {
        term_bufs = calloc((size_t)n_terms, sizeof(Py_buffer));
        fields = calloc((size_t)n_terms, sizeof(int64_t *));
        offsets = calloc((size_t)n_terms, sizeof(int64_t));
        if (!term_bufs || !fields || !offsets) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t k = 0; k < n_terms; k++) {
            PyObject *item = PySequence_GetItem(o_terms, k);
            if (!item) goto done;
            PyObject *field;
            long long off;
            int ok = PyArg_ParseTuple(item, "OL", &field, &off);
            if (ok && PyObject_GetBuffer(field, &term_bufs[k], PyBUF_C_CONTIGUOUS) == 0) {
                held_terms++;
                if (term_bufs[k].itemsize != 8 || term_bufs[k].len / 8 != n * n_states) {
                    PyErr_SetString(PyExc_ValueError, "terms: fields of 8-byte ints, a node each");
                    ok = 0;
                }
            } else {
                ok = 0;
            }
            Py_DECREF(item);
            if (!ok) goto done;
            fields[k] = term_bufs[k].buf;
            offsets[k] = off;
        }
    }

    Guide G = {h_kind, h_stag, h_axis_y, h_even, n_states > 1, least, n_par, gu, gv,
               pw,     pad,    pn,       w,      n,           n_terms, fields, offsets, far};
    const int64_t *dl = delta->b.buf;
    const uint8_t *dg = diag->b.buf;
    const int32_t *ticks = ticks_b->b.buf;
    const int32_t *adds = adds_b->held ? adds_b->b.buf : NULL;
    const uint16_t *blocked = blocked_b->held ? blocked_b->b.buf : NULL;
    int32_t *dist = dist_b->b.buf;
    int32_t *pred = pred_b->b.buf;
    const int64_t *in_a = n_inplace ? ia->b.buf : NULL, *in_b = n_inplace ? ib->b.buf : NULL;
    const int64_t *in_t = n_inplace ? istand->b.buf : NULL;
    const int64_t *js = n_jsrc ? jsrc->b.buf : NULL, *jst = n_jsrc ? jstart->b.buf : NULL;
    const int64_t *jd = n_jsrc ? jdst->b.buf : NULL, *jt = n_jsrc ? jticks->b.buf : NULL;
    const int64_t lim = limit < 0 ? INT64_MAX : limit;
    int32_t *settled = settled_b->held ? settled_b->b.buf : NULL;
    const Py_ssize_t settled_cap = settled_b->held ? settled_b->b.len / 4 : 0;
    long long end = -1, expanded = 0;
    int failed = 0;

    Py_BEGIN_ALLOW_THREADS;
    dist[src] = 0;
    int64_t e0 = estimate(&G, src);
    if (e0 < far && heap_push(&heap, ((uint64_t)e0 << 32) | UINT32_MAX, (int32_t)src) < 0)
        failed = 1;
    while (!failed && heap.size) {
        Entry top = heap_pop(&heap);
        int64_t v = top.node;
        int64_t d = (int64_t)(UINT32_MAX - (uint32_t)(top.key & UINT32_MAX));
        if (d != dist[v]) continue; /* stale: reached cheaper since */
        int64_t layer = v / pn, cell = v - layer * pn;
        if (cell == goal_cell) {
            end = v;
            break;
        }
        if (expanded < settled_cap) settled[expanded] = (int32_t)v;
        expanded++;
        int64_t tp = 0;
        if (!square) tp = ((axis_y ? cell / pw : cell % pw) - pad) & 1;
        const int64_t *dt = dl + tp * k_slots;
        const uint8_t *dgt = dg + tp * k_slots;
        int64_t sys_off = (layer / n_par) * pn;
        int64_t p = layer % n_par;
        unsigned bits = blocked ? blocked[cell] : 0;
        for (int64_t k = 0; k < k_slots && !failed; k++) {
            if (bits >> k & 1) continue;
            int64_t nb = cell + dt[k];
            int64_t at = nb + sys_off;
            int64_t t = ticks[at];
            if (t < 0) continue;
            int64_t nv = layer * pn + nb;
            if (parity_state && dgt[k]) {
                if (p == 1) t *= 2;
                nv = (layer + 1 - 2 * p) * pn + nb;
            }
            if (adds) t += adds[at];
            failed = relax(&heap, &G, dist, pred, v, nv, d + t, lim);
        }
        for (Py_ssize_t i = 0; i < n_inplace && !failed; i++) {
            if (layer / n_par != in_a[i]) continue;
            int64_t nv = (in_b[i] * n_par + p) * pn + cell;
            failed = relax(&heap, &G, dist, pred, v, nv, d + in_t[i], lim);
        }
        if (n_jsrc && !failed) {
            Py_ssize_t lo = 0, hi = n_jsrc;
            while (lo < hi) {
                Py_ssize_t mid = (lo + hi) >> 1;
                if (js[mid] < v) lo = mid + 1;
                else hi = mid;
            }
            if (lo < n_jsrc && js[lo] == v) {
                for (int64_t j = jst[lo]; j < jst[lo + 1] && !failed; j++) {
                    int64_t nv = jd[j];
                    if (nv < 0 || nv >= size) continue;
                    failed = relax(&heap, &G, dist, pred, v, nv, d + jt[j], lim);
                }
            }
        }
    }
    Py_END_ALLOW_THREADS;
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(LL)", end, expanded);

done:
    free(heap.items);
    for (Py_ssize_t k = 0; k < held_terms; k++) PyBuffer_Release(&term_bufs[k]);
    free(term_bufs);
    free(fields);
    free(offsets);
    for (int i = 0; i < NBUF; i++) release(&bufs[i]);
    return result;
}

/* ---------------------------------------------------------------------- fields */

/* The field's heap is search()'s: a distance (a double >= 0, never NaN) keyed by its bits,
 * which order as the numbers do. */
static inline uint64_t key_of(double d) {
    uint64_t k;
    memcpy(&k, &d, sizeof k);
    return k;
}

static inline double distance_of(uint64_t k) {
    double d;
    memcpy(&d, &k, sizeof d);
    return d;
}

typedef struct {
    int64_t *items;
    Py_ssize_t size, cap;
} Bucket;

static int bucket_push(Bucket *b, int64_t node) {
    if (b->size == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 64;
        int64_t *items = realloc(b->items, (size_t)cap * sizeof(int64_t));
        if (!items) return -1;
        b->items = items;
        b->cap = cap;
    }
    b->items[b->size++] = node;
    return 0;
}

/* Dijkstra with a circular bucket queue over whole numbers of steps an edge (the ticks
 * over their common step, which the caller works out once per graph); the sources are the
 * heap's entries (all at 0). A node's distance is its steps times step: the whole-number
 * sums the heap would make, exactly, while they stay below 2**53 (the caller's check).
 * Returns the nodes settled, -1 out of memory, -2 a bad index or step (the error set). */
static long long dial(const int64_t *indptr, const int32_t *indices, const int32_t *steps,
                      Py_ssize_t n, double step, double *dist, Heap *sources) {
    Py_ssize_t m = indptr[n];
    int32_t span = 0;
    for (Py_ssize_t j = 0; j < m; j++) {
        if (steps[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "field: a negative step");
            return -2;
        }
        if (steps[j] > span) span = steps[j];
    }
    Py_ssize_t nb = 1;
    while (nb <= (Py_ssize_t)span) nb <<= 1; /* a power of two: the bucket by a mask */
    const int64_t mask = nb - 1;
    Bucket *buckets = calloc((size_t)nb, sizeof(Bucket));
    int64_t *at = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    long long settled = 0;
    if (!buckets || !at) {
        settled = -1;
        goto out;
    }
    for (Py_ssize_t v = 0; v < n; v++) at[v] = INT64_MAX;
    Py_ssize_t pending = 0;
    for (Py_ssize_t k = 0; k < sources->size; k++) {
        int64_t v = sources->items[k].node;
        at[v] = 0;
        if (bucket_push(&buckets[0], v) < 0) {
            settled = -1;
            goto out;
        }
        pending++;
    }
    sources->size = 0;
    for (int64_t cur = 0; pending; cur++) {
        Bucket *b = &buckets[cur & mask];
        while (b->size) {
            int64_t v = b->items[--b->size];
            pending--;
            if (at[v] != cur) continue; /* reached sooner since */
            settled++;
            dist[v] = (double)cur * step;
            for (int64_t j = indptr[v]; j < indptr[v + 1]; j++) {
                int64_t w = indices[j];
                if (w < 0 || w >= n) {
                    PyErr_SetString(PyExc_ValueError, "field: an index out of range");
                    settled = -2;
                    goto out;
                }
                int64_t nd = cur + steps[j];
                if (nd < at[w]) {
                    at[w] = nd;
                    if (bucket_push(&buckets[nd & mask], w) < 0) {
                        settled = -1;
                        goto out;
                    }
                    pending++;
                }
            }
        }
    }
out:
    if (buckets)
        for (Py_ssize_t k = 0; k < nb; k++) free(buckets[k].items);
    free(buckets);
    free(at);
    return settled;
}

PyDoc_STRVAR(field_doc,
             "field(indptr, indices, data, sources, dist[, steps, step]) -> settled\n\n"
             "Dijkstra over a CSR graph (indptr int64, indices int32, data float64 ticks >= 0) "
             "from every node of sources (int64) at once: writes into dist (float64, one a "
             "node, filled with inf by the caller) each node's least ticks from the nearest "
             "source, as scipy.sparse.csgraph.dijkstra(min_only=True) gives them. Floating "
             "point sums are monotone, so every correct Dijkstra ends at the same distances, "
             "bit for bit, whatever order it settles ties in. steps (int32, one an edge): "
             "data over step, where every tick is a whole multiple of step; a bucket queue "
             "then runs instead of the heap. Returns the nodes settled. "
             "Called by engine.sim.Profile.");

static PyObject *field(PyObject *self, PyObject *args) {
    PyObject *o_indptr, *o_indices, *o_data, *o_sources, *o_dist, *o_steps = Py_None;
    double step = 1.0;
    if (!PyArg_ParseTuple(args, "OOOOO|Od", &o_indptr, &o_indices, &o_data, &o_sources, &o_dist,
                          &o_steps, &step))
        return NULL;
    Buf bufs[6];
    for (int i = 0; i < 6; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    Heap heap = {NULL, 0, 0};
    if (get_buf(o_indptr, &bufs[0], 0, 8, "indptr") < 0 ||
        get_buf(o_indices, &bufs[1], 0, 4, "indices") < 0 ||
        get_buf(o_data, &bufs[2], 0, 8, "data") < 0 ||
        get_buf(o_sources, &bufs[3], 0, 8, "sources") < 0 ||
        get_buf(o_dist, &bufs[4], 1, 8, "dist") < 0 ||
        get_buf(o_steps, &bufs[5], 0, 4, "steps") < 0)
        goto done;
    const int64_t *indptr = bufs[0].b.buf, *sources = bufs[3].b.buf;
    const int32_t *indices = bufs[1].b.buf;
    const double *data = bufs[2].b.buf;
    double *dist = bufs[4].b.buf;
    Py_ssize_t n = bufs[4].b.len / 8, m = bufs[1].b.len / 4;
    Py_ssize_t n_src = bufs[3].b.len / 8;
    if (bufs[0].b.len / 8 != n + 1 || bufs[2].b.len / 8 != m ||
        (bufs[5].held && bufs[5].b.len / 4 != m)) {
        PyErr_SetString(PyExc_ValueError, "field: indptr, indices, data and dist disagree");
        goto done;
    }
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "field: more nodes than the heap numbers");
        goto done;
    }
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (indptr[i] < 0 || indptr[i] > m || (i && indptr[i] < indptr[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "field: indptr out of order");
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n_src; k++) {
        int64_t v = sources[k];
        if (v < 0 || v >= n) {
            PyErr_SetString(PyExc_ValueError, "field: a source out of range");
            goto done;
        }
        if (dist[v] > 0.0) {
            dist[v] = 0.0;
            if (heap_push(&heap, key_of(0.0), (int32_t)v) < 0) goto nomem;
        }
    }
    long long settled = 0;
    if (bufs[5].held) { /* whole-number ticks: a bucket queue (Dial's) */
        settled = dial(indptr, indices, bufs[5].b.buf, n, step, dist, &heap);
        if (settled == -2) goto done;
        if (settled < 0) goto nomem;
        result = PyLong_FromLongLong(settled);
        goto done;
    }
    while (heap.size) {
        Entry e = heap_pop(&heap);
        double at = distance_of(e.key);
        if (at > dist[e.node]) continue; /* a stale entry */
        settled++;
        for (int64_t j = indptr[e.node]; j < indptr[e.node + 1]; j++) {
            int64_t w = indices[j];
            if (w < 0 || w >= n) {
                PyErr_SetString(PyExc_ValueError, "field: an index out of range");
                goto done;
            }
            double nd = at + data[j];
            if (nd < dist[w]) {
                dist[w] = nd;
                if (heap_push(&heap, key_of(nd), (int32_t)w) < 0) goto nomem;
            }
        }
    }
    result = PyLong_FromLongLong(settled);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(heap.items);
    for (int i = 0; i < 6; i++) release(&bufs[i]);
    return result;
}

/* An index array's element: indptr and indices come as int32 (scipy's) or int64. */
static inline int64_t index_at(const void *a, int wide, int64_t i) {
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

static int index_buf(PyObject *obj, Buf *out, const char *what, int *wide) {
    out->held = 0;
    if (PyObject_GetBuffer(obj, &out->b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    out->held = 1;
    if (out->b.itemsize != 4 && out->b.itemsize != 8) {
        PyErr_Format(PyExc_TypeError, "%s: int32 or int64 items expected", what);
        return -1;
    }
    *wide = out->b.itemsize == 8;
    return 0;
}

PyDoc_STRVAR(reach_within_doc,
             "reach_within(indptr, indices, starts, allowed, out) -> nodes reached\n\n"
             "Which cells a token reaches over a CSR graph (indptr and indices int32 or int64) whose "
             "node k stands on cell k % n, n = len(out), from the nodes starts (int64), "
             "entering only nodes whose cell is allowed (allowed: uint8 or bool, one a "
             "cell): sets out[cell] (uint8 or bool, zeroed by the caller) for every cell of "
             "a node reached, the start nodes' cells included. Returns the nodes reached. "
             "Called by engine.policies.region.reached_safely, whose Python loop it equals.");

static PyObject *reach_within(PyObject *self, PyObject *args) {
    PyObject *o_indptr, *o_indices, *o_starts, *o_allowed, *o_out;
    if (!PyArg_ParseTuple(args, "OOOOO", &o_indptr, &o_indices, &o_starts, &o_allowed, &o_out))
        return NULL;
    Buf bufs[5];
    for (int i = 0; i < 5; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    int64_t *stack = NULL;
    uint8_t *seen = NULL;
    int wide_p = 1, wide_i = 1;
    if (index_buf(o_indptr, &bufs[0], "indptr", &wide_p) < 0 ||
        index_buf(o_indices, &bufs[1], "indices", &wide_i) < 0 ||
        get_buf(o_starts, &bufs[2], 0, 8, "starts") < 0 ||
        get_buf(o_allowed, &bufs[3], 0, 1, "allowed") < 0 ||
        get_buf(o_out, &bufs[4], 1, 1, "out") < 0)
        goto done;
    if (!bufs[0].held || !bufs[1].held || !bufs[2].held || !bufs[3].held || !bufs[4].held) {
        PyErr_SetString(PyExc_TypeError, "reach_within: no argument may be None");
        goto done;
    }
    const void *indptr = bufs[0].b.buf, *indices = bufs[1].b.buf;
    const int64_t *starts = bufs[2].b.buf;
    const uint8_t *allowed = bufs[3].b.buf;
    uint8_t *out = bufs[4].b.buf;
    Py_ssize_t nodes = bufs[0].b.len / bufs[0].b.itemsize - 1;
    Py_ssize_t m = bufs[1].b.len / bufs[1].b.itemsize;
    Py_ssize_t n = bufs[4].b.len, n_start = bufs[2].b.len / 8;
    if (nodes < 0 || n <= 0 || bufs[3].b.len != n || nodes % n != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "reach_within: indptr, allowed and out disagree (nodes a whole "
                        "multiple of the cells)");
        goto done;
    }
    for (Py_ssize_t i = 0; i <= nodes; i++) {
        int64_t at = index_at(indptr, wide_p, i);
        if (at < 0 || at > m || (i && at < index_at(indptr, wide_p, i - 1))) {
            PyErr_SetString(PyExc_ValueError, "reach_within: indptr out of order");
            goto done;
        }
    }
    seen = calloc((size_t)nodes + 1, 1);
    stack = malloc(((size_t)nodes + 1) * sizeof(int64_t));
    if (!seen || !stack) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t top = 0, reached = 0;
    for (Py_ssize_t k = 0; k < n_start; k++) {
        int64_t v = starts[k];
        if (v < 0 || v >= nodes) {
            PyErr_SetString(PyExc_ValueError, "reach_within: a start out of range");
            goto done;
        }
        if (!seen[v]) {
            seen[v] = 1;
            out[v % n] = 1;
            stack[top++] = v;
            reached++;
        }
    }
    while (top) {
        int64_t v = stack[--top];
        int64_t hi = index_at(indptr, wide_p, v + 1);
        for (int64_t j = index_at(indptr, wide_p, v); j < hi; j++) {
            int64_t w = index_at(indices, wide_i, j);
            if (w < 0 || w >= nodes) {
                PyErr_SetString(PyExc_ValueError, "reach_within: an index out of range");
                goto done;
            }
            if (!seen[w] && allowed[w % n]) {
                seen[w] = 1;
                out[w % n] = 1;
                stack[top++] = w;
                reached++;
            }
        }
    }
    result = PyLong_FromSsize_t(reached);
done:
    free(stack);
    free(seen);
    for (int i = 0; i < 5; i++) release(&bufs[i]);
    return result;
}

PyDoc_STRVAR(held_region_doc,
             "held_region(indptr, indices, data, start, deadline, denominator, cap) -> cells\n\n"
             "How many cells a token holds from node start of a CSR graph (indptr and "
             "indices int32 or int64, data float64 ticks >= 0) whose node k stands on cell "
             "k % n, n = len(deadline) (float64 turns, one a cell): a Dijkstra from start "
             "that enters a node only at a time (ticks / denominator) before its cell's "
             "deadline, counting the cells of the nodes it settles; 0 where start's own "
             "deadline is not above 0; with cap > 0, at most cap. Float sums as Python's, "
             "so the cells are engine.policies.region.held_region's twin's, exactly.");

static PyObject *held_region(PyObject *self, PyObject *args) {
    PyObject *o_indptr, *o_indices, *o_data, *o_deadline;
    long long start_arg, cap;
    double denominator;
    if (!PyArg_ParseTuple(args, "OOOLOdL", &o_indptr, &o_indices, &o_data, &start_arg,
                          &o_deadline, &denominator, &cap))
        return NULL;
    Buf bufs[4];
    for (int i = 0; i < 4; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    Heap heap = {NULL, 0, 0};
    double *best = NULL;
    uint8_t *done = NULL, *held = NULL;
    int wide_p = 1, wide_i = 1;
    if (index_buf(o_indptr, &bufs[0], "indptr", &wide_p) < 0 ||
        index_buf(o_indices, &bufs[1], "indices", &wide_i) < 0 ||
        get_buf(o_data, &bufs[2], 0, 8, "data") < 0 ||
        get_buf(o_deadline, &bufs[3], 0, 8, "deadline") < 0)
        goto done;
    if (!bufs[2].held || !bufs[3].held) {
        PyErr_SetString(PyExc_TypeError, "held_region: data and deadline are needed");
        goto done;
    }
    const void *indptr = bufs[0].b.buf, *indices = bufs[1].b.buf;
    const double *data = bufs[2].b.buf, *deadline = bufs[3].b.buf;
    Py_ssize_t nodes = bufs[0].b.len / bufs[0].b.itemsize - 1;
    Py_ssize_t m = bufs[1].b.len / bufs[1].b.itemsize, n = bufs[3].b.len / 8;
    if (nodes < 0 || n <= 0 || nodes % n != 0 || bufs[2].b.len / 8 != m ||
        nodes >= INT32_MAX || !(denominator > 0.0)) {
        PyErr_SetString(PyExc_ValueError,
                        "held_region: indptr, indices, data and deadline disagree");
        goto done;
    }
    for (Py_ssize_t i = 0; i <= nodes; i++) {
        int64_t a = index_at(indptr, wide_p, i);
        if (a < 0 || a > m || (i && a < index_at(indptr, wide_p, i - 1))) {
            PyErr_SetString(PyExc_ValueError, "held_region: indptr out of order");
            goto done;
        }
    }
    if (start_arg < 0 || start_arg >= nodes) {
        PyErr_SetString(PyExc_ValueError, "held_region: start out of range");
        goto done;
    }
    int64_t start = (int64_t)start_arg;
    if (!(0.0 < deadline[start % n])) {
        result = PyLong_FromLong(0);
        goto done;
    }
    best = malloc((size_t)nodes * sizeof(double));
    done = calloc((size_t)nodes, 1);
    held = calloc((size_t)n, 1);
    if (!best || !done || !held) goto nomem;
    for (Py_ssize_t i = 0; i < nodes; i++) best[i] = INFINITY;
    best[start] = 0.0;
    if (heap_push(&heap, key_of(0.0), (int32_t)start) < 0) goto nomem;
    long long count = 0;
    while (heap.size) {
        Entry e = heap_pop(&heap);
        int64_t v = e.node;
        double d = distance_of(e.key);
        if (done[v] || d > best[v]) continue;
        done[v] = 1;
        if (!held[v % n]) {
            held[v % n] = 1;
            count++;
            if (cap > 0 && count >= cap) break;
        }
        int64_t lo = index_at(indptr, wide_p, v), hi = index_at(indptr, wide_p, v + 1);
        for (int64_t j = lo; j < hi; j++) {
            int64_t w = index_at(indices, wide_i, j);
            if (w < 0 || w >= nodes) {
                PyErr_SetString(PyExc_ValueError, "held_region: an index out of range");
                goto done;
            }
            double nd = d + data[j];
            if (done[w] || !(nd < best[w])) continue;
            if (nd / denominator < deadline[w % n]) {
                best[w] = nd;
                if (heap_push(&heap, key_of(nd), (int32_t)w) < 0) goto nomem;
            }
        }
    }
    result = PyLong_FromLongLong(count);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(heap.items);
    free(best);
    free(done);
    free(held);
    for (int i = 0; i < 4; i++) release(&bufs[i]);
    return result;
}

PyDoc_STRVAR(csv_u32_doc,
             "csv_u32(text, out) -> count or -1\n\n"
             "Parse a Tiled csv layer's text (an ASCII str) of plain whole numbers into out, a "
             "writable buffer of uint32 (one a cell): each number is 1 to 10 digits, at most "
             "0xFFFFFFFF, with spaces, tabs and line ends before or after it, the numbers "
             "separated by single commas. Returns how many were written when the text is "
             "exactly as many such numbers as out holds; -1 for anything else (a sign, "
             "another character, an empty field, a number too long or too large, fewer or "
             "more numbers than out holds): the caller then reads the text with numpy, which "
             "gives these numbers where both read it and says what is wrong otherwise. "
             "Called by engine.tiled.layerdata.");

static inline int csv_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static PyObject *csv_u32(PyObject *self, PyObject *args) {
    PyObject *text, *o_out;
    if (!PyArg_ParseTuple(args, "UO", &text, &o_out)) return NULL;
    Py_buffer out;
    if (PyObject_GetBuffer(o_out, &out, PyBUF_WRITABLE | PyBUF_FORMAT) < 0) return NULL;
    long long written = -1;
    if (out.itemsize != 4 || !PyUnicode_IS_ASCII(text)) goto done;
    const unsigned char *s = (const unsigned char *)PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, k = 0, cap = out.len / 4;
    uint32_t *dst = (uint32_t *)out.buf;
    for (;;) {
        while (i < n && csv_space(s[i])) i++;
        Py_ssize_t start = i;
        uint64_t v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 11) v = v * 10 + (s[i++] - '0');
        if (i == start || i - start > 10 || v > 0xFFFFFFFFull || k == cap) goto done;
        dst[k++] = (uint32_t)v;
        while (i < n && csv_space(s[i])) i++;
        if (i == n) break;
        if (s[i] != ',') goto done;
        i++;
    }
    if (k == cap) written = k;
done:
    PyBuffer_Release(&out);
    return PyLong_FromLongLong(written);
}

/* ------------------------------------------------------- turnstate: fields of any ticks */

/* Dinitz's buckets: a Dijkstra over float ticks whose least edge is at least twice the
 * bucket width. A node's bucket is floor(distance / width); an edge reaches at least one
 * bucket further, so every node of the bucket under way holds its least distance when
 * taken, in whatever order, and each distance is the sum the heap would make (the least of
 * fl(d[u] + t) over final d[u]): scipy's distances, bit for bit. */

typedef struct {
    int32_t *items;
    Py_ssize_t size, cap;
} NodeList;

static int nodes_push(NodeList *b, int32_t node) {
    if (b->size == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 32;
        int32_t *items = realloc(b->items, (size_t)cap * sizeof(int32_t));
        if (!items) return -1;
        b->items = items;
        b->cap = cap;
    }
    b->items[b->size++] = node;
    return 0;
}

/* The most buckets a field's distances may number (width and nodes checked against it):
 * far below 2**53, so a bucket's number is exact and the margin of one bucket an edge holds
 * under rounding. */
#define SPREAD_MOST_BUCKETS 1099511627776.0 /* 2**40 */

PyDoc_STRVAR(field_spread_doc,
             "field_spread(indptr, indices, data, sources, dist, width) -> settled\n\n"
             "field()'s distances where the ticks are not whole multiples of one step: a "
             "Dijkstra over a CSR graph (indptr int64, indices int32, data float64 ticks) from "
             "every node of sources (int64) at once into dist (float64, one a node, filled "
             "with inf by the caller), by buckets of width ticks (Dinitz's): every tick must "
             "be finite and at least 2 * width > 0, and nodes * (largest tick / width) "
             "below 2**40 (ValueError otherwise). The same distances as "
             "scipy.sparse.csgraph.dijkstra(min_only=True), bit for bit. Returns the nodes "
             "settled. Called by engine.sim.Profile (engine.sim.spread).");

static PyObject *field_spread(PyObject *self, PyObject *args) {
    PyObject *o_indptr, *o_indices, *o_data, *o_sources, *o_dist;
    double width;
    if (!PyArg_ParseTuple(args, "OOOOOd", &o_indptr, &o_indices, &o_data, &o_sources, &o_dist,
                          &width))
        return NULL;
    Buf bufs[5];
    for (int i = 0; i < 5; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    NodeList *buckets = NULL;
    uint8_t *taken = NULL;
    Py_ssize_t nb = 0;
    if (get_buf(o_indptr, &bufs[0], 0, 8, "indptr") < 0 ||
        get_buf(o_indices, &bufs[1], 0, 4, "indices") < 0 ||
        get_buf(o_data, &bufs[2], 0, 8, "data") < 0 ||
        get_buf(o_sources, &bufs[3], 0, 8, "sources") < 0 ||
        get_buf(o_dist, &bufs[4], 1, 8, "dist") < 0)
        goto done;
    for (int i = 0; i < 5; i++) {
        if (!bufs[i].held) {
            PyErr_SetString(PyExc_TypeError, "field_spread: no argument may be None");
            goto done;
        }
    }
    const int64_t *indptr = bufs[0].b.buf, *sources = bufs[3].b.buf;
    const int32_t *indices = bufs[1].b.buf;
    const double *data = bufs[2].b.buf;
    double *dist = bufs[4].b.buf;
    Py_ssize_t n = bufs[4].b.len / 8, m = bufs[1].b.len / 4;
    Py_ssize_t n_src = bufs[3].b.len / 8;
    if (bufs[0].b.len / 8 != n + 1 || bufs[2].b.len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "field_spread: indptr, indices, data and dist disagree");
        goto done;
    }
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "field_spread: more nodes than it numbers");
        goto done;
    }
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (indptr[i] < 0 || indptr[i] > m || (i && indptr[i] < indptr[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "field_spread: indptr out of order");
            goto done;
        }
    }
    double most = 0.0;
    int short_edge = !(width > 0.0) || !(width - width == 0.0); /* (inf - inf: NaN) */
    for (Py_ssize_t j = 0; j < m; j++) {
        double t = data[j];
        short_edge |= !(t >= 2.0 * width) || !(t - t == 0.0);
        if (t > most) most = t;
    }
    if (short_edge || (double)(n + 1) * (most / width + 2.0) >= SPREAD_MOST_BUCKETS) {
        PyErr_SetString(PyExc_ValueError,
                        "field_spread: a tick under twice the width, not finite, or too many "
                        "buckets");
        goto done;
    }
    nb = 1;
    while ((double)nb <= most / width + 2.0) nb <<= 1; /* a power of two: the bucket by a mask */
    const int64_t mask = nb - 1;
    buckets = calloc((size_t)nb, sizeof(NodeList));
    taken = calloc((size_t)(n ? n : 1), 1);
    if (!buckets || !taken) goto nomem;
    Py_ssize_t pending = 0;
    for (Py_ssize_t k = 0; k < n_src; k++) {
        int64_t v = sources[k];
        if (v < 0 || v >= n) {
            PyErr_SetString(PyExc_ValueError, "field_spread: a source out of range");
            goto done;
        }
        if (dist[v] > 0.0) {
            dist[v] = 0.0;
            if (nodes_push(&buckets[0], (int32_t)v) < 0) goto nomem;
            pending++;
        }
    }
    long long settled = 0;
    for (int64_t cur = 0; pending; cur++) {
        NodeList *b = &buckets[cur & mask];
        while (b->size) {
            int32_t v = b->items[--b->size];
            pending--;
            if (taken[v]) continue; /* reached sooner, and taken from an earlier bucket */
            taken[v] = 1;
            settled++;
            double at = dist[v];
            for (int64_t j = indptr[v]; j < indptr[v + 1]; j++) {
                int32_t w = indices[j];
                if (w < 0 || w >= n) {
                    PyErr_SetString(PyExc_ValueError, "field_spread: an index out of range");
                    goto done;
                }
                double nd = at + data[j];
                if (nd < dist[w]) {
                    dist[w] = nd;
                    if (nodes_push(&buckets[(int64_t)(nd / width) & mask], w) < 0) goto nomem;
                    pending++;
                }
            }
        }
    }
    result = PyLong_FromLongLong(settled);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    if (buckets)
        for (Py_ssize_t k = 0; k < nb; k++) free(buckets[k].items);
    free(buckets);
    free(taken);
    for (int i = 0; i < 5; i++) release(&bufs[i]);
    return result;
}

/* ---- json_rows: a table's rows as JSON text in one block ----
 *
 * A long path's --json document is millions of records of the same few shapes. Each shape
 * is a template: literal pieces of text between the values of some columns (the record's
 * keys, brackets and indentation as the standard library's encoder writes them). Writing
 * a block of rows here, rather than each record through the encoder, is what makes a maze
 * path's gigabytes of text affordable. engine.report.blocktext builds the templates and
 * holds a Python twin (rows_plain) that tests/test_long_path.py holds equal to this. */

typedef struct {
    Py_ssize_t n_refs;
    const char **part;
    Py_ssize_t *len;
    const unsigned char *ref;
    Py_ssize_t bound; /* the longest a row of this template can be */
} RowTemplate;

typedef struct {
    Buf buf;
    int is_double;
    Py_ssize_t itemsize;
    uint64_t last_bits; /* a one-entry memo of the last double written */
    char last[40];
    Py_ssize_t last_len;
} RowColumn;

static Py_ssize_t put_int(char *p, int64_t v) {
    char tmp[24];
    Py_ssize_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    Py_ssize_t k = 0;
    if (v < 0) p[k++] = '-';
    while (n) p[k++] = tmp[--n];
    return k;
}

/* The digits after the point of a float v from 1 to 2**52, whole part q: the values that
 * read back to v lie strictly between q and q + 1, so float.__repr__ writes q's digits,
 * ".", then the fewest digits of a fraction in that interval (the nearest of them), which
 * depend only on v's fraction (v - q, exact) and the interval's width (v's binary
 * exponent), not on q (q is an even number of v's units, so whether the interval's ends
 * count is the fraction's). A long path's cumulative turns are a few fractions (ticks over
 * a turn's ticks) over millions of whole turns: their digits are kept here by (fraction,
 * exponent), found once by PyOS_double_to_string. */
#define FRACTION_SLOTS 4096
typedef struct {
    uint64_t frac_bits;
    int exponent; /* 0: an empty slot */
    int len;
    char digits[24];
} FractionDigits;
static FractionDigits fraction_digits[FRACTION_SLOTS];

static Py_ssize_t put_repr(char *p, double v) {
    char *s = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!s) return -1;
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    if (n >= 40) {
        PyMem_Free(s);
        PyErr_SetString(PyExc_ValueError, "json_rows: a float's text is too long");
        return -1;
    }
    memcpy(p, s, (size_t)n);
    PyMem_Free(s);
    return n;
}

/* As float.__repr__ (the shortest text that reads back the same, ".0" added to a whole
 * number), where p has room for 40 characters. */
static Py_ssize_t put_float(char *p, double v) {
    if (!(v >= 1.0 && v < 4503599627370496.0)) return put_repr(p, v); /* 1 <= v < 2**52 */
    double q = floor(v), frac = v - q;
    int exponent;
    frexp(v, &exponent);
    /* Below 2**52 a fraction is a whole number of the float's units (at most half a
     * unit), so the interval, half a unit each side, never reaches q or q + 1. */
    uint64_t bits;
    memcpy(&bits, &frac, 8);
    uint64_t h = bits + (uint64_t)exponent * 0x9E3779B97F4A7C15ull; /* splitmix64's mix */
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    FractionDigits *slot = &fraction_digits[(h ^ (h >> 31)) % FRACTION_SLOTS];
    Py_ssize_t k = put_int(p, (int64_t)q);
    p[k++] = '.';
    if (slot->exponent == exponent && slot->frac_bits == bits) {
        memcpy(p + k, slot->digits, (size_t)slot->len);
        return k + slot->len;
    }
    Py_ssize_t n = put_repr(p, v);
    if (n < 0) return -1;
    /* The text is q's digits and a point where the reasoning above holds; else it is kept
     * as written, and not remembered. */
    if (n > k && n - k < (Py_ssize_t)sizeof(slot->digits) && p[k - 1] == '.') {
        char head[24];
        Py_ssize_t hk = put_int(head, (int64_t)q);
        if (hk == k - 1 && memcmp(head, p, (size_t)hk) == 0) {
            slot->frac_bits = bits;
            slot->exponent = exponent;
            slot->len = (int)(n - k);
            memcpy(slot->digits, p + k, (size_t)(n - k));
        }
    }
    return n;
}

/* put_float, "null" where the value is not finite (engine.report.finite's rule); a
 * column's last value is remembered (a step's own time is the same for most steps). */
static Py_ssize_t put_double(char *p, RowColumn *col, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    if (col->last_len && bits == col->last_bits) {
        memcpy(p, col->last, (size_t)col->last_len);
        return col->last_len;
    }
    Py_ssize_t n;
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        n = 4;
    } else {
        n = put_float(p, v);
        if (n < 0) return -1;
    }
    col->last_bits = bits;
    col->last_len = n;
    memcpy(col->last, p, (size_t)n);
    return n;
}

static int64_t int_at(const RowColumn *c, Py_ssize_t i) {
    const char *b = c->buf.b.buf;
    switch (c->itemsize) {
    case 1: return ((const int8_t *)b)[i];
    case 2: return ((const int16_t *)b)[i];
    case 4: return ((const int32_t *)b)[i];
    default: return ((const int64_t *)b)[i];
    }
}

static int column_kind(RowColumn *c, Py_ssize_t need) {
    const char *f = c->buf.b.format ? c->buf.b.format : "B";
    char k = f[strlen(f) - 1];
    if (f[0] == '>' || f[0] == '!' || c->buf.b.ndim > 1) k = 0;
    c->itemsize = c->buf.b.itemsize;
    c->is_double = k == 'd' && c->itemsize == 8;
    if (!c->is_double && !(strchr("bhilq", k) && k &&
                           (c->itemsize == 1 || c->itemsize == 2 || c->itemsize == 4 ||
                            c->itemsize == 8))) {
        PyErr_Format(PyExc_TypeError, "json_rows: a column of signed ints or float64 expected, "
                     "not format '%s'", f);
        return -1;
    }
    if (c->buf.b.len / c->itemsize < need) {
        PyErr_SetString(PyExc_ValueError, "json_rows: a column is shorter than the rows asked");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(json_rows_doc,
             "json_rows(templates, kind, columns, lo, hi) -> str\n\n"
             "Rows lo..hi of a table as text: row i is written by template kind[i] (kind: a "
             "buffer of signed ints, or None: template 0 for every row). A template is a "
             "pair (parts, refs): parts a tuple of ASCII str, refs a bytes of column numbers, "
             "len(parts) == len(refs) + 1; the row is parts[0], the value of column refs[0] "
             "at row i, parts[1], ... parts[-1]. A column is a buffer of signed ints (written "
             "in decimal) or of float64 (as float.__repr__, null where not finite). "
             "engine.report.blocktext.rows_plain is its Python twin.");

static PyObject *json_rows(PyObject *self, PyObject *args) {
    PyObject *o_templates, *o_kind, *o_cols;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "O!OO!nn", &PyTuple_Type, &o_templates, &o_kind, &PyTuple_Type,
                          &o_cols, &lo, &hi))
        return NULL;
    Py_ssize_t n_t = PyTuple_GET_SIZE(o_templates), n_c = PyTuple_GET_SIZE(o_cols);
    PyObject *result = NULL;
    RowTemplate *tpl = NULL;
    RowColumn *cols = NULL;
    Buf kind;
    kind.held = 0;
    char *out = NULL;
    Py_ssize_t kind_size = 0;
    if (lo < 0 || hi < lo || n_t < 1) {
        PyErr_SetString(PyExc_ValueError, "json_rows: rows lo..hi with 0 <= lo <= hi, and a template");
        return NULL;
    }
    tpl = calloc((size_t)n_t, sizeof(RowTemplate));
    cols = calloc((size_t)(n_c ? n_c : 1), sizeof(RowColumn));
    if (!tpl || !cols) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < n_c; c++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(o_cols, c), &cols[c].buf.b,
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        cols[c].buf.held = 1;
        if (column_kind(&cols[c], hi) < 0) goto done;
    }
    Py_ssize_t bound = 0;
    for (Py_ssize_t t = 0; t < n_t; t++) {
        PyObject *pair = PyTuple_GET_ITEM(o_templates, t), *parts, *refs;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyTuple_Check(parts = PyTuple_GET_ITEM(pair, 0)) ||
            !PyBytes_Check(refs = PyTuple_GET_ITEM(pair, 1)) ||
            PyTuple_GET_SIZE(parts) != PyBytes_GET_SIZE(refs) + 1) {
            PyErr_SetString(PyExc_TypeError, "json_rows: a template is (parts, refs) with "
                            "len(parts) == len(refs) + 1");
            goto done;
        }
        RowTemplate *T = &tpl[t];
        T->n_refs = PyBytes_GET_SIZE(refs);
        T->ref = (const unsigned char *)PyBytes_AS_STRING(refs);
        T->part = calloc((size_t)T->n_refs + 1, sizeof(char *));
        T->len = calloc((size_t)T->n_refs + 1, sizeof(Py_ssize_t));
        if (!T->part || !T->len) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t j = 0; j <= T->n_refs; j++) {
            PyObject *s = PyTuple_GET_ITEM(parts, j);
            if (!PyUnicode_Check(s) || !PyUnicode_IS_ASCII(s)) {
                PyErr_SetString(PyExc_TypeError, "json_rows: a template's parts are ASCII str");
                goto done;
            }
            T->part[j] = (const char *)PyUnicode_DATA(s);
            T->len[j] = PyUnicode_GET_LENGTH(s);
            T->bound += T->len[j];
        }
        for (Py_ssize_t j = 0; j < T->n_refs; j++) {
            if (T->ref[j] >= n_c) {
                PyErr_SetString(PyExc_ValueError, "json_rows: a template names a column not given");
                goto done;
            }
            T->bound += 40;
        }
        if (T->bound > bound) bound = T->bound;
    }
    if (o_kind != Py_None) {
        if (PyObject_GetBuffer(o_kind, &kind.b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
        kind.held = 1;
        RowColumn probe;
        probe.buf = kind;
        if (column_kind(&probe, hi) < 0 || probe.is_double) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "json_rows: kind is a buffer of signed ints");
            goto done;
        }
        kind_size = probe.itemsize;
    }
    if (hi > lo && bound > PY_SSIZE_T_MAX / (hi - lo)) {
        PyErr_NoMemory();
        goto done;
    }
    out = malloc((size_t)(bound * (hi - lo)) + 1);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t at = 0;
    RowColumn kcol;
    kcol.buf = kind;
    kcol.itemsize = kind_size;
    for (Py_ssize_t i = lo; i < hi; i++) {
        int64_t k = kind_size ? int_at(&kcol, i) : 0;
        if (k < 0 || k >= n_t) {
            PyErr_SetString(PyExc_ValueError, "json_rows: a row's kind names no template");
            goto done;
        }
        const RowTemplate *T = &tpl[k];
        for (Py_ssize_t j = 0; j < T->n_refs; j++) {
            memcpy(out + at, T->part[j], (size_t)T->len[j]);
            at += T->len[j];
            RowColumn *c = &cols[T->ref[j]];
            Py_ssize_t w;
            if (c->is_double) {
                w = put_double(out + at, c, ((const double *)c->buf.b.buf)[i]);
                if (w < 0) goto done;
            } else {
                w = put_int(out + at, int_at(c, i));
            }
            at += w;
        }
        memcpy(out + at, T->part[T->n_refs], (size_t)T->len[T->n_refs]);
        at += T->len[T->n_refs];
    }
    result = PyUnicode_New(at, 127);
    if (result) memcpy(PyUnicode_DATA(result), out, (size_t)at);
done:
    free(out);
    if (tpl) {
        for (Py_ssize_t t = 0; t < n_t; t++) {
            free((void *)tpl[t].part);
            free(tpl[t].len);
        }
    }
    free(tpl);
    if (cols)
        for (Py_ssize_t c = 0; c < n_c; c++) release(&cols[c].buf);
    free(cols);
    release(&kind);
    return result;
}


PyDoc_STRVAR(pred_chain_doc,
             "pred_chain(pred, node, out) -> length\n\n"
             "The chain of predecessors from node back to the start (pred: int32 or int64, "
             "-1 at the start): its length, nodes counted from node to the start inclusive; "
             "with out (a writable int32 or int64 buffer of exactly that length, or None: "
             "only counted), written start first. A chain longer than pred (a cycle) is a "
             "ValueError. engine.search.frontier.chain_plain is its Python twin.");

static PyObject *pred_chain(PyObject *self, PyObject *args) {
    PyObject *o_pred, *o_out;
    long long node;
    if (!PyArg_ParseTuple(args, "OLO", &o_pred, &node, &o_out)) return NULL;
    Buf bufs[2];
    bufs[0].held = bufs[1].held = 0;
    PyObject *result = NULL;
    int wide_p = 1, wide_o = 1;
    if (index_buf(o_pred, &bufs[0], "pred", &wide_p) < 0) goto done;
    if (o_out != Py_None) {
        if (PyObject_GetBuffer(o_out, &bufs[1].b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        bufs[1].held = 1;
        if (bufs[1].b.itemsize != 4 && bufs[1].b.itemsize != 8) {
            PyErr_SetString(PyExc_TypeError, "pred_chain: out of int32 or int64 expected");
            goto done;
        }
        wide_o = bufs[1].b.itemsize == 8;
    }
    const void *pred = bufs[0].b.buf;
    int64_t size = bufs[0].b.len / bufs[0].b.itemsize, length = 0;
    for (int64_t v = node; v >= 0; v = index_at(pred, wide_p, v)) {
        if (v >= size || length > size) {
            PyErr_SetString(PyExc_ValueError, "pred_chain: a node out of range, or a cycle");
            goto done;
        }
        length++;
    }
    if (bufs[1].held) {
        if (bufs[1].b.len / bufs[1].b.itemsize != length) {
            PyErr_SetString(PyExc_ValueError, "pred_chain: out is not the chain's length");
            goto done;
        }
        int64_t at = length;
        for (int64_t v = node; v >= 0; v = index_at(pred, wide_p, v)) {
            at--;
            if (wide_o)
                ((int64_t *)bufs[1].b.buf)[at] = v;
            else
                ((int32_t *)bufs[1].b.buf)[at] = (int32_t)v;
        }
    }
    result = PyLong_FromLongLong(length);
done:
    release(&bufs[0]);
    release(&bufs[1]);
    return result;
}


/* ---------------------------------------------------------------------- a field toward a node
 *
 * field_toward() is field()'s Dijkstra from the sources over a reverse graph of whole-number
 * steps, guided toward one node (A*: a node's key is its steps plus kappa times the
 * Chebyshev distance, on (index % width, index / width) of cells, from its cell to the
 * start's; kappa no more than any edge's steps over its cells' distance, so the estimate is
 * consistent and every node is settled at its exact distance). It stops once the walk down
 * the field from the start (engine.sim.fields.Field.step, edge by edge over the forward
 * graph: the least data + distance, ties to the first edge, while the distance is > 0) is
 * proven to be the whole field's: every neighbour of a node on that way is settled, or
 * its least possible distance (the open keys' least, less its estimate) already makes it
 * worse than the step taken. Nodes not settled are left at inf. */

/* The bounded searches' queue: whole-number keys, taken least first, each key pushed at least
 * the last one taken (their estimates are consistent, which the searches check edge by edge),
 * so a key is a bucket of a ring of KQ_RING from the last key taken, and a key past the ring
 * waits in a heap until the ring comes to it. A bucket's entries come out last in first. */
#define KQ_RING 1024

typedef struct {
    NodeList ring[KQ_RING];
    int64_t cur;     /* every key held is at least cur; the ring holds cur .. cur + KQ_RING - 1 */
    Py_ssize_t held; /* entries in the ring */
    Heap far;        /* entries of keys past the ring */
} KeyQueue;

static void kq_clear(KeyQueue *q) {
    for (int k = 0; k < KQ_RING; k++) q->ring[k].size = 0;
    q->cur = 0, q->held = 0, q->far.size = 0;
}

/* 0, -1 out of memory, -3 a key below the last taken (an estimate not consistent). */
static inline int kq_push(KeyQueue *q, int64_t key, int32_t node) {
    if (key < q->cur) return -3;
    if (key - q->cur < KQ_RING) {
        if (nodes_push(&q->ring[key & (KQ_RING - 1)], node) < 0) return -1;
        q->held++;
        return 0;
    }
    return heap_push(&q->far, (uint64_t)key, node);
}

/* The least key held (its bucket is then ring[key % KQ_RING]), INT64_MAX when none is; -1
 * out of memory. */
static int64_t kq_least(KeyQueue *q) {
    for (;;) {
        while (q->far.size && (int64_t)q->far.items[0].key - q->cur < KQ_RING) {
            Entry e = heap_pop(&q->far);
            if (nodes_push(&q->ring[e.key & (KQ_RING - 1)], e.node) < 0) return -1;
            q->held++;
        }
        if (q->ring[q->cur & (KQ_RING - 1)].size) return q->cur;
        if (q->held)
            q->cur++;
        else if (q->far.size)
            q->cur = (int64_t)q->far.items[0].key;
        else
            return INT64_MAX;
    }
}

/* Takes the last entry of the least key's bucket (kq_least just gave that key). */
static inline int32_t kq_take(KeyQueue *q) {
    NodeList *b = &q->ring[q->cur & (KQ_RING - 1)];
    q->held--;
    return b->items[--b->size];
}

/* What the bounded searches keep between calls, so that a search costs the nodes it reaches,
 * not the graph's: a node's steps and estimate, valid where its mark is this call's gen
 * (reached) or gen + 1 (settled); marks of other calls read as neither. Grown to the largest
 * graph searched; one search at a time (the GIL is held throughout). */
typedef struct {
    int64_t *at, *h;
    uint32_t *mark;
    Py_ssize_t cap;
    uint32_t gen;
    KeyQueue q;
} TowardScratch;

static TowardScratch toward_scratch;

/* The scratch for a search of n nodes, this call's marks apart from every earlier call's;
 * -1 out of memory. */
static int toward_scratch_take(Py_ssize_t n) {
    TowardScratch *s = &toward_scratch;
    if (n > s->cap) {
        free(s->at), free(s->h), free(s->mark);
        s->at = malloc((size_t)n * sizeof(int64_t));
        s->h = malloc((size_t)n * sizeof(int64_t));
        s->mark = calloc((size_t)n, sizeof(uint32_t));
        s->gen = 0;
        if (!s->at || !s->h || !s->mark) {
            free(s->at), free(s->h), free(s->mark);
            s->at = s->h = NULL, s->mark = NULL, s->cap = 0;
            return -1;
        }
        s->cap = n;
    }
    if (s->gen >= UINT32_MAX - 4) {
        memset(s->mark, 0, (size_t)s->cap * sizeof(uint32_t));
        s->gen = 0;
    }
    s->gen += 2;
    kq_clear(&s->q);
    return 0;
}

typedef struct {
    const int64_t *indptr;
    const int32_t *indices, *steps;
    Py_ssize_t n, m;
    int64_t span, width, n_cells, kappa;
    int64_t x0, y0, x1, y1; /* the box of cells the estimate is taken to */
    int64_t *at, *h;        /* toward_scratch's */
    uint32_t *mark, gen;
    KeyQueue *q;
    double step, *dist; /* dist: the settled nodes' distances (NULL: not kept) */
    int32_t *order;     /* the nodes settled, in turn (NULL: not kept) */
    /* a landmark's exact distances (ticks a node, or NULL): gmode 1, a forward search's
     * bound to targets no farther from it than goff steps (guide - goff; inf: no target is
     * reached from there); gmode 2, a reverse search's bound from a node goff steps from it
     * (goff - guide) */
    const double *guide;
    int64_t goff;
    int gmode;
    long long settled;
} Toward;

static inline int64_t toward_h(const Toward *t, int64_t v) {
    int64_t c = v % t->n_cells, x = c % t->width, y = c / t->width;
    int64_t dx = imax(0, imax(t->x0 - x, x - t->x1)), dy = imax(0, imax(t->y0 - y, y - t->y1));
    int64_t h = t->kappa * (dx > dy ? dx : dy);
    if (t->gmode) {
        double g = t->guide[v];
        if (!isfinite(g)) return t->gmode == 1 ? INT64_MAX : h;
        int64_t l = (int64_t)(g / t->step);
        l = t->gmode == 1 ? l - t->goff : t->goff - l;
        if (l > h) h = l;
    }
    return h;
}

/* Takes the scratch for t's n nodes (-1 out of memory). */
static int toward_begin(Toward *t) {
    if (toward_scratch_take(t->n) < 0) return -1;
    t->at = toward_scratch.at, t->h = toward_scratch.h, t->mark = toward_scratch.mark;
    t->gen = toward_scratch.gen, t->q = &toward_scratch.q;
    return 0;
}

static inline int toward_done(const Toward *t, int64_t v) { return t->mark[v] == t->gen + 1; }

/* Node v's estimate, v reached (at inf until a way to it is found) if it was not. */
static inline int64_t toward_reach(Toward *t, int64_t v) {
    if (t->mark[v] != t->gen && t->mark[v] != t->gen + 1) {
        t->mark[v] = t->gen;
        t->at[v] = INT64_MAX;
        t->h[v] = toward_h(t, v);
    }
    return t->h[v];
}

/* Opens node v at 0 steps (a search's source): -1 out of memory. */
static int toward_source(Toward *t, int64_t v) {
    int64_t h = toward_reach(t, v);
    if (t->at[v] == 0 || h == INT64_MAX) return 0; /* twice, or it reaches no target */
    t->at[v] = 0;
    return kq_push(t->q, h, (int32_t)v) < 0 ? -1 : 0;
}

/* The least key still open (stale entries dropped); INT64_MAX when none is, -1 out of
 * memory. */
static int64_t toward_top(Toward *t) {
    for (;;) {
        int64_t key = kq_least(t->q);
        if (key < 0 || key == INT64_MAX) return key;
        NodeList *b = &t->q->ring[key & (KQ_RING - 1)];
        int32_t v = b->items[b->size - 1];
        if (t->mark[v] == t->gen && t->at[v] + t->h[v] == key) return key;
        kq_take(t->q);
    }
}

/* Settles nodes while the least open key is below until, or until node stop is settled.
 * 0, -1 out of memory, -2 bad arrays (the error set). */
static int toward_run(Toward *t, int64_t until, int64_t stop) {
    for (;;) {
        int64_t key = toward_top(t);
        if (key == -1) return -1;
        if (key == INT64_MAX || key >= until) return 0;
        int64_t v = kq_take(t->q);
        t->mark[v] = t->gen + 1;
        if (t->order) t->order[t->settled] = (int32_t)v;
        t->settled++;
        if (t->dist) t->dist[v] = (double)t->at[v] * t->step;
        int64_t lo = t->indptr[v], hi = t->indptr[v + 1], hv = t->h[v], av = t->at[v];
        if (lo < 0 || hi < lo || hi > t->m) {
            PyErr_SetString(PyExc_ValueError, "field_toward: indptr out of order");
            return -2;
        }
        for (int64_t j = lo; j < hi; j++) {
            int64_t w = t->indices[j], s = t->steps[j];
            if (w < 0 || w >= t->n || s < 0 || s > t->span) {
                PyErr_SetString(PyExc_ValueError, "field_toward: an index or step out of range");
                return -2;
            }
            int64_t hw = toward_reach(t, w);
            if (hw == INT64_MAX) continue; /* reaches no target */
            if (hv > s + hw) {
                PyErr_SetString(PyExc_ValueError, "field_toward: an estimate past an edge's steps");
                return -2;
            }
            int64_t nd = av + s;
            if (t->mark[w] == t->gen && nd < t->at[w]) {
                t->at[w] = nd;
                if (kq_push(t->q, nd + hw, (int32_t)w) < 0) return -1;
            }
        }
        if (v == stop) return 0;
    }
}

/* The key the open set must reach before the walk from start is the whole field's; -1 once
 * it is (-2: bad forward arrays, the error set). */
static int64_t toward_need(Toward *t, const int64_t *findptr, const int32_t *findices,
                           const double *fdata, Py_ssize_t fm, int64_t start) {
    int64_t node = start, top = toward_top(t);
    if (top == -1) {
        PyErr_NoMemory();
        return -2;
    }
    for (Py_ssize_t it = 0; it < t->n; it++) {
        if (!toward_done(t, node)) return top == INT64_MAX ? -1 : top + 1;
        double here = t->dist[node];
        if (!(here > 0)) return -1;
        int64_t lo = findptr[node], hi = findptr[node + 1];
        if (lo < 0 || hi < lo || hi > fm) {
            PyErr_SetString(PyExc_ValueError, "field_toward: forward indptr out of order");
            return -2;
        }
        double low = INFINITY;
        int64_t k = -1, need = -1;
        for (int64_t j = lo; j < hi; j++) {
            int64_t y = findices[j];
            if (y < 0 || y >= t->n) {
                PyErr_SetString(PyExc_ValueError, "field_toward: a forward index out of range");
                return -2;
            }
            if (toward_done(t, y)) {
                double total = fdata[j] + t->dist[y];
                if (total < low) low = total, k = j;
            }
        }
        if (top != INT64_MAX) /* unsettled neighbours: at least (top - estimate) steps */
            for (int64_t j = lo; j < hi; j++) {
                int64_t y = findices[j];
                if (toward_done(t, y)) continue;
                if (low == INFINITY) return INT64_MAX;
                int64_t hy = toward_reach(t, y);
                if (fdata[j] + (double)(top - hy) * t->step > low) continue;
                int64_t want = (int64_t)floor((low - fdata[j]) / t->step) + hy + 1;
                if (want <= top) want = top + 1;
                if (want > need) need = want;
            }
        if (need >= 0) return need;
        if (k < 0 || !isfinite(low) || !(low <= here + 1e-9 * fmax(1.0, here))) return -1;
        node = findices[k];
    }
    return -1;
}

PyDoc_STRVAR(field_toward_doc,
             "field_toward(indptr, indices, steps, span, findptr, findices, fdata, sources, "
             "start, width, n_cells, kappa, step, dist, guide, goff) -> settled\n\n"
             "field()'s distances (steps int32 times step, span their most) from sources over "
             "a reverse graph, settled only as far as the walk down them from node start over "
             "the forward graph (findptr int64, findices int32, fdata float64) needs: that "
             "walk is the whole field's, edge for edge. A* toward start's cell by kappa times "
             "the Chebyshev distance of (cell % width, cell // width), node k on cell "
             "k % n_cells. dist (float64, inf) gets the settled nodes' distances. guide "
             "(float64 ticks a node, or None): a landmark's distances, start goff steps from "
             "it, so goff - guide steps more bound the estimate (inf: none). order (int32, "
             "one a node, optional): the settled nodes, in turn (the first settled of them), "
             "so a caller that keeps dist inf between calls clears just those. "
             "Called by engine.sim.toward.field_toward.");

static PyObject *field_toward(PyObject *self, PyObject *args) {
    PyObject *o[8], *o_guide, *o_order = Py_None;
    long long span, start, width, n_cells, kappa, goff;
    double step;
    if (!PyArg_ParseTuple(args, "OOOLOOOOLLLLdOOL|O", &o[0], &o[1], &o[2], &span, &o[3], &o[4],
                          &o[5], &o[6], &start, &width, &n_cells, &kappa, &step, &o[7], &o_guide,
                          &goff, &o_order))
        return NULL;
    Buf bufs[10];
    for (int i = 0; i < 10; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    Toward t;
    memset(&t, 0, sizeof t);
    static const Py_ssize_t sizes[8] = {8, 4, 4, 8, 4, 8, 8, 8};
    static const char *names[8] = {"indptr", "indices", "steps", "findptr",
                                   "findices", "fdata", "sources", "dist"};
    for (int i = 0; i < 8; i++)
        if (get_buf(o[i], &bufs[i], i == 7, sizes[i], names[i]) < 0 || !bufs[i].held) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "field_toward: %s", names[i]);
            goto done;
        }
    t.n = bufs[7].b.len / 8;
    t.m = bufs[1].b.len / 4;
    Py_ssize_t fm = bufs[4].b.len / 4;
    if (bufs[0].b.len / 8 != t.n + 1 || bufs[2].b.len / 4 != t.m || bufs[3].b.len / 8 != t.n + 1 ||
        bufs[5].b.len / 8 != fm || t.n >= INT32_MAX || width < 1 || n_cells < 1 ||
        n_cells > t.n || width > n_cells || kappa < 0 || span < 0 || span > INT32_MAX ||
        start < 0 || start >= t.n || !(step > 0)) {
        PyErr_SetString(PyExc_ValueError, "field_toward: the arrays or numbers disagree");
        goto done;
    }
    t.indptr = bufs[0].b.buf;
    t.indices = bufs[1].b.buf;
    t.steps = bufs[2].b.buf;
    t.span = span, t.width = width, t.n_cells = n_cells, t.kappa = kappa;
    t.x0 = t.x1 = (start % n_cells) % width, t.y0 = t.y1 = (start % n_cells) / width;
    t.step = step, t.dist = bufs[7].b.buf;
    if (get_buf(o_guide, &bufs[8], 0, 8, "guide") < 0) goto done;
    if (bufs[8].held) {
        if (bufs[8].b.len / 8 != t.n) {
            PyErr_SetString(PyExc_ValueError, "field_toward: guide and dist disagree");
            goto done;
        }
        t.guide = bufs[8].b.buf, t.goff = goff, t.gmode = 2;
    }
    if (get_buf(o_order, &bufs[9], 1, 4, "order") < 0) goto done;
    if (bufs[9].held) {
        if (bufs[9].b.len / 4 != t.n) {
            PyErr_SetString(PyExc_ValueError, "field_toward: order and dist disagree");
            goto done;
        }
        t.order = bufs[9].b.buf;
    }
    if (toward_begin(&t) < 0) goto nomem;
    const int64_t *sources = bufs[6].b.buf;
    for (Py_ssize_t k = 0; k < bufs[6].b.len / 8; k++) {
        int64_t v = sources[k];
        if (v < 0 || v >= t.n) {
            PyErr_SetString(PyExc_ValueError, "field_toward: a source out of range");
            goto done;
        }
        if (toward_source(&t, v) < 0) goto nomem;
    }
    int rc = toward_run(&t, INT64_MAX, start);
    for (;;) {
        if (rc == -1) goto nomem;
        if (rc == -2) goto done;
        int64_t need = toward_need(&t, bufs[3].b.buf, bufs[4].b.buf, bufs[5].b.buf, fm, start);
        if (need == -2) goto done;
        if (need == -1) break;
        rc = toward_run(&t, need, -1);
    }
    result = PyLong_FromLongLong(t.settled);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    for (int i = 0; i < 10; i++) release(&bufs[i]);
    return result;
}

PyDoc_STRVAR(toward_kappa_doc,
             "toward_kappa(indptr, indices, steps, width, n_cells) -> (kappa, span)\n\n"
             "For field_toward on a graph (indptr int64, indices int32, steps int32 >= 0; node "
             "k on cell k % n_cells): the most whole steps no edge falls below per cell of "
             "Chebyshev distance between its cells' (cell % width, cell // width) (0 where an "
             "edge's steps fall below one a cell; -1 where no edge leaves its cell), and the "
             "most steps of an edge.");

static PyObject *toward_kappa(PyObject *self, PyObject *args) {
    PyObject *o[3];
    long long width, n_cells;
    if (!PyArg_ParseTuple(args, "OOOLL", &o[0], &o[1], &o[2], &width, &n_cells)) return NULL;
    Buf bufs[3];
    for (int i = 0; i < 3; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    static const Py_ssize_t sizes[3] = {8, 4, 4};
    static const char *names[3] = {"indptr", "indices", "steps"};
    for (int i = 0; i < 3; i++)
        if (get_buf(o[i], &bufs[i], 0, sizes[i], names[i]) < 0 || !bufs[i].held) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "toward_kappa: %s", names[i]);
            goto done;
        }
    const int64_t *indptr = bufs[0].b.buf;
    const int32_t *indices = bufs[1].b.buf, *steps = bufs[2].b.buf;
    Py_ssize_t n = bufs[0].b.len / 8 - 1, m = bufs[1].b.len / 4;
    if (n < 0 || bufs[2].b.len / 4 != m || width < 1 || n_cells < 1 || width > n_cells) {
        PyErr_SetString(PyExc_ValueError, "toward_kappa: the arrays or numbers disagree");
        goto done;
    }
    int64_t kappa = -1, span = 0;
    for (Py_ssize_t v = 0; v < n; v++) {
        int64_t lo = indptr[v], hi = indptr[v + 1];
        if (lo < 0 || hi < lo || hi > m) {
            PyErr_SetString(PyExc_ValueError, "toward_kappa: indptr out of order");
            goto done;
        }
        int64_t a = v % n_cells;
        for (int64_t j = lo; j < hi; j++) {
            int64_t b = indices[j], s = steps[j];
            if (b < 0 || b >= n || s < 0) {
                PyErr_SetString(PyExc_ValueError, "toward_kappa: an index or step out of range");
                goto done;
            }
            if (s > span) span = s;
            b %= n_cells;
            int64_t dx = iabs(a % width - b % width), dy = iabs(a / width - b / width);
            int64_t far = dx > dy ? dx : dy;
            if (far > 0 && (kappa < 0 || s / far < kappa)) kappa = s / far;
        }
    }
    result = Py_BuildValue("(LL)", (long long)kappa, (long long)span);
done:
    for (int i = 0; i < 3; i++) release(&bufs[i]);
    return result;
}

/* Whether the least late of claim_reach's cells is proven: each cell known (its least
 * steps over its nodes settled below what any unsettled node of it may have) gets its
 * turns in out (NaN: not known); every unknown cell's least possible late (turns less
 * its less) must be above the least known late. */
static int claim_done(Toward *t, const int64_t *cells, const int64_t *hc, const double *less,
                      Py_ssize_t k_cells, double den, double *out) {
    int64_t top = toward_top(t);
    if (top == -1) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t states = t->n / t->n_cells;
    double best = INFINITY;
    for (Py_ssize_t k = 0; k < k_cells; k++) {
        int64_t c = cells[k], least = INT64_MAX, bound = INT64_MAX;
        for (Py_ssize_t s = 0; s < states; s++)
            if (toward_done(t, c + s * t->n_cells) && t->at[c + s * t->n_cells] < least)
                least = t->at[c + s * t->n_cells];
        if (top != INT64_MAX) bound = top - hc[k];
        if (least <= bound) {
            out[k] = least == INT64_MAX ? INFINITY : ((double)least * t->step) / den;
            double late = out[k] - less[k];
            if (late < best) best = late;
        } else
            out[k] = NAN;
    }
    for (Py_ssize_t k = 0; k < k_cells; k++) {
        if (!isnan(out[k])) continue;
        double low = ((double)(top - hc[k]) * t->step) / den;
        if (!(low - less[k] > best)) return 0;
    }
    return 1;
}

PyDoc_STRVAR(claim_reach_doc,
             "claim_reach(indptr, indices, steps, span, source, cells, less, width, "
             "n_cells, kappa, step, den, out, guide, goff) -> settled\n\n"
             "field()'s distances (steps int32 times step, span their most) from node source "
             "over a graph, as turns (the least over a cell's nodes, node k on cell "
             "k % n_cells, times step over den) on cells (int64), settled only until the "
             "cell of the least turns less less (float64, one a cell) is proven: out "
             "(float64, one a cell) gets each cell's exact turns, inf where it is proven "
             "later than that least. A* toward the box of cells as field_toward; guide (float64 "
             "ticks a node to a landmark, or None): every cell's nodes at most goff steps "
             "from it, so guide - goff steps bound the estimate, and a node of inf reaches "
             "no cell. Called by engine.sim.threat.claim_turns.");

static PyObject *claim_reach(PyObject *self, PyObject *args) {
    PyObject *o[6], *o_guide;
    long long span, source, width, n_cells, kappa, goff;
    double step, den;
    if (!PyArg_ParseTuple(args, "OOOLLOOLLLddOOL", &o[0], &o[1], &o[2], &span, &source, &o[3],
                          &o[4], &width, &n_cells, &kappa, &step, &den, &o[5], &o_guide, &goff))
        return NULL;
    Buf bufs[7];
    for (int i = 0; i < 7; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    Toward t;
    memset(&t, 0, sizeof t);
    int64_t *hc = NULL;
    static const Py_ssize_t sizes[6] = {8, 4, 4, 8, 8, 8};
    static const char *names[6] = {"indptr", "indices", "steps", "cells", "less", "out"};
    for (int i = 0; i < 6; i++)
        if (get_buf(o[i], &bufs[i], i == 5, sizes[i], names[i]) < 0 || !bufs[i].held) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "claim_reach: %s", names[i]);
            goto done;
        }
    t.n = bufs[0].b.len / 8 - 1;
    t.m = bufs[1].b.len / 4;
    Py_ssize_t k_cells = bufs[3].b.len / 8;
    if (t.n < 1 || bufs[2].b.len / 4 != t.m || t.n >= INT32_MAX || width < 1 || n_cells < 1 ||
        n_cells > t.n || t.n % n_cells || width > n_cells || kappa < 0 || span < 0 ||
        span > INT32_MAX || source < 0 || source >= t.n ||
        !(step > 0) || !(den > 0) || bufs[4].b.len / 8 != k_cells || bufs[5].b.len / 8 != k_cells) {
        PyErr_SetString(PyExc_ValueError, "claim_reach: the arrays or numbers disagree");
        goto done;
    }
    const int64_t *cells = bufs[3].b.buf;
    for (Py_ssize_t k = 0; k < k_cells; k++)
        if (cells[k] < 0 || cells[k] >= n_cells) {
            PyErr_SetString(PyExc_ValueError, "claim_reach: a cell out of range");
            goto done;
        }
    t.indptr = bufs[0].b.buf;
    t.indices = bufs[1].b.buf;
    t.steps = bufs[2].b.buf;
    t.span = span, t.width = width, t.n_cells = n_cells, t.kappa = kappa;
    t.step = step;
    t.x0 = t.y0 = INT64_MAX, t.x1 = t.y1 = -1;
    for (Py_ssize_t k = 0; k < k_cells; k++) {
        int64_t x = cells[k] % width, y = cells[k] / width;
        t.x0 = imin(t.x0, x), t.x1 = imax(t.x1, x), t.y0 = imin(t.y0, y), t.y1 = imax(t.y1, y);
    }
    if (!k_cells) t.x0 = t.y0 = 0, t.x1 = t.y1 = 0;
    if (get_buf(o_guide, &bufs[6], 0, 8, "guide") < 0) goto done;
    if (bufs[6].held) {
        if (bufs[6].b.len / 8 != t.n) {
            PyErr_SetString(PyExc_ValueError, "claim_reach: guide and the graph disagree");
            goto done;
        }
        t.guide = bufs[6].b.buf, t.goff = goff, t.gmode = 1;
        for (Py_ssize_t k = 0; k < k_cells; k++) /* every target within goff of the landmark */
            for (Py_ssize_t s = 0; s < t.n / n_cells; s++) {
                double g = t.guide[cells[k] + s * n_cells];
                if (!isfinite(g) || (int64_t)(g / step) > goff) {
                    PyErr_SetString(PyExc_ValueError, "claim_reach: a cell past the guide's bound");
                    goto done;
                }
            }
        if (toward_h(&t, source) == INT64_MAX) t.gmode = 0; /* no target reached: all inf */
    }
    hc = malloc((size_t)(k_cells ? k_cells : 1) * sizeof(int64_t)); /* each cell's estimate */
    if (!hc || toward_begin(&t) < 0) goto nomem;
    for (Py_ssize_t k = 0; k < k_cells; k++) hc[k] = toward_h(&t, cells[k]);
    if (toward_source(&t, source) < 0) goto nomem;
    double *out = bufs[5].b.buf;
    const double *less = bufs[4].b.buf;
    int proven;
    while (!(proven = claim_done(&t, cells, hc, less, k_cells, den, out))) {
        int64_t top = toward_top(&t);
        int rc = toward_run(&t, top + 1, -1);
        if (rc == -1) goto nomem;
        if (rc == -2) goto done;
    }
    if (proven < 0) goto done;
    for (Py_ssize_t k = 0; k < k_cells; k++)
        if (isnan(out[k])) out[k] = INFINITY;
    result = PyLong_FromLongLong(t.settled);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(hc);
    for (int i = 0; i < 7; i++) release(&bufs[i]);
    return result;
}

/* ---------------------------------------------------------------------- a kept threat map
 *
 * threat_move() keeps the least steps from a set of sources (slots, each on a node or none)
 * to every node of a graph as sources move: the nodes the moved source owned (reached from
 * it first; found through the forward edges from its node, as every node's way from its
 * owner runs through nodes of the same owner) are cleared and reached again from their
 * settled in-neighbours and any other source on them, while the source's new node spreads
 * where it is nearer. Each settled node's steps are then its owner's exact distance, so
 * the least over the sources, as one Dijkstra from all of them gives it. Each touched
 * cell's turns are made again: the least steps over its nodes (node k on cell k %
 * n_cells) times step over den, inf where none reaches it. */

PyDoc_STRVAR(threat_move_doc,
             "threat_move(indptr, indices, steps, rindptr, rindices, rsteps, sources, "
             "node_steps, owner, cell_turns, step, den, slot, old_node) -> touched\n\n"
             "Keeps node_steps (int64, INT64_MAX where unreached), owner (int32, -1) and "
             "cell_turns (float64, a cell's least node steps times step over den) of the "
             "sources (int64, a slot's node or -1, as they stand after the move) over a graph "
             "(indptr int64, indices int32, steps int32) and its reverse (rindptr, rindices, "
             "rsteps): slot moved from old_node (-1: it was on none) to sources[slot]; slot "
             "-1: made from nothing (the arrays as unreached). Returns the nodes touched. "
             "Called by engine.sim.threat.ThreatMap.");

static PyObject *threat_move(PyObject *self, PyObject *args) {
    PyObject *o[10];
    long long slot, old_node;
    double step, den;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOddLL", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7], &o[8], &o[9], &step, &den, &slot, &old_node))
        return NULL;
    Buf bufs[10];
    for (int i = 0; i < 10; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    KeyQueue *q = &toward_scratch.q; /* keys: steps */
    kq_clear(q);
    Bucket cleared = {NULL, 0, 0}, touched = {NULL, 0, 0};
    static const Py_ssize_t sizes[10] = {8, 4, 4, 8, 4, 4, 8, 8, 4, 8};
    static const char *names[10] = {"indptr",  "indices",    "steps", "rindptr",   "rindices",
                                    "rsteps",  "sources",    "node_steps", "owner", "cell_turns"};
    for (int i = 0; i < 10; i++)
        if (get_buf(o[i], &bufs[i], i >= 7, sizes[i], names[i]) < 0 || !bufs[i].held) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "threat_move: %s", names[i]);
            goto done;
        }
    const int64_t *indptr = bufs[0].b.buf, *rindptr = bufs[3].b.buf, *src = bufs[6].b.buf;
    const int32_t *indices = bufs[1].b.buf, *steps = bufs[2].b.buf;
    const int32_t *rindices = bufs[4].b.buf, *rsteps = bufs[5].b.buf;
    int64_t *at = bufs[7].b.buf;
    int32_t *owner = bufs[8].b.buf;
    double *turns = bufs[9].b.buf;
    Py_ssize_t n = bufs[7].b.len / 8, m = bufs[1].b.len / 4, rm = bufs[4].b.len / 4;
    Py_ssize_t cells = bufs[9].b.len / 8, slots = bufs[6].b.len / 8;
    if (bufs[0].b.len / 8 != n + 1 || bufs[3].b.len / 8 != n + 1 || bufs[2].b.len / 4 != m ||
        bufs[5].b.len / 4 != rm || bufs[8].b.len / 4 != n || cells < 1 || n % cells ||
        n >= INT32_MAX || slot < -1 || slot >= slots || old_node < -1 || old_node >= n ||
        !(step > 0) || !(den > 0) || indptr[n] != m || rindptr[n] != rm) {
        PyErr_SetString(PyExc_ValueError, "threat_move: the arrays or numbers disagree");
        goto done;
    }
    for (Py_ssize_t k = 0; k < slots; k++)
        if (src[k] < -1 || src[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "threat_move: a source out of range");
            goto done;
        }
    /* the moved source's nodes, cleared (owner -2 while found) */
    if (slot >= 0 && old_node >= 0 && owner[old_node] == slot) {
        owner[old_node] = -2;
        if (bucket_push(&cleared, old_node) < 0) goto nomem;
        for (Py_ssize_t i = 0; i < cleared.size; i++) {
            int64_t v = cleared.items[i];
            for (int64_t j = indptr[v]; j < indptr[v + 1]; j++) {
                int64_t w = indices[j];
                if (w < 0 || w >= n) goto bad;
                if (owner[w] == slot) {
                    owner[w] = -2;
                    if (bucket_push(&cleared, w) < 0) goto nomem;
                }
            }
        }
        for (Py_ssize_t i = 0; i < cleared.size; i++) {
            at[cleared.items[i]] = INT64_MAX;
            owner[cleared.items[i]] = -1;
        }
    }
    /* the sources: the moved one's new node, others on cleared nodes, all where slot is -1 */
    for (Py_ssize_t k = 0; k < slots; k++) {
        int64_t v = src[k];
        if (v < 0 || at[v] == 0) continue;
        if (slot >= 0 && k != slot && owner[v] != -1) continue;
        at[v] = 0, owner[v] = (int32_t)k;
        if (kq_push(q, 0, (int32_t)v) < 0 || bucket_push(&touched, v) < 0) goto nomem;
    }
    /* the cleared nodes, from their settled in-neighbours */
    for (Py_ssize_t i = 0; i < cleared.size; i++) {
        int64_t v = cleared.items[i], best = INT64_MAX;
        if (at[v] == 0) continue;
        int32_t by = -1;
        for (int64_t j = rindptr[v]; j < rindptr[v + 1]; j++) {
            int64_t u = rindices[j];
            if (u < 0 || u >= n || rsteps[j] < 0) goto bad;
            if (owner[u] >= 0 && at[u] != INT64_MAX && at[u] + rsteps[j] < best)
                best = at[u] + rsteps[j], by = owner[u];
        }
        if (by >= 0) {
            at[v] = best, owner[v] = by;
            if (kq_push(q, best, (int32_t)v) < 0) goto nomem;
        }
    }
    for (;;) {
        int64_t d = kq_least(q);
        if (d == -1) goto nomem;
        if (d == INT64_MAX) break;
        int64_t v = kq_take(q);
        if (d != at[v]) continue;
        for (int64_t j = indptr[v]; j < indptr[v + 1]; j++) {
            int64_t w = indices[j];
            if (w < 0 || w >= n || steps[j] < 0) goto bad;
            int64_t nd = d + steps[j];
            if (nd < at[w]) {
                at[w] = nd, owner[w] = owner[v];
                if (kq_push(q, nd, (int32_t)w) < 0 || bucket_push(&touched, w) < 0)
                    goto nomem;
            }
        }
    }
    Py_ssize_t states = n / cells;
    Bucket *lists[2] = {&cleared, &touched};
    for (int l = 0; l < 2; l++)
        for (Py_ssize_t i = 0; i < lists[l]->size; i++) {
            int64_t c = lists[l]->items[i] % cells, least = INT64_MAX;
            for (Py_ssize_t k = 0; k < states; k++)
                if (at[c + k * cells] < least) least = at[c + k * cells];
            turns[c] = least == INT64_MAX ? INFINITY : ((double)least * step) / den;
        }
    result = PyLong_FromSsize_t(cleared.size + touched.size);
    goto done;
bad:
    PyErr_SetString(PyExc_ValueError, "threat_move: an index or step out of range");
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(cleared.items);
    free(touched.items);
    for (int i = 0; i < 10; i++) release(&bufs[i]);
    return result;
}

/* ---------------------------------------------------------------------------------------
 * objraster: an object's outline or fill as pixel coverage, and its compositing
 * (engine.viewer.objraster, whose numpy passes, coverage_numpy and composite_numpy, are the
 * twins: tests/test_objraster.py holds them equal bit for bit). Every number is worked out
 * with the same double operations in the same order as those passes, each product rounded
 * on its own (no fused multiply-add), and numpy's searchsorted and NaN rules are kept, so the
 * same pixels come out, without the numpy passes' temporaries.
 * --------------------------------------------------------------------------------------- */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#elif defined(_MSC_VER)
#pragma fp_contract(off)
#endif

/* numpy's minimum and maximum (a NaN wins) and clip to [0, 1] (NaN stays). */
static inline double objr_min(double a, double b) {
    return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b);
}
static inline double objr_max(double a, double b) {
    return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b);
}
static inline double objr_clip01(double t) {
    if (isnan(t)) return t;
    t = t > 0.0 ? t : 0.0;
    return t < 1.0 ? t : 1.0;
}

/* The centre of pixel k of an axis starting at base: base + k + 0.5, as numpy makes it. */
static inline double objr_at(int64_t base, Py_ssize_t k) { return (double)(base + k) + 0.5; }

/* numpy's searchsorted over the n centres from base: the first k whose centre is >= v
 * (right = 0) or > v (right = 1); NaN sorts after everything. */
static Py_ssize_t objr_search(double v, int64_t base, Py_ssize_t n, int right) {
    if (isnan(v)) return n;
    if (n == 0) return 0;
#define OBJR_PAST(k) (right ? objr_at(base, k) > v : objr_at(base, k) >= v)
    if (OBJR_PAST(0)) return 0;
    if (!OBJR_PAST(n - 1)) return n;
    double e = floor(v - (double)base); /* within one or two of the answer */
    Py_ssize_t k = e < 0 ? 0 : e > (double)n ? n : (Py_ssize_t)e;
    while (k > 0 && OBJR_PAST(k - 1)) k--;
    while (k < n && !OBJR_PAST(k)) k++;
#undef OBJR_PAST
    return k;
}

/* Squared distance from (px, py) to the segment s (ax, ay, bx, by): objraster._seg_d2. */
static inline double objr_d2(double px, double py, const double *s) {
    double dx = s[2] - s[0], dy = s[3] - s[1];
    double qx = px - s[0], qy = py - s[1];
    double l2 = dx * dx + dy * dy;
    if (!(l2 > 0)) return qx * qx + qy * qy;
    double t = objr_clip01((qx * dx + qy * dy) / l2);
    double ex = qx - t * dx, ey = qy - t * dy;
    return ex * ex + ey * ey;
}

/* The least and greatest x of segment s between ylo and yhi: objraster._x_span. */
static void objr_xspan(const double *s, double ylo, double yhi, double *xlo, double *xhi) {
    double ax = s[0], ay = s[1], bx = s[2], by = s[3], dy = by - ay, tlo = 0.0, thi = 1.0;
    if (dy != 0) {
        double t0 = (ylo - ay) / dy, t1 = (yhi - ay) / dy;
        tlo = objr_clip01(objr_min(t0, t1));
        thi = objr_clip01(objr_max(t0, t1));
    }
    double xa = ax + tlo * (bx - ax), xb = ax + thi * (bx - ax);
    *xlo = objr_min(xa, xb);
    *xhi = objr_max(xa, xb);
}

typedef struct {
    const double *sg; /* segments, 4 doubles each */
    Py_ssize_t n, w, h;
    int64_t x0, y0;
    int ss;
    double sub[8]; /* sample offsets in a pixel: (i + 0.5) / ss */
} ObjrArea;

/* A segment's rows and columns in the area: its box widened by reach (the distance pass),
 * the rows whose centre it crosses (the inside test at centres) and rows whose samples it
 * may cross (a superset, for the inside test at samples); lo and hi: the least and the end
 * of all its rows, by which the bands take it up. */
typedef struct {
    Py_ssize_t c0, c1, r0, r1, g0, g1, s0, s1, lo, hi;
    Py_ssize_t seg;
} ObjrBox;

static int objr_cmp_box(const void *a, const void *b) {
    Py_ssize_t x = ((const ObjrBox *)a)->lo, y = ((const ObjrBox *)b)->lo;
    return (x > y) - (x < y);
}

/* A row bound: floor(v) - base clamped to [0, n]. */
static Py_ssize_t objr_row(double v, int64_t base, Py_ssize_t n) {
    double d = floor(v) - (double)base;
    return !(d > 0) ? 0 : d >= (double)n ? n : (Py_ssize_t)d;
}

static void objr_box(const ObjrArea *A, Py_ssize_t k, double reach, ObjrBox *B) {
    const double *s = A->sg + 4 * k;
    double mny = objr_min(s[1], s[3]), mxy = objr_max(s[1], s[3]);
    B->seg = k;
    B->c0 = objr_search(objr_min(s[0], s[2]) - reach, A->x0, A->w, 0);
    B->c1 = objr_search(objr_max(s[0], s[2]) + reach, A->x0, A->w, 1);
    B->r0 = objr_search(mny - reach, A->y0, A->h, 0);
    B->r1 = objr_search(mxy + reach, A->y0, A->h, 1);
    B->g0 = B->g1 = B->s0 = B->s1 = 0;
    if (s[1] != s[3]) {
        B->g0 = objr_search(mny, A->y0, A->h, 0);
        B->g1 = objr_search(mxy, A->y0, A->h, 0);
        B->s0 = objr_row(mny, A->y0 + 1, A->h);
        B->s1 = objr_row(mxy, A->y0 - 1, A->h);
    }
    B->lo = B->r0 < B->s0 ? B->r0 : B->s0;
    B->hi = B->r1 > B->s1 ? B->r1 : B->s1;
}

/* A band of rows [ra, rb) of the area and the segments that reach it; its pixel arrays
 * hold its rows only. */
typedef struct {
    Py_ssize_t ra, rb;
    const ObjrBox *const *act;
    Py_ssize_t na;
} ObjrBand;

/* Every segment over the band's pixels of its box, each row narrowed to the columns
 * within reach of the segment's part near it (objraster._distance_grid): without bits,
 * the least squared distance into dist2; with bits, for each pixel whose centre lies
 * within near2 of the segment and is a border pixel (bidx >= 0), the samples within half
 * of it (objraster._near_samples). */
static void objr_walk(const ObjrArea *A, const ObjrBand *D, double reach, double *dist2,
                      const int32_t *bidx, uint64_t *bits, double near2, double half) {
    double h2 = half * half;
    int n2 = A->ss * A->ss;
    uint64_t full = n2 == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n2) - 1;
    for (Py_ssize_t a = 0; a < D->na; a++) {
        const ObjrBox *B = D->act[a];
        const double *s = A->sg + 4 * B->seg;
        if (B->c0 >= B->c1) continue;
        double mnx = objr_min(s[0], s[2]), mxx = objr_max(s[0], s[2]);
        double mny = objr_min(s[1], s[3]), mxy = objr_max(s[1], s[3]);
        double dx = s[2] - s[0], dy = s[3] - s[1], l2 = dx * dx + dy * dy;
        Py_ssize_t r0 = B->r0 > D->ra ? B->r0 : D->ra, r1 = B->r1 < D->rb ? B->r1 : D->rb;
        for (Py_ssize_t r = r0; r < r1; r++) {
            double y = objr_at(A->y0, r), xlo, xhi;
            objr_xspan(s, y - reach - 1, y + reach + 1, &xlo, &xhi);
            Py_ssize_t lo = objr_search(xlo - reach - 1, A->x0, A->w, 0);
            Py_ssize_t hi = objr_search(xhi + reach + 1, A->x0, A->w, 1);
            if (lo < B->c0) lo = B->c0;
            if (hi > B->c1) hi = B->c1;
            for (Py_ssize_t c = lo; c < hi; c++) {
                Py_ssize_t p = (r - D->ra) * A->w + c;
                if (!bits) {
                    double d2 = objr_d2(objr_at(A->x0, c), y, s);
                    if (d2 < dist2[p] || isnan(d2)) dist2[p] = d2;
                    continue;
                }
                int32_t b = bidx[p];
                if (b < 0 || !(objr_d2(objr_at(A->x0, c), y, s) <= near2)) continue;
                double left = (double)(A->x0 + c) + A->sub[0];
                double top = (double)(A->y0 + r) + A->sub[0];
                if (!(left < mxx + half && left + 1 > mnx - half && top < mxy + half &&
                      top + 1 > mny - half))
                    continue;
                uint64_t got = bits[b];
                if (got == full) continue;
                /* objr_d2 at every sample, its terms that depend on the segment alone
                 * worked out once (the same operations on the same numbers) */
                double qx[8];
                for (int j = 0; j < A->ss; j++) qx[j] = ((double)(A->x0 + c) + A->sub[j]) - s[0];
                for (int i = 0; i < A->ss; i++) {
                    double qy = ((double)(A->y0 + r) + A->sub[i]) - s[1];
                    for (int j = 0; j < A->ss; j++) {
                        double d2;
                        if (!(l2 > 0))
                            d2 = qx[j] * qx[j] + qy * qy;
                        else {
                            double t = objr_clip01((qx[j] * dx + qy * dy) / l2);
                            double ex = qx[j] - t * dx, ey = qy - t * dy;
                            d2 = ex * ex + ey * ey;
                        }
                        got |= (uint64_t)(d2 <= h2) << (i * A->ss + j);
                    }
                }
                bits[b] = got;
            }
        }
    }
}

/* The even-odd inside test at the band's pixel centres (objraster._fill_grid): each
 * crossing of a row flips the pixels left of it; into cov as 1 or 0. */
static void objr_fill_grid(const ObjrArea *A, const ObjrBand *D, uint8_t *flips, double *cov) {
    Py_ssize_t w = A->w;
    memset(flips, 0, (size_t)(D->rb - D->ra) * (size_t)(w + 1));
    for (Py_ssize_t a = 0; a < D->na; a++) {
        const ObjrBox *B = D->act[a];
        const double *s = A->sg + 4 * B->seg;
        if (s[1] == s[3]) continue;
        double slope = (s[2] - s[0]) / (s[3] - s[1]);
        Py_ssize_t r0 = B->g0 > D->ra ? B->g0 : D->ra, r1 = B->g1 < D->rb ? B->g1 : D->rb;
        for (Py_ssize_t r = r0; r < r1; r++) {
            double xc = s[0] + (objr_at(A->y0, r) - s[1]) * slope;
            flips[(r - D->ra) * (w + 1) + objr_search(xc, A->x0, w, 0)] ^= 1;
        }
    }
    for (Py_ssize_t r = D->ra; r < D->rb; r++) {
        const uint8_t *f = flips + (r - D->ra) * (w + 1);
        uint8_t in = 0;
        for (Py_ssize_t c = w - 1; c >= 0; c--) {
            in ^= f[c + 1];
            cov[r * w + c] = in ? 1.0 : 0.0;
        }
    }
}

static int objr_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The even-odd inside test at the samples of the band's border pixels (rows br, columns
 * bc, in row order), XORed into bits (objraster._fill_samples): for each sample row the
 * crossings of the segments spanning it, sorted; the samples left of an odd number of
 * them are in. xc: room for a crossing per segment. */
static void objr_fill_samples(const ObjrArea *A, const ObjrBand *D, const int32_t *br,
                              const int32_t *bc, Py_ssize_t nb, uint64_t *bits, double *xc) {
    for (Py_ssize_t b0 = 0; b0 < nb;) {
        Py_ssize_t r = br[b0], b1 = b0;
        while (b1 < nb && br[b1] == r) b1++;
        for (int i = 0; i < A->ss; i++) {
            double qy = (double)(A->y0 + r) + A->sub[i];
            Py_ssize_t m = 0;
            for (Py_ssize_t a = 0; a < D->na; a++) {
                const ObjrBox *B = D->act[a];
                if (B->s0 > r || B->s1 <= r) continue;
                const double *s = A->sg + 4 * B->seg;
                double lo = objr_min(s[1], s[3]), hi = objr_max(s[1], s[3]);
                if (qy >= lo && qy < hi) {
                    double slope = (s[2] - s[0]) / (s[3] - s[1]);
                    double x = s[0] + (qy - s[1]) * slope;
                    if (!isnan(x)) xc[m++] = x; /* a NaN crossing lies right of no sample */
                }
            }
            if (m == 0) continue;
            qsort(xc, (size_t)m, sizeof(double), objr_cmp_double);
            /* a sample is in where an odd number of crossings lie right of it (px < xc) */
            Py_ssize_t p = 0;
            for (Py_ssize_t b = b0; b < b1; b++)
                for (int j = 0; j < A->ss; j++) {
                    double px = (double)(A->x0 + bc[b]) + A->sub[j];
                    while (p < m && xc[p] <= px) p++;
                    if ((m - p) & 1) bits[b] ^= (uint64_t)1 << (i * A->ss + j);
                }
        }
        b0 = b1;
    }
}

static int objr_popcount(uint64_t v) {
    int n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

/* Pixels a band holds at most: its arrays stay small enough to be reused from the heap
 * and cached while the band's segments are walked. */
#define OBJR_BAND_PIXELS 4096

PyDoc_STRVAR(objraster_coverage_doc,
             "objraster_coverage(segs, cov, w, x0, y0, ss, fill, half, reach, near, edge, "
             "inner) -> int\n\n"
             "The share of each pixel of the area (cov: float64, written, h rows of w; its "
             "corner at (x0, y0)) that the segments (float64, 4 a segment: ax, ay, bx, by) "
             "cover: filled even-odd (fill 1), or within half of them (fill 0: a stroke, round "
             "caps and joins). Pixels whose centre lies within edge of the border (fill: of "
             "the segments; stroke: of half, and farther than inner) are sampled ss x ss "
             "times; distances are measured only as far as reach, sample pairs only within "
             "near. Worked a band of rows at a time. Returns the pixels sampled. Called by "
             "engine.viewer.objraster.coverage; coverage_numpy is the twin.");

static PyObject *objraster_coverage(PyObject *self, PyObject *args) {
    PyObject *o_segs, *o_cov;
    Py_ssize_t w;
    long long x0, y0;
    int ss, fill;
    double half, reach, nearv, edge, inner;
    if (!PyArg_ParseTuple(args, "OOnLLiiddddd", &o_segs, &o_cov, &w, &x0, &y0, &ss, &fill,
                          &half, &reach, &nearv, &edge, &inner))
        return NULL;
    Buf sb, cb;
    sb.held = cb.held = 0;
    PyObject *result = NULL;
    ObjrBox *boxes = NULL;
    const ObjrBox **act = NULL;
    double *dist2 = NULL, *xc = NULL;
    uint8_t *flips = NULL;
    int32_t *bidx = NULL, *br = NULL, *bc = NULL;
    uint64_t *bits = NULL;
    if (get_buf(o_segs, &sb, 0, 8, "segs") < 0 || get_buf(o_cov, &cb, 1, 8, "cov") < 0)
        goto done;
    if (!sb.held || !cb.held || sb.b.len % 32 || w < 1 || (cb.b.len / 8) % w || ss < 1 ||
        ss > 8 || x0 < -(1LL << 40) || x0 > (1LL << 40) || y0 < -(1LL << 40) ||
        y0 > (1LL << 40) || cb.b.len / 8 / w > INT32_MAX || w > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "objraster_coverage: the arrays or numbers disagree");
        goto done;
    }
    ObjrArea A;
    A.sg = sb.b.buf;
    A.n = sb.b.len / 32;
    A.w = w;
    A.h = cb.b.len / 8 / w;
    A.x0 = x0;
    A.y0 = y0;
    A.ss = ss;
    for (int i = 0; i < ss; i++) A.sub[i] = ((double)i + 0.5) / (double)ss;
    for (Py_ssize_t k = 0; k < 4 * A.n; k++)
        if (!isfinite(A.sg[k])) {
            PyErr_SetString(PyExc_ValueError, "objraster_coverage: a coordinate not finite");
            goto done;
        }
    double *cov = cb.b.buf;
    Py_ssize_t band = OBJR_BAND_PIXELS / A.w, n1 = A.n ? A.n : 1, total = 0, next = 0;
    if (band < 1) band = 1;
    if (band > A.h) band = A.h;
    Py_ssize_t room = band * A.w;
    boxes = malloc((size_t)n1 * sizeof(ObjrBox));
    act = malloc((size_t)n1 * sizeof(ObjrBox *));
    xc = malloc((size_t)n1 * sizeof(double));
    dist2 = malloc((size_t)room * sizeof(double));
    flips = malloc((size_t)band * (size_t)(A.w + 1));
    bidx = malloc((size_t)room * sizeof(int32_t));
    br = malloc((size_t)room * sizeof(int32_t));
    bc = malloc((size_t)room * sizeof(int32_t));
    bits = malloc((size_t)room * sizeof(uint64_t));
    if (!boxes || !act || !xc || !dist2 || !flips || !bidx || !br || !bc || !bits) goto nomem;
    for (Py_ssize_t k = 0; k < A.n; k++) objr_box(&A, k, reach, &boxes[k]);
    qsort(boxes, (size_t)A.n, sizeof(ObjrBox), objr_cmp_box);
    ObjrBand D = {0, 0, act, 0};
    for (D.ra = 0; D.ra < A.h; D.ra = D.rb) {
        D.rb = D.ra + band < A.h ? D.ra + band : A.h;
        /* the segments reaching the band: those kept from the last that still do, and
         * the next by their first row */
        Py_ssize_t kept = 0;
        for (Py_ssize_t a = 0; a < D.na; a++)
            if (act[a]->hi > D.ra) act[kept++] = act[a];
        for (; next < A.n && boxes[next].lo < D.rb; next++)
            if (boxes[next].hi > D.ra) act[kept++] = &boxes[next];
        D.na = kept;
        Py_ssize_t cells = (D.rb - D.ra) * A.w;
        for (Py_ssize_t p = 0; p < cells; p++) dist2[p] = INFINITY;
        objr_walk(&A, &D, reach, dist2, NULL, NULL, 0.0, 0.0);
        double *row = cov + D.ra * A.w;
        if (fill) objr_fill_grid(&A, &D, flips, cov);
        Py_ssize_t nb = 0;
        for (Py_ssize_t p = 0; p < cells; p++) {
            int border = 0;
            if (dist2[p] != INFINITY) {
                double d = sqrt(dist2[p]);
                if (fill)
                    border = d < edge;
                else {
                    row[p] = d <= half ? 1.0 : 0.0;
                    border = fabs(d - half) < edge && d > inner;
                }
            } else if (!fill)
                row[p] = 0.0; /* inf: farther than half */
            if (border) {
                br[nb] = (int32_t)(D.ra + p / A.w), bc[nb] = (int32_t)(p % A.w);
                bits[nb] = 0;
                bidx[p] = (int32_t)nb++;
            } else
                bidx[p] = -1;
        }
        if (!nb) continue;
        if (fill)
            objr_fill_samples(&A, &D, br, bc, nb, bits, xc);
        else
            objr_walk(&A, &D, reach, dist2, bidx, bits, nearv * nearv, half);
        for (Py_ssize_t b = 0; b < nb; b++)
            cov[(Py_ssize_t)br[b] * A.w + bc[b]] =
                (double)objr_popcount(bits[b]) / (double)(ss * ss);
        total += nb;
    }
    result = PyLong_FromSsize_t(total);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(boxes), free(act), free(xc), free(dist2), free(flips);
    free(bidx), free(br), free(bc), free(bits);
    release(&sb);
    release(&cb);
    return result;
}

PyDoc_STRVAR(objraster_composite_doc,
             "objraster_composite(canvas, cw, cov, w, ox, oy, r, g, b, k, opacity) -> int\n\n"
             "Composites a colour (r, g, b straight, 0..1; alpha cov * k * opacity a pixel) over "
             "the premultiplied canvas (float64, 4 a pixel, rows of cw pixels, written) at the "
             "pixels of cov (float64, rows of w) placed at column ox, row oy of it; only where "
             "cov is not 0. Returns those pixels. engine.viewer.objraster.composite_numpy is "
             "the twin.");

static PyObject *objraster_composite(PyObject *self, PyObject *args) {
    PyObject *o_canvas, *o_cov;
    Py_ssize_t cw, w, ox, oy;
    double rgb[3], k, opacity;
    if (!PyArg_ParseTuple(args, "OnOnnnddddd", &o_canvas, &cw, &o_cov, &w, &ox, &oy, &rgb[0],
                          &rgb[1], &rgb[2], &k, &opacity))
        return NULL;
    Buf nb, cb;
    nb.held = cb.held = 0;
    PyObject *result = NULL;
    if (get_buf(o_canvas, &nb, 1, 8, "canvas") < 0 || get_buf(o_cov, &cb, 0, 8, "cov") < 0)
        goto done;
    if (!nb.held || !cb.held || cw < 1 || w < 1 || (nb.b.len / 8) % (4 * cw) ||
        (cb.b.len / 8) % w || ox < 0 || oy < 0 || ox + w > cw ||
        oy + (cb.b.len / 8) / w > (nb.b.len / 8) / (4 * cw)) {
        PyErr_SetString(PyExc_ValueError, "objraster_composite: the arrays or numbers disagree");
        goto done;
    }
    double *canvas = nb.b.buf;
    const double *cov = cb.b.buf;
    Py_ssize_t h = (cb.b.len / 8) / w, touched = 0;
    for (Py_ssize_t r = 0; r < h; r++)
        for (Py_ssize_t c = 0; c < w; c++) {
            double v = cov[r * w + c];
            if (v == 0) continue;
            double a = v * k * opacity, f = 1.0 - a;
            double *px = canvas + 4 * ((oy + r) * cw + ox + c);
            for (int q = 0; q < 3; q++) px[q] = px[q] * f + a * rgb[q];
            px[3] = px[3] * f + a;
            touched++;
        }
    result = PyLong_FromSsize_t(touched);
done:
    release(&nb);
    release(&cb);
    return result;
}

PyDoc_STRVAR(objraster_pixels_doc,
             "objraster_pixels(canvas, cw, out, pitch, rs, gs, bs, as) -> int\n\n"
             "Whether any pixel of the premultiplied canvas (float64, 4 a pixel, rows of cw "
             "pixels) has an alpha other than 0; with out (a writable buffer of pitch bytes a "
             "row, or None), each pixel's channels, rounded half to even from 255 times the "
             "canvas and clamped to 0..255, written into it as a 32-bit number (native byte "
             "order), red shifted left rs bits, green gs, blue bs, alpha as. "
             "engine.viewer.objraster.layer_numpy is the twin.");

static inline uint32_t objr_byte(double v) {
    double x = rint(v * 255.0); /* round half to even, as numpy's rint */
    return x > 0.0 ? (x < 255.0 ? (uint32_t)x : 255u) : 0u;
}

static PyObject *objraster_pixels(PyObject *self, PyObject *args) {
    PyObject *o_canvas, *o_out;
    Py_ssize_t cw, pitch;
    int shift[4];
    if (!PyArg_ParseTuple(args, "OnOniiii", &o_canvas, &cw, &o_out, &pitch, &shift[0],
                          &shift[1], &shift[2], &shift[3]))
        return NULL;
    Buf nb, ob;
    nb.held = ob.held = 0;
    PyObject *result = NULL;
    if (get_buf(o_canvas, &nb, 0, 8, "canvas") < 0 || get_buf(o_out, &ob, 1, 1, "out") < 0)
        goto done;
    Py_ssize_t rows = cw > 0 ? (nb.b.len / 8) / (4 * cw) : 0;
    int bad = !nb.held || cw < 1 || (nb.b.len / 8) % (4 * cw);
    for (int k = 0; k < 4; k++) bad |= shift[k] < 0 || shift[k] > 24 || shift[k] % 8;
    if (ob.held) bad |= pitch < 4 * cw || ob.b.len < (rows ? (rows - 1) * pitch + 4 * cw : 0);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "objraster_pixels: the arrays or numbers disagree");
        goto done;
    }
    const double *canvas = nb.b.buf;
    int any = 0;
    for (Py_ssize_t p = 0; p < rows * cw && !any; p++) any = canvas[4 * p + 3] != 0;
    if (ob.held && any) {
        uint8_t *out = ob.b.buf;
        for (Py_ssize_t r = 0; r < rows; r++)
            for (Py_ssize_t c = 0; c < cw; c++) {
                const double *px = canvas + 4 * (r * cw + c);
                uint32_t v = 0;
                for (int k = 0; k < 4; k++) v |= objr_byte(px[k]) << shift[k];
                memcpy(out + r * pitch + 4 * c, &v, 4);
            }
    }
    result = PyLong_FromLong(any);
done:
    release(&nb);
    release(&ob);
    return result;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* ---- descend: the steps down a field, a walk at a time ----
 *
 * engine.sim.fields.Field.step, node after node: the out-edge whose ticks plus its head's
 * distance are least (ties to the first edge), taken where that total is finite and no
 * more than the node's own distance plus 1e-9 of it (at least of 1); the walk goes on
 * from its head while the head's distance is above 0. The same double sums and
 * comparisons as Field.step's Python floats, so the same steps; tests/test_chaserate.py
 * holds them equal. */

PyDoc_STRVAR(descend_doc,
             "descend(indptr, indices, data, dist, node, most) -> list\n\n"
             "The steps down a field from node, as engine.sim.fields.Field.step takes them, "
             "one after the other: indptr int64, indices int32, data float64 (a CSR graph), "
             "dist float64 (the field, one a node). Each entry is (next node, ticks), or None "
             "where the node has no step down (the list ends there); the walk goes on from "
             "each next node while its distance is above 0, at most most entries.");

static PyObject *descend(PyObject *self, PyObject *args) {
    PyObject *o_indptr, *o_indices, *o_data, *o_dist;
    Py_ssize_t node, most;
    if (!PyArg_ParseTuple(args, "OOOOnn", &o_indptr, &o_indices, &o_data, &o_dist, &node, &most))
        return NULL;
    Buf bufs[4];
    for (int i = 0; i < 4; i++) bufs[i].held = 0;
    PyObject *result = NULL, *out = NULL;
    if (get_buf(o_indptr, &bufs[0], 0, 8, "indptr") < 0 ||
        get_buf(o_indices, &bufs[1], 0, 4, "indices") < 0 ||
        get_buf(o_data, &bufs[2], 0, 8, "data") < 0 ||
        get_buf(o_dist, &bufs[3], 0, 8, "dist") < 0)
        goto done;
    for (int i = 0; i < 4; i++) {
        if (!bufs[i].held) {
            PyErr_SetString(PyExc_TypeError, "descend: no argument may be None");
            goto done;
        }
    }
    const int64_t *indptr = bufs[0].b.buf;
    const int32_t *indices = bufs[1].b.buf;
    const double *data = bufs[2].b.buf, *dist = bufs[3].b.buf;
    Py_ssize_t n = bufs[3].b.len / 8, m = bufs[1].b.len / 4;
    if (bufs[0].b.len / 8 != n + 1 || bufs[2].b.len / 8 != m || node < 0 || node >= n) {
        PyErr_SetString(PyExc_ValueError, "descend: the arrays or node disagree");
        goto done;
    }
    out = PyList_New(0);
    if (!out) goto done;
    int64_t cur = node;
    for (Py_ssize_t k = 0; k < most; k++) {
        int64_t lo = indptr[cur], hi = indptr[cur + 1];
        if (lo < 0 || hi > m || lo > hi) {
            PyErr_SetString(PyExc_ValueError, "descend: indptr out of order");
            goto done;
        }
        int64_t best = -1;
        if (lo < hi) {
            int64_t kk = lo;
            int32_t w0 = indices[lo];
            if (w0 < 0 || w0 >= n) goto bad_index;
            double low = data[lo] + dist[w0];
            for (int64_t j = lo + 1; j < hi; j++) {
                int32_t w = indices[j];
                if (w < 0 || w >= n) goto bad_index;
                double total = data[j] + dist[w];
                if (total < low) {
                    low = total;
                    kk = j;
                }
            }
            double here = dist[cur];
            if (isfinite(low) && low <= here + 1e-9 * (here > 1.0 ? here : 1.0)) best = kk;
        }
        PyObject *item;
        if (best < 0) {
            item = Py_None;
            Py_INCREF(item);
        } else {
            item = Py_BuildValue("(nd)", (Py_ssize_t)indices[best], data[best]);
            if (!item) goto done;
        }
        int bad = PyList_Append(out, item);
        Py_DECREF(item);
        if (bad < 0) goto done;
        if (best < 0) break;
        cur = indices[best];
        if (!(dist[cur] > 0.0)) break;
    }
    result = out;
    out = NULL;
    goto done;
bad_index:
    PyErr_SetString(PyExc_ValueError, "descend: an index out of range");
done:
    Py_XDECREF(out);
    for (int i = 0; i < 4; i++) release(&bufs[i]);
    return result;
}

/* ---- flee_scan, flee_picks: a fleeing quarry's scans of its turn arrays ----
 *
 * engine.sim.flee.flee_choice reads the quarry's turns and the pursuers' (one double a
 * cell) in a dozen numpy passes a choice: the cells it reaches this turn, those of them no
 * pursuer reaches in its next move, the one farthest from the pursuers, the refuge of the
 * largest margin beyond this turn; then the farthest cell in each direction. Each is one
 * pass here, by the same double comparisons and subtractions numpy makes on the same
 * values (ties as its lexsort and argmax break them), so the same cells:
 * tests/test_goalfast.py holds them equal to their numpy twins (engine.sim.flee's
 * flee_scan_plain and sector_picks_plain). The arrays hold no NaN (turns are finite or
 * +inf). */

#define FLEE_NEAR (1.0 + 1e-12) /* reached this turn: turns at most this */
#define FLEE_SAFE (1.0 + 1e-9)  /* no pursuer's next move: its turns above this */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

PyDoc_STRVAR(flee_scan_doc,
             "flee_scan(mine, threat, taken, cross, cross_cost, safe) -> "
             "(near, safe_count, farthest, beyond, beyond_cost)\n\n"
             "One pass over a quarry's turns mine and the pursuers' threat (float64, one a "
             "cell), the cells taken (int64 indexes) left out: how many cells it reaches this "
             "turn (mine <= 1 + 1e-12); those of them with threat > 1 + 1e-9, written in "
             "index order into safe (int64, one a cell; their count returned); of the cells "
             "of this turn, the one of most threat, then least mine, then lowest index (-1: "
             "none); and beyond this turn (cost: mine, but cross_cost on the cell cross, "
             "-1: none), of the cells of finite cost, the one of the largest margin threat - "
             "cost, then least cost, then lowest index, where that margin beats every cell "
             "of this turn's (-1: none), with its cost. engine.sim.flee.flee_scan_plain is "
             "its twin.");

static PyObject *flee_scan(PyObject *self, PyObject *args) {
    PyObject *o_mine, *o_threat, *o_taken, *o_safe;
    Py_ssize_t cross;
    double cross_cost;
    if (!PyArg_ParseTuple(args, "OOOndO", &o_mine, &o_threat, &o_taken, &cross, &cross_cost,
                          &o_safe))
        return NULL;
    Buf bufs[4];
    for (int i = 0; i < 4; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    int64_t *taken = NULL;
    if (get_buf(o_mine, &bufs[0], 0, 8, "mine") < 0 ||
        get_buf(o_threat, &bufs[1], 0, 8, "threat") < 0 ||
        get_buf(o_taken, &bufs[2], 0, 8, "taken") < 0 ||
        get_buf(o_safe, &bufs[3], 1, 8, "safe") < 0)
        goto done;
    for (int i = 0; i < 4; i++) {
        if (!bufs[i].held) {
            PyErr_SetString(PyExc_TypeError, "flee_scan: no array may be None");
            goto done;
        }
    }
    const double *mine = bufs[0].b.buf, *threat = bufs[1].b.buf;
    int64_t *safe = bufs[3].b.buf;
    Py_ssize_t n = bufs[0].b.len / 8, k = bufs[2].b.len / 8;
    if (bufs[1].b.len / 8 != n || bufs[3].b.len / 8 != n || cross < -1 || cross >= n) {
        PyErr_SetString(PyExc_ValueError, "flee_scan: the arrays or cross disagree");
        goto done;
    }
    taken = malloc((size_t)(k ? k : 1) * sizeof(int64_t));
    if (!taken) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(taken, bufs[2].b.buf, (size_t)k * sizeof(int64_t));
    for (Py_ssize_t t = 0; t < k; t++) {
        if (taken[t] < 0 || taken[t] >= n) {
            PyErr_SetString(PyExc_ValueError, "flee_scan: a taken cell out of range");
            goto done;
        }
    }
    qsort(taken, (size_t)k, sizeof(int64_t), cmp_i64);
    Py_ssize_t near = 0, n_safe = 0, farthest = -1, beyond = -1, t = 0;
    double far_threat = 0.0, far_mine = 0.0, near_top = 0.0, top = 0.0, beyond_cost = 0.0;
    int have_top = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        while (t < k && taken[t] < i) t++;
        if (t < k && taken[t] == i) continue; /* another token's: never chosen */
        double mi = mine[i], th = threat[i];
        if (mi <= FLEE_NEAR) {
            double v = th - mi;
            if (!near || v > near_top) near_top = v;
            near++;
            if (th > FLEE_SAFE) safe[n_safe++] = i;
            if (farthest < 0 || th > far_threat || (th == far_threat && mi < far_mine)) {
                farthest = i;
                far_threat = th;
                far_mine = mi;
            }
            continue;
        }
        double cost = i == cross ? cross_cost : mi;
        if (!isfinite(cost)) continue;
        double margin = th - cost;
        if (!have_top || margin > top || (margin == top && cost < beyond_cost)) {
            have_top = 1;
            top = margin;
            beyond = i;
            beyond_cost = cost;
        }
    }
    if (beyond >= 0 && near && !(top > near_top)) beyond = -1;
    result = Py_BuildValue("(nnnnd)", near, n_safe, farthest, beyond, beyond < 0 ? 0.0 : beyond_cost);
done:
    free(taken);
    for (int i = 0; i < 4; i++) release(&bufs[i]);
    return result;
}

PyDoc_STRVAR(flee_picks_doc,
             "flee_picks(safe, sector, mine, threat, sectors, limit, picks) -> count\n\n"
             "Of the cells safe (int64 indexes) in each direction (sector, int64, one a cell "
             "of safe, each from 0 to sectors - 1), the one of most mine, then most threat, "
             "then lowest index (mine and threat float64, one a cell of the map); of those, "
             "at most limit written into picks (int64), most threat first, then least mine, "
             "then lowest index; returns how many. engine.sim.flee.sector_picks_plain is its "
             "twin.");

static PyObject *flee_picks(PyObject *self, PyObject *args) {
    PyObject *o_safe, *o_sector, *o_mine, *o_threat, *o_picks;
    Py_ssize_t sectors, limit;
    if (!PyArg_ParseTuple(args, "OOOOnnO", &o_safe, &o_sector, &o_mine, &o_threat, &sectors,
                          &limit, &o_picks))
        return NULL;
    Buf bufs[5];
    for (int i = 0; i < 5; i++) bufs[i].held = 0;
    PyObject *result = NULL;
    int64_t *best = NULL;
    if (get_buf(o_safe, &bufs[0], 0, 8, "safe") < 0 ||
        get_buf(o_sector, &bufs[1], 0, 8, "sector") < 0 ||
        get_buf(o_mine, &bufs[2], 0, 8, "mine") < 0 ||
        get_buf(o_threat, &bufs[3], 0, 8, "threat") < 0 ||
        get_buf(o_picks, &bufs[4], 1, 8, "picks") < 0)
        goto done;
    for (int i = 0; i < 5; i++) {
        if (!bufs[i].held) {
            PyErr_SetString(PyExc_TypeError, "flee_picks: no array may be None");
            goto done;
        }
    }
    const int64_t *safe = bufs[0].b.buf, *sector = bufs[1].b.buf;
    const double *mine = bufs[2].b.buf, *threat = bufs[3].b.buf;
    int64_t *picks = bufs[4].b.buf;
    Py_ssize_t ns = bufs[0].b.len / 8, n = bufs[2].b.len / 8;
    if (bufs[1].b.len / 8 != ns || bufs[3].b.len / 8 != n || sectors < 1 || limit < 0 ||
        bufs[4].b.len / 8 < limit) {
        PyErr_SetString(PyExc_ValueError, "flee_picks: the arrays disagree");
        goto done;
    }
    best = malloc((size_t)sectors * sizeof(int64_t));
    if (!best) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t s = 0; s < sectors; s++) best[s] = -1;
    for (Py_ssize_t j = 0; j < ns; j++) {
        int64_t i = safe[j], s = sector[j];
        if (i < 0 || i >= n || s < 0 || s >= sectors) {
            PyErr_SetString(PyExc_ValueError, "flee_picks: a cell or sector out of range");
            goto done;
        }
        int64_t c = best[s];
        if (c < 0 || mine[i] > mine[c] ||
            (mine[i] == mine[c] && (threat[i] > threat[c] || (threat[i] == threat[c] && i < c))))
            best[s] = i;
    }
    /* The directions' cells, most threat first (then least mine, lowest index): an
     * insertion sort of at most sectors cells. */
    Py_ssize_t count = 0;
    for (Py_ssize_t s = 0; s < sectors; s++) {
        int64_t i = best[s];
        if (i < 0) continue;
        Py_ssize_t at = count++;
        while (at > 0) {
            int64_t c = best[at - 1];
            int before = threat[i] > threat[c] ||
                         (threat[i] == threat[c] && (mine[i] < mine[c] || (mine[i] == mine[c] && i < c)));
            if (!before) break;
            best[at] = c;
            at--;
        }
        best[at] = i;
    }
    if (count > limit) count = limit;
    for (Py_ssize_t j = 0; j < count; j++) picks[j] = best[j];
    result = PyLong_FromSsize_t(count);
done:
    free(best);
    for (int i = 0; i < 5; i++) release(&bufs[i]);
    return result;
}

/* ---- lean buckets: the pool and arrays of field_upto's and field_spread_upto's searches ----
 *
 * What field_upto and field_spread_upto (below) search by: field()'s Dial and
 * field_spread()'s Dinitz buckets again, the same distances. Those first read every edge
 * to find the most steps (or ticks) of one, a pass as long as the search itself on a small
 * map; here the caller gives that bound, worked out once per graph
 * (engine.sim.spread.edge_bound), and each edge is checked against it as it is read. The
 * buckets' entries share one pool (a node and the next entry of its bucket) instead of an
 * array each. tests/test_goalfast.py holds the whole searches' distances equal, bit for
 * bit, to field()'s and field_spread()'s, and to scipy's Dijkstra. */

typedef struct {
    int32_t *heads, *node, *next;
    Py_ssize_t used, cap, most;
} LeanPool;

/* The pool starts with room for first entries (the callers: twice the nodes, a search
 * on a movement graph pushes a node about once) and grows as they come, up to most (each
 * edge relaxed once, the sources, and a resumed search's nodes put back: no search pushes
 * more). */

static int lean_pool(LeanPool *p, Py_ssize_t nb, Py_ssize_t first, Py_ssize_t most) {
    Py_ssize_t cap = first < most ? first : most;
    if (cap < 1) cap = 1;
    p->heads = malloc((size_t)nb * sizeof(int32_t));
    p->node = malloc((size_t)cap * sizeof(int32_t));
    p->next = malloc((size_t)cap * sizeof(int32_t));
    p->used = 0;
    p->cap = cap;
    p->most = most;
    if (!p->heads || !p->node || !p->next) return -1;
    for (Py_ssize_t k = 0; k < nb; k++) p->heads[k] = -1;
    return 0;
}

#if defined(__GNUC__)
#define LEAN_RARE __attribute__((noinline, cold))
#else
#define LEAN_RARE
#endif

static LEAN_RARE int lean_grow(LeanPool *p) {
    if (p->cap >= p->most) return -1;
    Py_ssize_t cap = p->cap * 2 < p->most ? p->cap * 2 : p->most;
    int32_t *node = realloc(p->node, (size_t)cap * sizeof(int32_t));
    if (!node) return -1;
    p->node = node;
    int32_t *next = realloc(p->next, (size_t)cap * sizeof(int32_t));
    if (!next) return -1;
    p->next = next;
    p->cap = cap;
    return 0;
}

static void lean_pool_free(LeanPool *p) {
    free(p->heads);
    free(p->node);
    free(p->next);
}

static inline int lean_push(LeanPool *p, int64_t bucket, int32_t v) {
    if (p->used >= p->cap && lean_grow(p) < 0) return -1;
    int32_t e = (int32_t)p->used++;
    p->node[e] = v;
    p->next[e] = p->heads[bucket];
    p->heads[bucket] = e;
    return 0;
}

/* The arrays of field_upto / field_spread_upto: indptr, indices, ticks (int32 steps or
 * float64), sources, dist; -1 with the error set where they disagree. */
static int lean_bufs(Buf *bufs, PyObject **objs, Py_ssize_t tick_size, const char *name) {
    for (int i = 0; i < 5; i++) bufs[i].held = 0;
    if (get_buf(objs[0], &bufs[0], 0, 8, "indptr") < 0 ||
        get_buf(objs[1], &bufs[1], 0, 4, "indices") < 0 ||
        get_buf(objs[2], &bufs[2], 0, tick_size, "ticks") < 0 ||
        get_buf(objs[3], &bufs[3], 0, 8, "sources") < 0 ||
        get_buf(objs[4], &bufs[4], 1, 8, "dist") < 0)
        return -1;
    for (int i = 0; i < 5; i++) {
        if (!bufs[i].held) {
            PyErr_Format(PyExc_TypeError, "%s: no array may be None", name);
            return -1;
        }
    }
    Py_ssize_t n = bufs[4].b.len / 8, m = bufs[1].b.len / 4;
    const int64_t *indptr = bufs[0].b.buf;
    if (bufs[0].b.len / 8 != n + 1 || bufs[2].b.len / tick_size != m || indptr[0] != 0 ||
        indptr[n] != m || n >= INT32_MAX || m + bufs[3].b.len / 8 >= INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: indptr, indices, ticks and dist disagree", name);
        return -1;
    }
    return 0;
}

/* ---- field_upto, field_spread_upto: fields settled up to a node, grown on demand ----
 *
 * Dial's and Dinitz's lean buckets (above), given the bound on an edge, with two more
 * arguments: stop, a node (-1: none), and after, where a previous call left the
 * field (-1: a fresh field, dist filled with inf by the caller). The search ends once the
 * bucket in which stop is settled is done (or the queue is empty): every node of a
 * distance up to the greatest settled one, the value returned, then holds its final
 * distance, and every other node a greater one (the least sum over the settled nodes'
 * edges, or inf), at least its final one. A later call given that value as after takes the
 * search up again from dist alone (the unsettled nodes of finite distance go back to their
 * buckets), so a field is grown in steps and ends as the whole one, bit for bit; +inf
 * returned: the whole field. Dial keeps its tentative distances in whole steps and writes a
 * node's distance into dist as it settles it; where it stops short, the nodes still queued get
 * their tentative ones there too (exact: whole steps times step, below 2**53 by the caller's
 * check), read back from there on a resume.
 * tests/test_fieldfast.py holds them equal to the whole search's (stop -1), which
 * tests/test_goalfast.py holds equal to field()'s, field_spread()'s and scipy's. */

/* The buckets of a resumed search: every node of dist above after and finite, in the
 * bucket of its tentative distance (at, from cur and below cur + nb), else -2 (the error
 * set: dist is not a previous call's); -1 out of memory. */
static int lean_requeue(LeanPool *pool, const double *dist, Py_ssize_t n, double after,
                        double unit, int64_t cur, int64_t nb, Py_ssize_t *pending,
                        const char *name) {
    const int64_t mask = nb - 1;
    for (Py_ssize_t v = 0; v < n; v++) {
        double d = dist[v];
        if (d <= after || d == INFINITY) continue;
        double q = d / unit;
        if (!(q >= (double)cur && q < (double)(cur + nb))) {
            PyErr_Format(PyExc_ValueError, "%s: dist is not a previous call's", name);
            return -2;
        }
        if (lean_push(pool, (int64_t)q & mask, (int32_t)v) < 0) return -1;
        (*pending)++;
    }
    return 0;
}

PyDoc_STRVAR(field_upto_doc,
             "field_upto(indptr, indices, steps, span, sources, dist, step, stop, after) -> "
             "limit\n\n"
             "field(indptr, indices, data, sources, dist, steps, step)'s distances (Dial's "
             "buckets over whole steps, each node's steps times step) where no edge is more "
             "than span steps (ValueError at an edge that is, or a negative step or an index "
             "out of range): indptr int64, indices int32, steps int32, sources int64, dist "
             "float64. Into dist, up to the bucket where node stop is settled (-1: all of "
             "them): returns the greatest distance settled (every node at most that far holds "
             "its final distance, every other one at least its final one), or inf where the "
             "field is whole. after: -1 for a fresh field (dist filled with inf by the "
             "caller), else what a previous call on dist returned, to go on from there. "
             "Called by engine.sim.spread and engine.sim.grow.");

static PyObject *field_upto(PyObject *self, PyObject *args) {
    PyObject *objs[5];
    Py_ssize_t span, stop;
    double step, after;
    if (!PyArg_ParseTuple(args, "OOOnOOdnd", &objs[0], &objs[1], &objs[2], &span, &objs[3],
                          &objs[4], &step, &stop, &after))
        return NULL;
    Buf bufs[5];
    PyObject *result = NULL;
    LeanPool pool = {0};
    int64_t *at = NULL;
    if (lean_bufs(bufs, objs, 4, "field_upto") < 0) goto done;
    const int64_t *indptr = bufs[0].b.buf, *sources = bufs[3].b.buf;
    const int32_t *indices = bufs[1].b.buf, *steps = bufs[2].b.buf;
    double *dist = bufs[4].b.buf;
    Py_ssize_t n = bufs[4].b.len / 8, m = bufs[1].b.len / 4, n_src = bufs[3].b.len / 8;
    if (span < 0 || span > (1 << 24) || !(step > 0.0) || step == INFINITY || stop < -1 ||
        stop >= n || !(after == -1.0 || (after >= 0.0 && after < INFINITY))) {
        PyErr_SetString(PyExc_ValueError, "field_upto: span, step, stop or after out of range");
        goto done;
    }
    if (stop >= 0 && after >= 0.0 && dist[stop] <= after) { /* settled already */
        result = PyFloat_FromDouble(after);
        goto done;
    }
    Py_ssize_t nb = 1;
    while (nb <= span) nb <<= 1; /* a power of two: the bucket by a mask */
    const int64_t mask = nb - 1;
    at = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!at || lean_pool(&pool, nb, 2 * n + n_src + 64, m + n_src + n) < 0) goto nomem;
    Py_ssize_t pending = 0;
    int64_t cur = 0;
    if (after < 0.0) {
        for (Py_ssize_t v = 0; v < n; v++) at[v] = INT64_MAX;
        for (Py_ssize_t k = 0; k < n_src; k++) {
            int64_t v = sources[k];
            if (v < 0 || v >= n) {
                PyErr_SetString(PyExc_ValueError, "field_upto: a source out of range");
                goto done;
            }
            if (dist[v] > 0.0) {
                dist[v] = 0.0;
                at[v] = 0;
                if (lean_push(&pool, 0, (int32_t)v) < 0) goto nomem;
                pending++;
            }
        }
    } else {
        double q = after / step;
        cur = (int64_t)q + 1;
        if ((double)(cur - 1) != q || (double)(cur - 1) * step != after) {
            PyErr_SetString(PyExc_ValueError, "field_upto: after is not a previous call's");
            goto done;
        }
        /* (dist's values are whole steps times step, exact: their steps again, exactly) */
        for (Py_ssize_t v = 0; v < n; v++)
            at[v] = dist[v] == INFINITY ? INT64_MAX : (int64_t)(dist[v] / step);
        int got = lean_requeue(&pool, dist, n, after, step, cur, nb, &pending, "field_upto");
        if (got == -1) goto nomem;
        if (got < 0) goto done;
    }
    int reached = 0;
    double limit = INFINITY;
    for (; pending; cur++) {
        int32_t *head = &pool.heads[cur & mask];
        while (*head >= 0) {
            int32_t e = *head;
            *head = pool.next[e];
            pending--;
            int32_t v = pool.node[e];
            if (at[v] != cur) continue; /* reached sooner since */
            dist[v] = (double)cur * step;  /* settled: its distance, written once */
            if (v == stop) reached = 1;
            int64_t lo = indptr[v], hi = indptr[v + 1];
            if (lo < 0 || hi > m || lo > hi) {
                PyErr_SetString(PyExc_ValueError, "field_upto: indptr out of order");
                goto done;
            }
            for (int64_t j = lo; j < hi; j++) {
                int32_t w = indices[j], s = steps[j];
                if ((uint32_t)w >= (uint32_t)n || (uint32_t)s > (uint32_t)span) {
                    PyErr_SetString(PyExc_ValueError,
                                    "field_upto: an index out of range, or a step out of "
                                    "0..span");
                    goto done;
                }
                int64_t nd = cur + s;
                if (nd < at[w]) {
                    at[w] = nd;
                    if (lean_push(&pool, nd & mask, w) < 0) goto nomem;
                    pending++;
                }
            }
        }
        if (reached) {
            if (pending) {
                limit = (double)cur * step;
                /* A node reached but not settled has an entry still pooled: its distance so
                 * far goes to dist, where a resumed search (after) finds it. */
                for (Py_ssize_t b = 0; b < nb; b++)
                    for (int32_t e = pool.heads[b]; e >= 0; e = pool.next[e]) {
                        int32_t v = pool.node[e];
                        dist[v] = (double)at[v] * step;
                    }
            }
            break;
        }
    }
    result = PyFloat_FromDouble(limit);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(at);
    lean_pool_free(&pool);
    for (int i = 0; i < 5; i++) release(&bufs[i]);
    return result;
}

PyDoc_STRVAR(field_spread_upto_doc,
             "field_spread_upto(indptr, indices, data, most, sources, dist, width, stop, after) "
             "-> limit\n\n"
             "field_spread(indptr, indices, data, sources, dist, width)'s distances (Dinitz's "
             "buckets of width ticks) where no edge takes more than most ticks (ValueError at "
             "an edge that does, or one under 2 * width, not finite; and where width and most "
             "make too many buckets, as field_spread): indptr int64, indices int32, data "
             "float64, sources int64, dist float64. Into dist, up to the bucket where node "
             "stop is settled (-1: all of them): returns the greatest distance settled (every "
             "node at most that far holds its final distance, every other one at least its "
             "final one), or inf where the field is whole. after: -1 for a fresh field (dist "
             "filled with inf by the caller), else what a previous call on dist returned, to "
             "go on from there. Called by engine.sim.spread and engine.sim.grow.");

static PyObject *field_spread_upto(PyObject *self, PyObject *args) {
    PyObject *objs[5];
    double most, width, after;
    Py_ssize_t stop;
    if (!PyArg_ParseTuple(args, "OOOdOOdnd", &objs[0], &objs[1], &objs[2], &most, &objs[3],
                          &objs[4], &width, &stop, &after))
        return NULL;
    Buf bufs[5];
    PyObject *result = NULL;
    LeanPool pool = {0};
    uint8_t *taken = NULL;
    if (lean_bufs(bufs, objs, 8, "field_spread_upto") < 0) goto done;
    const int64_t *indptr = bufs[0].b.buf, *sources = bufs[3].b.buf;
    const int32_t *indices = bufs[1].b.buf;
    const double *data = bufs[2].b.buf;
    double *dist = bufs[4].b.buf;
    Py_ssize_t n = bufs[4].b.len / 8, m = bufs[1].b.len / 4, n_src = bufs[3].b.len / 8;
    if (!(width > 0.0) || !(width - width == 0.0) || !(most >= 2.0 * width) ||
        !(most - most == 0.0) || (double)(n + 1) * (most / width + 2.0) >= SPREAD_MOST_BUCKETS ||
        stop < -1 || stop >= n || !(after == -1.0 || (after >= 0.0 && after < INFINITY))) {
        PyErr_SetString(PyExc_ValueError,
                        "field_spread_upto: width, most, stop or after out of range");
        goto done;
    }
    if (stop >= 0 && after >= 0.0 && dist[stop] <= after) { /* settled already */
        result = PyFloat_FromDouble(after);
        goto done;
    }
    Py_ssize_t nb = 1;
    while ((double)nb <= most / width + 2.0) nb <<= 1; /* a power of two: the bucket by a mask */
    const int64_t mask = nb - 1;
    const double least = 2.0 * width;
    taken = malloc((size_t)(n ? n : 1));
    if (!taken || lean_pool(&pool, nb, 2 * n + n_src + 64, m + n_src + n) < 0) goto nomem;
    Py_ssize_t pending = 0;
    int64_t cur = 0;
    double top = after;
    if (after < 0.0) {
        memset(taken, 0, (size_t)n);
        for (Py_ssize_t k = 0; k < n_src; k++) {
            int64_t v = sources[k];
            if (v < 0 || v >= n) {
                PyErr_SetString(PyExc_ValueError, "field_spread_upto: a source out of range");
                goto done;
            }
            if (dist[v] > 0.0) {
                dist[v] = 0.0;
                if (lean_push(&pool, 0, (int32_t)v) < 0) goto nomem;
                pending++;
            }
        }
    } else {
        for (Py_ssize_t v = 0; v < n; v++) taken[v] = dist[v] <= after;
        cur = (int64_t)(after / width) + 1;
        int got = lean_requeue(&pool, dist, n, after, width, cur, nb, &pending,
                               "field_spread_upto");
        if (got == -1) goto nomem;
        if (got < 0) goto done;
    }
    int reached = 0;
    double limit = INFINITY;
    for (; pending; cur++) {
        int32_t *head = &pool.heads[cur & mask];
        while (*head >= 0) {
            int32_t e = *head;
            *head = pool.next[e];
            pending--;
            int32_t v = pool.node[e];
            if (taken[v]) continue; /* reached sooner, and taken from an earlier bucket */
            taken[v] = 1;
            double d = dist[v];
            if (d > top) top = d;
            if (v == stop) reached = 1;
            int64_t lo = indptr[v], hi = indptr[v + 1];
            if (lo < 0 || hi > m || lo > hi) {
                PyErr_SetString(PyExc_ValueError, "field_spread_upto: indptr out of order");
                goto done;
            }
            for (int64_t j = lo; j < hi; j++) {
                int32_t w = indices[j];
                double t = data[j];
                if ((uint32_t)w >= (uint32_t)n || !(t >= least) || !(t <= most)) {
                    PyErr_SetString(PyExc_ValueError,
                                    "field_spread_upto: an index out of range, or a tick out of "
                                    "2 * width..most");
                    goto done;
                }
                double nd = d + t;
                if (nd < dist[w]) {
                    dist[w] = nd;
                    if (lean_push(&pool, (int64_t)(nd / width) & mask, w) < 0) goto nomem;
                    pending++;
                }
            }
        }
        if (reached) {
            if (pending) limit = top;
            break;
        }
    }
    result = PyFloat_FromDouble(limit);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(taken);
    lean_pool_free(&pool);
    for (int i = 0; i < 5; i++) release(&bufs[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, search_doc},
    {"field", field, METH_VARARGS, field_doc},
    {"csv_u32", csv_u32, METH_VARARGS, csv_u32_doc},
    {"reach_within", reach_within, METH_VARARGS, reach_within_doc},
    {"held_region", held_region, METH_VARARGS, held_region_doc},
    {"field_spread", field_spread, METH_VARARGS, field_spread_doc},
    {"json_rows", json_rows, METH_VARARGS, json_rows_doc},
    {"pred_chain", pred_chain, METH_VARARGS, pred_chain_doc},
    {"field_toward", field_toward, METH_VARARGS, field_toward_doc},
    {"toward_kappa", toward_kappa, METH_VARARGS, toward_kappa_doc},
    {"claim_reach", claim_reach, METH_VARARGS, claim_reach_doc},
    {"threat_move", threat_move, METH_VARARGS, threat_move_doc},
    {"objraster_coverage", objraster_coverage, METH_VARARGS, objraster_coverage_doc},
    {"objraster_composite", objraster_composite, METH_VARARGS, objraster_composite_doc},
    {"objraster_pixels", objraster_pixels, METH_VARARGS, objraster_pixels_doc},
    {"descend", descend, METH_VARARGS, descend_doc},
    {"flee_scan", flee_scan, METH_VARARGS, flee_scan_doc},
    {"flee_picks", flee_picks, METH_VARARGS, flee_picks_doc},
    {"field_upto", field_upto, METH_VARARGS, field_upto_doc},
    {"field_spread_upto", field_spread_upto, METH_VARARGS, field_spread_upto_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "engine._kernel",
    "The movement search's inner loop, compiled (see engine/_kernel.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
