"""Inline SVG charts for the site, drawn as text: no library, no outside assets. Every label is escaped."""
from __future__ import annotations

from html import escape
from typing import Sequence

ROW = 22  # pixels per entry in the interval plot
LABEL = 170  # room for entry names on the left


def ci_plot(rows: Sequence[dict], width: int = 720) -> str:
    """Each entry's rating (dot) and 95% interval (bar) on a shared Elo axis, best first."""
    if not rows:
        return ""
    lo = min(r["ci_low"] for r in rows)
    hi = max(r["ci_high"] for r in rows)
    pad = max((hi - lo) * 0.05, 10.0)
    lo, hi = lo - pad, hi + pad
    plot = width - LABEL - 20
    x = lambda v: LABEL + (v - lo) / (hi - lo) * plot  # noqa: E731 - a local scale
    height = ROW * len(rows) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>Ratings with 95% intervals</title>']
    for tick in _ticks(lo, hi):
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="10" y2="{height - 25}" class="grid"/>'
                     f'<text x="{x(tick):.1f}" y="{height - 8}" class="tick">{tick:.0f}</text>')
    for i, r in enumerate(rows):
        y = 20 + i * ROW
        name = escape(str(r["entry"]))
        tip = escape(f'{r["entry"]}: {r["rating"]:.0f} (95% CI {r["ci_low"]:.0f}–{r["ci_high"]:.0f})')
        parts.append(f'<g><title>{tip}</title>'
                     f'<text x="{LABEL - 8}" y="{y + 4}" class="label">{name}</text>'
                     f'<line x1="{x(r["ci_low"]):.1f}" x2="{x(r["ci_high"]):.1f}" y1="{y}" y2="{y}" class="bar"/>'
                     f'<circle cx="{x(r["rating"]):.1f}" cy="{y}" r="4" class="dot"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def heatmap(entries: Sequence[str], predicted: Sequence[Sequence[float]],
            observed: Sequence[Sequence[float | None]], counts: Sequence[Sequence[int]], cell: int = 0) -> str:
    """P(row beats column) as colour; each cell's title gives the prediction and what was observed."""
    n = len(entries)
    if n == 0:
        return ""
    cell = cell or max(8, min(36, 720 // n))
    size = LABEL + cell * n + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {size} {size}" '
             f'width="{size}" height="{size}"><title>Predicted win probability, row against column</title>']
    for i, name in enumerate(entries):
        label = escape(str(name))
        parts.append(f'<text x="{LABEL - 6}" y="{LABEL + i * cell + cell * 0.65:.1f}" class="label">{label}</text>'
                     f'<text transform="translate({LABEL + i * cell + cell * 0.65:.1f},{LABEL - 6}) rotate(-60)" '
                     f'class="col">{label}</text>')
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            p = predicted[i][j]
            seen = (f"observed share {observed[i][j]:.2f} over {counts[i][j]} matches" if counts[i][j]
                    else "never met")
            tip = escape(f"{entries[i]} vs {entries[j]}: predicted {p:.2f}; {seen}")
            parts.append(f'<rect x="{LABEL + j * cell}" y="{LABEL + i * cell}" width="{cell - 1}" '
                         f'height="{cell - 1}" fill="{_colour(p)}"><title>{tip}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def _colour(p: float) -> str:
    """Red below 0.5, white at 0.5, blue above: a diverging scale readable in print."""
    t = max(0.0, min(1.0, p))
    if t < 0.5:
        k = (0.5 - t) * 2
        return f"rgb(255,{round(255 - 140 * k)},{round(255 - 140 * k)})"
    k = (t - 0.5) * 2
    return f"rgb({round(255 - 170 * k)},{round(255 - 110 * k)},255)"


def _ticks(lo: float, hi: float) -> list[float]:
    step = next(s for s in (10, 25, 50, 100, 200, 250, 500, 1000, 2500, 5000) if (hi - lo) / s <= 8)
    first = (lo // step + 1) * step
    return [first + k * step for k in range(int((hi - first) // step) + 1)]
