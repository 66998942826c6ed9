"""Charts of batches and sweeps (matplotlib, Agg; never pygame), as PNG and SVG.

* :func:`turns_figure`: a batch's runs by the turn they ended on, stacked by outcome (the
  ``turns.png`` that ``run`` writes);
* :func:`survival_figure`: a batch's P(captured by turn t) and P(escaped by turn t), each
  with its 95% Wilson band;
* :func:`sweep_figure`: a sweep's outcome rate against each varied parameter, with 95%
  interval bars (one line per combination of the other parameters);
* :func:`heatmap_figure`: for a sweep of two parameters, the rate over the grid;
* :func:`paired_figure`: a sweep's paired differences, each point against its reference.

Each builder returns a :class:`matplotlib.figure.Figure` (titled, axes labelled, with a
legend where there are several lines; constrained layout keeps labels apart);
:func:`save_figure` writes it through :mod:`engine.safeio` (whole or not at all).
:data:`OUTCOME_COLOURS` is the one colour table of the outcomes, the outcome map's
(engine.viewer.plots) too.
"""

from __future__ import annotations

import io
import itertools
import json
import os
from collections import Counter
from collections.abc import Iterable
from typing import Any

from engine.batch import wilson
from engine.errors import MissingExtra
from engine.safeio import write_bytes

#: Each outcome's colour, in every batch chart and on the map of outcomes.
OUTCOME_COLOURS = {"capture": "#d6403a", "escape": "#3c82e6", "timeout": "#969696"}
#: The outcomes a turns chart stacks, bottom up.
OUTCOMES = ("capture", "escape", "timeout")
#: At most about this many labelled ticks on a turns chart's axis.
TURN_TICKS = 15
#: The outcomes a survival chart draws, and their words.
SURVIVAL = (("capture", "captured"), ("escape", "escaped"))
#: At most this many lines in one sweep panel; more combinations are pooled.
MAX_LINES = 8


def outcome_rgb(outcome: str) -> tuple[int, int, int]:
    """An outcome's colour (:data:`OUTCOME_COLOURS`) as 0-255 red, green and blue."""
    hexa = OUTCOME_COLOURS[outcome].lstrip("#")
    return (int(hexa[0:2], 16), int(hexa[2:4], 16), int(hexa[4:6], 16))


def charts_available() -> bool:
    """Whether matplotlib (the analysis extra) is installed: without it no chart is drawn
    (``run`` still writes its map of outcomes, which pygame draws)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def need_charts(what: str = "charts") -> None:
    """One line naming the analysis extra where matplotlib is not installed."""
    if not charts_available():
        raise MissingExtra("analysis", what)


def _figure(width: float, height: float) -> Any:
    need_charts()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)  # the Agg canvas: no display, no pyplot state
    return fig


def save_figure(fig: Any, stem: str, formats: Iterable[str] = ("png", "svg")) -> list[str]:
    """``stem.png`` and ``stem.svg`` (rendered into memory, then each written whole)."""
    written = []
    for fmt in formats:
        meta = {"Software": None} if fmt == "png" else None
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=meta)
        path = f"{stem}.{fmt}"
        write_bytes(path, buf.getvalue(), "--out")
        written.append(path)
    return written


def figure_bytes(fig: Any, fmt: str = "png") -> bytes:
    """A figure rendered into memory (a notebook's ``_repr_png_``), nothing written."""
    meta = {"Software": None} if fmt == "png" else None
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata=meta)
    return buf.getvalue()


def new_figure(width: float, height: float) -> Any:
    """A blank Figure on the Agg canvas (no display, no pyplot state), constrained layout."""
    return _figure(width, height)


# --------------------------------------------------------------------------- a batch


def turns_figure(records: Iterable[dict[str, Any]], title: str = "") -> Any:
    """Stacked bars: how many runs ended in each outcome after each number of turns (read
    in one pass, kept as counts: a batch of any size)."""
    need_charts()
    from matplotlib.ticker import MaxNLocator

    totals: Counter[str] = Counter()
    by_turn: dict[int, Counter[str]] = {}
    for r in records:
        totals[r["outcome"]] += 1
        by_turn.setdefault(int(r["turns"]), Counter())[r["outcome"]] += 1
    seen = sorted(by_turn) or [0]
    turns = list(range(seen[0], seen[-1] + 1))
    fig = _figure(9.0, 5.2)
    ax = fig.add_subplot()
    base = [0] * len(turns)
    for outcome in OUTCOMES:
        counts = [by_turn.get(t, Counter())[outcome] for t in turns]
        ax.bar(
            turns,
            counts,
            bottom=base,
            width=0.9,
            color=OUTCOME_COLOURS[outcome],
            label=f"{outcome} {totals[outcome]}",
        )
        base = [b + c for b, c in zip(base, counts, strict=True)]
    ax.set_xlim(turns[0] - 0.5, turns[-1] + 0.5)
    ax.set_ylim(0, max(max(base), 1) * 1.08)  # room above the tallest bar
    ax.set_xticks(turns[:: max(1, len(turns) // TURN_TICKS)])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("turns")
    ax.set_ylabel("runs")
    ax.grid(True, axis="y", alpha=0.3)
    # Above the bars, not on them: the timeouts stack at the turn limit, the right edge.
    ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=len(OUTCOMES),
        fontsize="small",
        frameon=False,
    )
    n = sum(totals.values())
    ax.set_title(f"{title + ': ' if title else ''}turns to each outcome, {n} runs", pad=22)
    return fig


def survival_counts(records: Iterable[dict[str, Any]]) -> tuple[int, dict[str, Counter[int]]]:
    """(runs, outcome -> Counter of the turn it ended on)."""
    n = 0
    by: dict[str, Counter[int]] = {}
    for r in records:
        n += 1
        by.setdefault(r["outcome"], Counter())[int(r["turns"])] += 1
    return n, by


def survival_curve(
    n: int, hist: Counter[int], last: int
) -> list[tuple[int, int, float, float, float]]:
    """(t, ended by t, rate, lo, hi) for t = 0..last."""
    out = []
    done = 0
    for t in range(last + 1):
        done += hist.get(t, 0)
        lo, hi = wilson(done, n)
        out.append((t, done, done / n if n else 0.0, lo, hi))
    return out


def survival_figure(records: Iterable[dict[str, Any]], title: str = "") -> Any:
    """P(captured by turn t) and P(escaped by turn t) with 95% Wilson bands."""
    n, by = survival_counts(records)
    last = max((t for h in by.values() for t in h), default=1)
    fig = _figure(7.0, 4.2)
    ax = fig.add_subplot()
    for outcome, word in SURVIVAL:
        curve = survival_curve(n, by.get(outcome, Counter()), last)
        ts = [c[0] for c in curve]
        ax.step(
            ts,
            [c[2] for c in curve],
            where="post",
            color=OUTCOME_COLOURS[outcome],
            label=f"P({word} by turn t)",
        )
        ax.fill_between(
            ts,
            [c[3] for c in curve],
            [c[4] for c in curve],
            step="post",
            color=OUTCOME_COLOURS[outcome],
            alpha=0.2,
            label=f"95% interval ({word})",
        )
    ax.set_xlim(0, max(last, 1))
    ax.set_ylim(0, 1)
    ax.set_xlabel("turn t")
    ax.set_ylabel("probability")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="center right", fontsize="small")
    ax.set_title(f"{title + ': ' if title else ''}P(captured / escaped by turn t), {n} runs")
    return fig


# --------------------------------------------------------------------------- a sweep


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _pooled(
    points: list[dict[str, Any]], outcome: str, keep: list[str]
) -> dict[tuple[str, ...], tuple[int, int]]:
    """(values of ``keep``) -> (outcome count, runs), summed over the other parameters."""
    out: dict[tuple[str, ...], tuple[int, int]] = {}
    for p in points:
        key = tuple(_label(p["params"][k]) for k in keep)
        k, n = out.get(key, (0, 0))
        out[key] = (k + int(p["outcomes"].get(outcome, 0)), n + int(p["runs"]))
    return out


def sweep_figure(doc: dict[str, Any], outcome: str = "capture") -> Any:
    """The ``outcome`` rate against each varied parameter (a panel each), with 95% Wilson
    interval bars; a line per combination of the other parameters (pooled past
    ``MAX_LINES``)."""
    params = [p["name"] for p in doc["params"]]
    values = {p["name"]: [_label(v) for v in p["values"]] for p in doc["params"]}
    points = doc["points"]
    fig = _figure(max(5.5, 5.0 * len(params)), 4.2)
    axes = fig.subplots(1, len(params), squeeze=False)[0]
    for ax, name in zip(axes, params, strict=True):
        others = [o for o in params if o != name]
        present = {tuple(_label(p["params"][o]) for o in others) for p in points}
        combos = [c for c in itertools.product(*(values[o] for o in others)) if c in present]
        pooled = "all points"
        if len(combos) > MAX_LINES:
            pooled = "pooled over " + ", ".join(others)
            others, combos = [], [()]
        table = _pooled(points, outcome, [name, *others])
        xs = list(range(len(values[name])))
        width = 0.3 / max(1, len(combos))
        for j, combo in enumerate(combos):
            rates, lows, highs, at = [], [], [], []
            for i, v in enumerate(values[name]):
                got = table.get((v, *combo))
                if got is None:
                    continue
                k, n = got
                lo, hi = wilson(k, n)
                rate = k / n if n else 0.0
                rates.append(rate)
                lows.append(rate - lo)
                highs.append(hi - rate)
                at.append(xs[i] + (j - (len(combos) - 1) / 2) * width)
            label = ", ".join(f"{o}={c}" for o, c in zip(others, combo, strict=True)) or pooled
            ax.errorbar(at, rates, yerr=[lows, highs], marker="o", capsize=4, label=label)
        ax.set_xticks(xs, values[name])
        ax.set_xlabel(name)
        ax.set_ylabel(f"{outcome} rate (95% interval)")
        ax.set_ylim(-0.03, 1.05)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{outcome} rate by {name}")
        ax.legend(fontsize="small", loc="best")
    fig.suptitle(
        f"{doc.get('name') or os.path.basename(doc['scenario'])}: {doc['runs']} runs a point"
    )
    return fig


def heatmap_figure(doc: dict[str, Any], outcome: str = "capture") -> Any:
    """For two varied parameters: the ``outcome`` rate over the grid, each cell labelled
    with its rate and 95% interval."""
    import numpy as np

    if len(doc["params"]) != 2:
        raise ValueError("a heatmap needs exactly two varied parameters")
    (a, b) = [p["name"] for p in doc["params"]]
    va = [_label(v) for v in doc["params"][0]["values"]]
    vb = [_label(v) for v in doc["params"][1]["values"]]
    table = _pooled(doc["points"], outcome, [a, b])
    grid = np.full((len(va), len(vb)), np.nan)
    fig = _figure(max(5.5, 1.6 * len(vb) + 2.5), max(3.5, 0.9 * len(va) + 1.8))
    ax = fig.add_subplot()
    for i, x in enumerate(va):
        for j, y in enumerate(vb):
            if (x, y) in table:
                k, n = table[(x, y)]
                grid[i, j] = k / n if n else 0.0
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for (i, j), rate in np.ndenumerate(grid):
        if rate == rate:
            k, n = table[(va[i], vb[j])]
            lo, hi = wilson(k, n)
            ax.text(
                j,
                i,
                f"{100 * rate:.0f}%\n[{100 * lo:.0f}-{100 * hi:.0f}]",
                ha="center",
                va="center",
                fontsize="small",
                color="white" if rate < 0.6 else "black",
            )
    ax.set_xticks(range(len(vb)), vb)
    ax.set_yticks(range(len(va)), va)
    ax.set_xlabel(b)
    ax.set_ylabel(a)
    ax.set_title(f"{outcome} rate (95% interval), {doc['runs']} runs a point")
    fig.colorbar(image, ax=ax, label=f"{outcome} rate")
    return fig


def paired_figure(doc: dict[str, Any]) -> Any:
    """A sweep's paired differences (``doc["paired"]``: engine.batch.paired): per point, the
    capture rate's difference from its reference in percentage points with its 95% interval
    (Newcombe's paired score), and beside it the mean turns' with its paired t interval."""
    paired = doc["paired"]
    outcome = paired.get("outcome", "capture")
    by_dir = {p["point"]: p for p in doc["points"]}
    rows = [r for r in paired["rows"] if r["pairs"]]
    labels = [", ".join(_label(v) for v in by_dir[r["point"]]["params"].values()) for r in rows]
    fig = _figure(max(7.0, 1.1 * len(rows) + 4.0), 4.4)
    left, right = fig.subplots(1, 2, squeeze=True)
    xs = list(range(len(rows)))
    for ax, key, scale, what in (
        (left, outcome, 100.0, f"{outcome} rate difference (points)"),
        (right, "turns", 1.0, "mean turns difference"),
    ):
        mids, lows, highs, at = [], [], [], []
        for x, r in zip(xs, rows, strict=True):
            d = r[key]
            if d["lo"] is None:
                continue
            mids.append(scale * d["diff"])
            lows.append(scale * (d["diff"] - d["lo"]))
            highs.append(scale * (d["hi"] - d["diff"]))
            at.append(x)
        ax.axhline(0.0, color="#555555", linewidth=0.8)
        ax.errorbar(at, mids, yerr=[lows, highs], fmt="o", capsize=4, color="#d6403a")
        ax.set_xticks(xs, labels, rotation=30 if len(rows) > 4 else 0, ha="right")
        ax.set_xlim(-0.6, max(len(rows) - 0.4, 0.6))
        ax.set_ylabel(f"{what}, 95% interval")
        ax.grid(True, axis="y", alpha=0.3)
    names = ", ".join(p["name"] for p in doc["params"])
    if paired["against"] == "first":
        first = doc["points"][0]["params"]
        against = "the first (" + ", ".join(f"{k}={_label(v)}" for k, v in first.items()) + ")"
    else:
        against = "the one before it"
    left.set_xlabel(names)
    right.set_xlabel(names)
    name = doc.get("name") or os.path.basename(doc["scenario"])
    fig.suptitle(f"{name}: each point against {against}, run for run on the same seeds")
    return fig


def write_turns_chart(out_dir: str, records: Iterable[dict[str, Any]], title: str = "") -> str:
    """``turns.png`` in a batch folder (:func:`turns_figure`): ``run`` writes it."""
    return save_figure(turns_figure(records, title), os.path.join(out_dir, "turns"), ("png",))[0]


def write_batch_charts(
    out_dir: str, records: Iterable[dict[str, Any]], title: str = ""
) -> list[str]:
    """``survival.png`` and ``survival.svg`` in a batch folder."""
    return save_figure(survival_figure(records, title), os.path.join(out_dir, "survival"))


def write_sweep_charts(out_dir: str, doc: dict[str, Any], outcome: str = "capture") -> list[str]:
    """``rates.png/.svg`` (and ``heatmap.png/.svg`` for two parameters) in a sweep folder,
    and ``paired.png/.svg`` where the sweep has paired differences (:func:`paired_figure`)."""
    files = save_figure(sweep_figure(doc, outcome), os.path.join(out_dir, "rates"))
    if len(doc["params"]) == 2:
        files += save_figure(heatmap_figure(doc, outcome), os.path.join(out_dir, "heatmap"))
    if doc.get("paired") and any(r["pairs"] for r in doc["paired"]["rows"]):
        files += save_figure(paired_figure(doc), os.path.join(out_dir, "paired"))
    return files
