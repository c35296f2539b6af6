"""Inline SVG charts for the site, drawn as text: no library, no outside assets. Every label is escaped."""
from __future__ import annotations

import math
import unicodedata
from html import escape
from typing import Callable, Sequence

from leaderboard.tables import Rating
from leaderboard.site.data import Snapshot

ROW = 22  # pixels per entry in the interval plot
LABEL = 170  # room for entry names on the left
# The interval plot's width: what a phone 420 px wide has for it (its page's padding and scroll bar off), so it is
# drawn at its own size there, its 11 px labels read at 11 px rather than shrunk to half (a 720-wide chart was).
PHONE = 380
SCALE = (0.0, 0.25, 0.5, 0.75, 1.0)  # the heatmap legend's marked probabilities
SCALE_WIDTH = 200  # the legend's colour bar, in pixels


def english(message: str, **values: object) -> str:
    """A chart's message as it is (the default translator: leaderboard.site.labels.plain gives others)."""
    return message.format(**values)


def ci_plot(rows: Sequence[Rating], width: int = PHONE, t: Callable[..., str] = english) -> str:
    """Each entry's rating (dot) and 95% interval (bar) on a shared Elo axis, best first. The names take the room
    the longest needs, at most a third of the width; a longer one is cut short with an ellipsis (whole in its
    tooltip)."""
    if not rows:
        return ""
    lo = min(r["ci_low"] for r in rows)
    hi = max(r["ci_high"] for r in rows)
    pad = max((hi - lo) * 0.05, 10.0)
    lo, hi = lo - pad, hi + pad
    room = min(width // 3, math.ceil(max(_text_width(str(r["entry"])) for r in rows)))
    label = room + 12
    plot = width - label - 20

    def x(v: float) -> float:  # a local scale
        return label + (v - lo) / (hi - lo) * plot

    height = ROW * len(rows) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>{escape(t("Ratings with 95% intervals"))}</title>']
    for tick in _ticks(lo, hi):
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="10" y2="{height - 25}" class="grid"/>'
                     f'<text x="{x(tick):.1f}" y="{height - 8}" class="tick">{tick:.0f}</text>')
    for i, r in enumerate(rows):
        y = 20 + i * ROW
        name = escape(_fitted(str(r["entry"]), room))
        tip = escape(t("{entry}: {rating} (95% CI {low}–{high})", entry=r["entry"], rating=f'{r["rating"]:.0f}',
                       low=f'{r["ci_low"]:.0f}', high=f'{r["ci_high"]:.0f}'))
        parts.append(f'<g><title>{tip}</title>'
                     f'<text x="{label - 6}" y="{y + 4}" class="label">{name}</text>'
                     f'<line x1="{x(r["ci_low"]):.1f}" x2="{x(r["ci_high"]):.1f}" y1="{y}" y2="{y}" class="bar"/>'
                     f'<circle cx="{x(r["rating"]):.1f}" cy="{y}" r="4" class="dot"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def heatmap(entries: Sequence[str], predicted: Sequence[Sequence[float]],
            observed: Sequence[Sequence[float | None]], counts: Sequence[Sequence[int]], cell: int = 0,
            t: Callable[..., str] = english) -> str:
    """P(row beats column) as colour, printed in each cell big enough to hold it, with a legend of the colour
    scale under the grid; each cell's title gives the prediction and what was observed. The margins fit the
    names: no band is left blank above the grid for labels shorter than the longest allowed."""
    n = len(entries)
    if n == 0:
        return ""
    cell = cell or max(8, min(36, 720 // n))
    longest = max(_text_width(str(name)) for name in entries)
    left = min(LABEL, math.ceil(longest) + 12)
    top = min(LABEL, math.ceil(longest * math.sin(math.radians(60))) + 14)  # column names rise at 60°
    grid = cell * n
    key = t("P(row beats column)")
    width = max(left + grid + 10, math.ceil(left + grid - cell * 0.35 + min(longest, LABEL) / 2) + 4,
                math.ceil(left + SCALE_WIDTH + 14 + _text_width(key)))
    legend = top + grid + 14  # the colour scale's top edge
    height = legend + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart heatmap" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
             f'<title>{escape(t("Predicted win probability, row against column"))}</title>']
    for i, name in enumerate(entries):
        label = escape(str(name))
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell * 0.65:.1f}" class="label">{label}</text>'
                     f'<text transform="translate({left + i * cell + cell * 0.65:.1f},{top - 6}) rotate(-60)" '
                     f'class="col">{label}</text>')
    size = min(11.0, cell * 0.32)  # the printed value's font size; none below 20 px cells, where it cannot be read
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            p = predicted[i][j]
            seen = (t("observed share {share} over {n} matches", share=f"{observed[i][j]:.2f}", n=counts[i][j])
                    if counts[i][j] else t("never met"))
            tip = escape(t("{row} vs {column}: predicted {p}; {seen}", row=entries[i], column=entries[j],
                           p=f"{p:.2f}", seen=seen))
            x, y = left + j * cell, top + i * cell
            value = (f'<text x="{x + (cell - 1) / 2:.1f}" y="{y + (cell - 1) / 2 + size * 0.36:.1f}" '
                     f'font-size="{size:.1f}" text-anchor="middle" class="value">{_probability(p, cell)}</text>'
                     if cell >= 20 else "")
            parts.append(f'<g><title>{tip}</title><rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                         f'fill="{_colour(p)}"/>{value}</g>')
    parts.append(_scale(left, legend, key))
    parts.append("</svg>")
    return "".join(parts)


def _scale(left: int, top: int, key: str, width: int = SCALE_WIDTH) -> str:
    """The heatmap's legend: the colour scale from 0 to 1 (SCALE's values marked), named by key on its right."""
    stops = "".join(f'<stop offset="{p:g}" stop-color="{_colour(p)}"/>' for p in (0.0, 0.5, 1.0))  # linear between
    ticks = "".join(f'<line x1="{left + p * width:.1f}" x2="{left + p * width:.1f}" y1="{top + 10}" y2="{top + 14}" '
                    f'stroke="#5b6270"/><text x="{left + p * width:.1f}" y="{top + 25}" class="tick">{p:g}</text>'
                    for p in SCALE)
    return (f'<g class="legend"><defs><linearGradient id="heatmap-scale">{stops}</linearGradient></defs>'
            f'<rect x="{left}" y="{top}" width="{width}" height="10" fill="url(#heatmap-scale)" stroke="#dde0e8"/>'
            f'{ticks}<text x="{left + width + 10}" y="{top + 9}" text-anchor="start">{escape(key)}</text></g>')


def _probability(p: float, cell: int) -> str:
    """A cell's printed probability: 0.62, or .62 where the cell is narrow."""
    text = f"{p:.2f}"
    return text[1:] if cell < 30 and text.startswith("0") else text


def _fitted(text: str, room: float) -> str:
    """text as it fits in room px at 11 px: whole, or cut short with an ellipsis."""
    if _text_width(text) <= room:
        return text
    while text and _text_width(text + "…") > room:
        text = text[:-1]
    return text + "…"


def _text_width(text: str, size: float = 11) -> float:
    """Roughly how wide text sets at size px: wide (CJK) characters a full em, others about 0.6 of one."""
    return sum(size if unicodedata.east_asian_width(c) in "WF" else size * 0.6 for c in text)


def _colour(p: float) -> str:
    """Red below 0.5, white at 0.5, blue above: a diverging scale readable in print."""
    t = max(0.0, min(1.0, p))
    if t < 0.5:
        k = (0.5 - t) * 2
        return f"rgb(255,{round(255 - 140 * k)},{round(255 - 140 * k)})"
    k = (t - 0.5) * 2
    return f"rgb({round(255 - 170 * k)},{round(255 - 110 * k)},255)"


def _ticks(lo: float, hi: float, steps: Sequence[float] = (10, 25, 50, 100, 200, 250, 500, 1000, 2500, 5000)
           ) -> list[float]:
    step = next((s for s in steps if (hi - lo) / s <= 8), steps[-1])
    first = (lo // step + 1) * step
    return [first + k * step for k in range(int((hi - first) // step) + 1)]


# Series colours (Okabe–Ito, readable by most colour-blind readers), then dash patterns once they run out.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
MATCH_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 25_000, 50_000, 100_000)


def series_style(i: int) -> tuple[str, str]:
    """The i-th series' (colour, dash pattern): every colour plain, then every colour with each dash in turn."""
    return PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]


def history_plot(snapshots: Sequence[Snapshot], width: int = 720, height: int = 380,
                 t: Callable[..., str] = english) -> str:
    """Each entry's rating (line) and 95% interval (band) after each snapshot's number of matches, one series per
    entry in the last snapshot's order. The vertical axis spans every rating and the last intervals; earlier,
    wider intervals are cut at the chart's edge."""
    if not snapshots:
        return ""
    left, right, top, bottom = 56, 28, 12, 44  # room for the axes' labels
    final = snapshots[-1]["ratings"]
    values = [r["rating"] for s in snapshots for r in s["ratings"]] + [v for r in final for v in (r["ci_low"],
                                                                                               r["ci_high"])]
    lo, hi = min(values), max(values)
    pad = max((hi - lo) * 0.05, 10.0)
    lo, hi = lo - pad, hi + pad
    most = snapshots[-1]["matches"]

    def x(k: float) -> float:  # local scales
        return left + k / most * (width - left - right)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (height - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>'
             f'{escape(t("Ratings with 95% intervals after each number of matches"))}</title><defs>'
             f'<clipPath id="history-area"><rect x="{left}" y="{top}" width="{width - left - right}" '
             f'height="{height - top - bottom}"/></clipPath></defs>']
    for tick in _ticks(lo, hi):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" class="label">{tick:.0f}</text>')
    for tick in [0, *_ticks(0, most, MATCH_STEPS)]:
        parts.append(f'<text x="{x(tick):.1f}" y="{height - bottom + 16}" class="tick">{tick:.0f}</text>')
    parts.append(f'<text x="{left + (width - left - right) / 2:.0f}" y="{height - 6}" class="tick">'
                 f'{escape(t("matches"))}</text>')
    series: dict[str, list[tuple[int, Rating]]] = {}
    for s in snapshots:
        for r in s["ratings"]:
            series.setdefault(r["entry"], []).append((s["matches"], r))
    for i, row in enumerate(final):
        colour, dash = series_style(i)
        points = series[row["entry"]]
        line = " ".join(f"{x(k):.1f},{y(r['rating']):.1f}" for k, r in points)
        band = " ".join([f"{x(k):.1f},{y(r['ci_high']):.1f}" for k, r in points]
                        + [f"{x(k):.1f},{y(r['ci_low']):.1f}" for k, r in reversed(points)])
        tip = escape(t("{entry}: {rating} (95% CI {low}–{high}) after {n} matches", entry=row["entry"],
                       rating=f"{row['rating']:.0f}", low=f"{row['ci_low']:.0f}", high=f"{row['ci_high']:.0f}",
                       n=most))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        last_k, last = points[-1]
        parts.append(f'<g class="series" data-entry="{escape(str(row["entry"]))}"><title>{tip}</title>'
                     f'<g clip-path="url(#history-area)"><polygon points="{band}" fill="{colour}" fill-opacity="0.12"/>'
                     f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.6"{dashed}/></g>'
                     f'<circle cx="{x(last_k):.1f}" cy="{y(last["rating"]):.1f}" r="3" fill="{colour}"/></g>')
    parts.append("</svg>")
    return "".join(parts)
