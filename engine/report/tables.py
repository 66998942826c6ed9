"""``tacgrid report DIR``: the summary of a batch or sweep folder as a table (rich), or its
JSON document; and the small HTML table a notebook shows (engine.api's result objects)."""

from __future__ import annotations

import html
import io
import json
import os
from typing import Any

from engine.errors import ArgumentError
from engine.sources import read_json_file

#: The outcomes a table shows (others found in a batch are added after them).
OUTCOMES = ("capture", "escape", "timeout")


def load_results(out_dir: str, against: str = "first") -> dict[str, Any]:
    """The report document of ``out_dir``: ``{"kind": "sweep", ...}`` (the sweep's
    summary.json, its ``paired`` differences against ``against``: engine.batch.paired) or
    ``{"kind": "batch", "summary": ...}`` (a batch's summary.json)."""
    from engine.sweep import SWEEP_META, read_sweep

    if not os.path.isdir(out_dir):
        raise ArgumentError(f"report {out_dir}: no such folder; give a batch or sweep --out folder")
    if os.path.isfile(os.path.join(out_dir, SWEEP_META)):
        doc = read_sweep(out_dir)
        if doc is None:
            raise ArgumentError(
                f"report {out_dir}: the sweep there has not finished; run the same sweep "
                "command with --resume"
            )
        if not _is_sweep(doc):
            raise ArgumentError(
                f"report {os.path.join(out_dir, 'summary.json')}: damaged; run the sweep "
                "again with --force"
            )
        return with_paired(out_dir, doc, against)
    path = os.path.join(out_dir, "summary.json")
    if not os.path.isfile(path):
        hint = (
            "the batch there has not finished; run it again with --resume"
            if os.path.isfile(os.path.join(out_dir, "batch.json"))
            else "it holds no batch or sweep (tacgrid run or tacgrid sweep --out DIR)"
        )
        raise ArgumentError(f"report {out_dir}: {hint}")
    try:  # a regular file within the cap, finite JSON (engine.sources)
        summary = read_json_file(path, "summary", ArgumentError)
    except ArgumentError:
        summary = None
    if not _is_batch(summary):
        raise ArgumentError(f"report {path}: damaged; run the batch again with --force")
    return {"kind": "batch", "summary": summary}


def with_paired(out_dir: str, doc: dict[str, Any], against: str) -> dict[str, Any]:
    """A sweep's document with its paired differences against ``against`` (those kept in
    its summary.json where they are the ones asked for). A sweep seeded per point has none:
    its points' runs do not pair (``paired`` null)."""
    from engine.batch.paired import paired_block

    if doc.get("seeds", "per-point") != "common":
        return {**doc, "paired": None}
    kept = doc.get("paired")
    if isinstance(kept, dict) and kept.get("against") == against:
        return doc
    return {**doc, "paired": paired_block(out_dir, doc, against)}


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _interval_ok(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v)


def _is_batch(s: Any) -> bool:
    """Whether a batch summary holds every field the report reads, of its type."""
    if not isinstance(s, dict) or not isinstance(s.get("outcomes"), dict):
        return False
    outcomes, rates, ci95 = s["outcomes"], s.get("rates"), s.get("ci95")
    by = s.get("turns_by_outcome", {})
    turns = s.get("turns")
    return (
        isinstance(rates, dict)
        and isinstance(ci95, dict)
        and isinstance(by, dict)
        and isinstance(turns, dict)
        and all(_number(turns.get(k)) for k in ("mean", "p50", "p90"))
        and all(
            isinstance(n, int)
            and _number(rates.get(o))
            and _interval_ok(ci95.get(o))
            and (not by.get(o) or (isinstance(by[o], dict) and _number(by[o].get("mean"))))
            for o, n in outcomes.items()
        )
        and all(isinstance(s.get(k), int) and not isinstance(s.get(k), bool) for k in ("runs",))
        and "scenario" in s
        and "seed" in s
    )


def _is_sweep(doc: dict[str, Any]) -> bool:
    """Whether a sweep summary holds every field the report reads, of its type."""
    params, points = doc.get("params"), doc.get("points")
    if not (isinstance(params, list) and isinstance(points, list)):
        return False
    if not all(isinstance(p, dict) and isinstance(p.get("name"), str) for p in params):
        return False
    names = [p["name"] for p in params]
    return all(k in doc for k in ("scenario", "runs", "seed")) and all(
        isinstance(p, dict)
        and isinstance(p.get("params"), dict)
        and all(n in p["params"] for n in names)
        and "runs" in p
        and isinstance(p.get("rates"), dict)
        and all(_number(v) for v in p["rates"].values())
        and isinstance(p.get("ci95"), dict)
        and all(_interval_ok(v) for v in p["ci95"].values())
        and isinstance(p.get("turns"), dict)
        and _number(p["turns"].get("mean"))
        for p in points
    )


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def _interval(ci: list[float]) -> str:
    return f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f}%"


def _value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def rows(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The table as (header, rows of text): one row per outcome of a batch, one row per
    point of a sweep (its parameters, runs, each outcome's rate and 95% interval, turns)."""
    if doc["kind"] == "batch":
        s = doc["summary"]
        header = ["outcome", "runs", "rate", "95% interval", "mean turns"]
        out = []
        names = [o for o in OUTCOMES if o in s["outcomes"]]
        names += [o for o in s["outcomes"] if o not in names]
        for name in names:
            by = s.get("turns_by_outcome", {}).get(name)
            out.append(
                [
                    name,
                    str(s["outcomes"][name]),
                    _pct(s["rates"][name]),
                    _interval(s["ci95"][name]),
                    f"{by['mean']:.2f}" if by else "-",
                ]
            )
        return header, out
    params = [p["name"] for p in doc["params"]]
    header = [*params, "runs"]
    for o in OUTCOMES:
        header += [o, f"{o} 95%"]
    header.append("mean turns")
    out = []
    for p in doc["points"]:
        row = [_value(p["params"][n]) for n in params] + [str(p["runs"])]
        for o in OUTCOMES:
            row += [_pct(p["rates"].get(o, 0.0)), _interval(p["ci95"].get(o, [0.0, 1.0]))]
        row.append(f"{p['turns']['mean']:.2f}")
        out.append(row)
    return header, out


def title(doc: dict[str, Any]) -> str:
    if doc["kind"] == "batch":
        s = doc["summary"]
        return f"{s['scenario']}: {s['runs']} runs, seed {s['seed']}"
    until = doc.get("until_ci")
    if until:
        size = (
            f"sweep of {len(doc['points'])} points, each run until its capture rate's 95% "
            f"interval is at most {100 * until['width']:g} points wide (steps from "
            f"{doc['runs']} runs, at most {until['max_runs']})"
        )
    else:
        size = f"sweep of {len(doc['points'])} points x {doc['runs']} runs"
    seeds = "common seeds" if doc.get("seeds") == "common" else "a seed per point"
    return f"{doc['scenario']}: {size}, seed {doc['seed']} ({seeds})"


def _table_text(header: list[str], body: list[list[str]], n_left: int, width: int) -> list[str]:
    """A rich table as plain lines (no colour codes), the first ``n_left`` columns left."""
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for i, name in enumerate(header):
        table.add_column(
            name, justify="left" if i < n_left else "right", no_wrap=True, min_width=len(name)
        )
    for r in body:
        table.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=max(width, 400), color_system=None, force_terminal=False).print(table)
    return [line.rstrip() for line in buf.getvalue().splitlines() if line.strip()]


def format_report(doc: dict[str, Any], width: int = 120) -> str:
    """The ``report`` text: a rich table (plain text, no colour codes); for a sweep, the
    paired differences after it (:func:`paired_rows`)."""
    header, body = rows(doc)
    n_left = 1 if doc["kind"] == "batch" else len(doc["params"])
    text = "\n".join([title(doc), *_table_text(header, body, n_left, width)])
    if doc["kind"] == "batch":
        t = doc["summary"]["turns"]
        text += f"\nturns: mean {t['mean']:.2f}, median {t['p50']:g}, 90% {t['p90']:g}"
        return text
    paired = doc.get("paired")
    if paired is None and "paired" in doc:
        text += "\nno paired differences: the points drew their own dice (--seeds per-point)"
    elif paired and paired["rows"]:
        header, body = paired_rows(doc)
        text += "\n" + paired_title(doc)
        text += "\n" + "\n".join(_table_text(header, body, len(doc["params"]) + 1, width))
    return text


def paired_title(doc: dict[str, Any]) -> str:
    """The paired table's heading: against what, and how its intervals are made."""
    paired = doc["paired"]
    if paired["against"] == "first":
        first = doc["points"][0]["params"]
        what = "the first point (" + ", ".join(f"{k}={_value(v)}" for k, v in first.items()) + ")"
    else:
        what = "the point one value before it"
    return (
        f"paired differences, each point against {what}, run for run on the same seeds; "
        "95% intervals: Newcombe's paired score (capture), paired t (turns)"
    )


def _signed_pct(x: float) -> str:
    return f"{100 * x:+.1f}"


def paired_rows(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The paired table: per point its parameters, the point it is compared with, the
    pairs, the capture rate's difference (percentage points) with its 95% interval and the
    discordant runs (captured here only / there only), the mean turns' difference and its
    interval."""
    params = [p["name"] for p in doc["params"]]
    by_dir = {p["point"]: p for p in doc["points"]}
    outcome = doc["paired"].get("outcome", "capture")
    header = [
        *params,
        "against",
        "pairs",
        f"{outcome} diff",
        "95%",
        "only here/there",
        "turns diff",
        "95% ",
    ]
    out = []
    for row in doc["paired"]["rows"]:
        p, ref = by_dir[row["point"]], by_dir[row["reference"]]
        changed = ", ".join(
            f"{n}={_value(ref['params'][n])}" for n in params if ref["params"][n] != p["params"][n]
        )
        cells = [_value(p["params"][n]) for n in params] + [changed]
        if not row["pairs"]:
            out.append([*cells, "0", "-", row.get("unpaired", "-"), "-", "-", "-"])
            continue
        c, t = row[outcome], row["turns"]
        turns_ci = "-" if t["lo"] is None else f"{t['lo']:+.2f} to {t['hi']:+.2f}"
        out.append(
            [
                *cells,
                str(row["pairs"]),
                f"{_signed_pct(c['diff'])} pts",
                f"{_signed_pct(c['lo'])} to {_signed_pct(c['hi'])}",
                f"{c['only_point']}/{c['only_ref']}",
                f"{t['diff']:+.2f}",
                turns_ci,
            ]
        )
    return header, out


def _html(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    lines = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{lines}</tbody></table>"


def html_table(doc: dict[str, Any]) -> str:
    """A small HTML table for a notebook (``_repr_html_``); a sweep's paired differences
    (:func:`paired_rows`) in a second table under it."""
    page = f"<div><b>{html.escape(title(doc))}</b>{_html(*rows(doc))}"
    if doc["kind"] == "sweep" and doc.get("paired") and doc["paired"]["rows"]:
        page += f"<p>{html.escape(paired_title(doc))}</p>{_html(*paired_rows(doc))}"
    return page + "</div>"
