"""What the atomic publish costs: writing a site's pages into the served folder in place (how `arena publish` wrote
before issue 24, the reference) against building them beside it and swapping it in (arena.base.files.replace_folder:
the walk of the old site for files to keep, hard links of those, fsync of every page, the exchange, the removal
of the old site).

Pages are synthetic (~15 kB of HTML each, as a match page is), so the figure is the file work alone, without
the ratings and rendering that dominate a real publish (benchmarks/site.py). The site holds a few files of its
owner, which the swap carries over.

Run: .venv/bin/python benchmarks/publish_swap.py [--pages 10000] [--repeat 3] [--dir DIR]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.base.files import replace_folder  # noqa: E402

PAGE = "<!doctype html><html><body>" + "<p>a speech of the match, escaped and laid out.</p>" * 300


def write_pages(folder: Path, pages: int, stamp: str) -> None:
    """Pages as the renderer lays them out: a few at the top, the rest in matches/."""
    (folder / "matches").mkdir(parents=True, exist_ok=True)
    for name in ("index.html", "matches.html", "methodology.html"):
        (folder / name).write_text(PAGE + stamp + "</body></html>\n", encoding="utf-8")
    for k in range(pages):
        (folder / "matches" / f"m{k:05d}.html").write_text(PAGE + stamp + "</body></html>\n", encoding="utf-8")


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        site = Path(tmp) / "site"
        write_pages(site, args.pages, "0")
        (site / "CNAME").write_text("arena.example.org\n")
        (site / "own").mkdir()
        for k in range(20):
            (site / "own" / f"note{k}.txt").write_text("ours\n")
        in_place, swapped = [], []
        for k in range(args.repeat):
            in_place.append(timed(lambda: write_pages(site, args.pages, f"a{k}")))
            swapped.append(timed(lambda: replace_folder(site, lambda new: write_pages(new, args.pages, f"b{k}"))))
        assert (site / "CNAME").exists() and len(list((site / "own").iterdir())) == 20
    reference, ours = statistics.median(in_place), statistics.median(swapped)
    print(f"{args.pages + 3} pages of {len(PAGE) / 1000:.0f} kB, median of {args.repeat}:")
    print(f"{'':28}{'in place (reference)':>22}{'built beside, swapped':>24}")
    print(f"{'wall time':28}{reference:>21.2f}s{ours:>23.2f}s")
    print(f"{'per page':28}{reference / args.pages * 1e6:>20.0f}µs{ours / args.pages * 1e6:>22.0f}µs")
    print(f"{'ratio':28}{1.0:>22.2f}{ours / reference:>24.2f}")


if __name__ == "__main__":
    main()
