"""``tacgrid report DIR``: the summary of a batch or sweep folder as a table (rich), or its
JSON document; and the small HTML table a notebook shows (engine.api's result objects)."""

from __future__ import annotations

import html
import io
import json
import os
from typing import Any

from engine.errors import ArgumentError

#: The outcomes a table shows (others found in a batch are added after them).
OUTCOMES = ("capture", "escape", "timeout")


def load_results(out_dir: str) -> dict[str, Any]:
    """The report document of ``out_dir``: ``{"kind": "sweep", ...}`` (the sweep's
    summary.json) or ``{"kind": "batch", "summary": ...}`` (a batch's summary.json)."""
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
        return doc
    path = os.path.join(out_dir, "summary.json")
    if not os.path.isfile(path):
        hint = (
            "the batch there has not finished; run it again with --resume"
            if os.path.isfile(os.path.join(out_dir, "batch.json"))
            else "it holds no batch or sweep (tacgrid run or tacgrid sweep --out DIR)"
        )
        raise ArgumentError(f"report {out_dir}: {hint}")
    try:
        with open(path, encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        summary = None
    if not isinstance(summary, dict) or not isinstance(summary.get("outcomes"), dict):
        raise ArgumentError(f"report {path}: damaged; run the batch again with --force")
    return {"kind": "batch", "summary": summary}


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
    return (
        f"{doc['scenario']}: sweep of {len(doc['points'])} points x {doc['runs']} runs, "
        f"seed {doc['seed']}"
    )


def format_report(doc: dict[str, Any], width: int = 120) -> str:
    """The ``report`` text: a rich table (plain text, no colour codes)."""
    from rich.console import Console
    from rich.table import Table

    header, body = rows(doc)
    n_left = 1 if doc["kind"] == "batch" else len(doc["params"])
    table = Table()
    for i, name in enumerate(header):
        table.add_column(
            name, justify="left" if i < n_left else "right", no_wrap=True, min_width=len(name)
        )
    for r in body:
        table.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=max(width, 400), color_system=None, force_terminal=False).print(table)
    lines = [line.rstrip() for line in buf.getvalue().splitlines() if line.strip()]
    text = "\n".join([title(doc), *lines])
    if doc["kind"] == "batch":
        t = doc["summary"]["turns"]
        text += f"\nturns: mean {t['mean']:.2f}, median {t['p50']:g}, 90% {t['p90']:g}"
    return text


def html_table(doc: dict[str, Any]) -> str:
    """A small HTML table for a notebook (``_repr_html_``)."""
    header, body = rows(doc)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    lines = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body
    )
    return (
        f"<div><b>{html.escape(title(doc))}</b><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{lines}</tbody></table></div>"
    )
