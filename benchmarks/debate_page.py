"""The pages of people who debate on the web, at 10,000 stored matches: GET /d/TOKEN (a web debater's list of turns)
and GET /d/TOKEN/TURN (a turn's page: its brief, the speeches it shows and the speech form), served by a real
`arena serve` process, beside the same pages on a workspace of 10 stored matches (the reference, same run).

Each workspace is built as benchmarks/site.py builds its own: done matches of ten offline entries (six speeches
and three verdict runs each) written straight into the store in one transaction. Then the web debater "ann" (a
human entry with via = "web") plays five matches against the offline entry "bot", parked by `arena run`
(arena.app.commands.run) at her turns, one of them at her rebuttal (her constructive submitted, so the page shows
both constructives): five open turns, one submitted. `arena serve` runs as a subprocess; the pages are fetched one
after another on one kept-alive connection, as serve_latency.py fetches the ballot pages: per page the median and
the 95th percentile of N GETs in ms (after a few unmeasured ones), and the page's size.

The app keeps no mapping from turn ids to turns: each request opens the database, finds the link's entry, reads
that entry's turns (each with its brief, which holds the speeches it showed) and works out their ids again
(arena.app.people.web.turn_id). So what the pages should grow with is the debater's own turns, not the workspace's
matches: a third workspace, the reference's after ann has played --played matches to the end (three turns each,
their briefs full), shows that cost.

Run: .venv/bin/python benchmarks/debate_page.py [--matches 10000] [--reference 10] [--played 100] [--requests 200]
"""
from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.app import commands as app  # noqa: E402
from arena.app.commands import open_workspace  # noqa: E402
from arena.app.people.web import turn_id  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from benchmarks.site import play  # noqa: E402
from tests.support.helpers import entry, judge, speech_text, workspace_toml  # noqa: E402
from tests.support.serving import served  # noqa: E402

ENTRIES = [f"e{i}" for i in range(10)]
TOML = workspace_toml(motions=["builtin:en"], judges=[judge("j", runs=1)],
                      entries=[entry("ann", debater="human", model="human/ann", params={"via": "web"}),
                               entry("bot", strength=0.5), *(entry(name) for name in ENTRIES)])
ANNS = 5  # ann's matches against bot


def build(path: Path, n_matches: int, played: int = 0, seed: int = 0) -> tuple[str, str]:
    """A workspace of n_matches done matches and ann's five parked ones (after `played` matches she has played to
    the end, three turns each): (ann's token, her rebuttal's turn id)."""
    init_workspace(path, TOML)
    ws = open_workspace(path)
    try:
        rng = random.Random(seed)
        motions = [m for m, _ in ws.motions.values() if m.language == "en"]
        # done matches as benchmarks/site.py stores them (six speeches, three verdict runs), the entries even
        play(ws, [(rng.choice(motions).id, *rng.sample(ENTRIES, 2)) for _ in range(n_matches)],
             dict.fromkeys(ENTRIES, 0.0), rng, seed)
        if played:
            play_ann(ws, [(motions[k % len(motions)].id, *(("ann", "bot") if k % 2 == 0 else ("bot", "ann")))
                          for k in range(played)])
        n_matches += played
        assert len(ws.store.match_ids(done=True)) == n_matches
        anns = ws.store.add_tournament("single", seed, {}, [
            (motions[k].id, *(("ann", "bot") if k % 2 == 0 else ("bot", "ann"))) for k in range(ANNS)])
        assert app.run(ws, concurrency=1, progress=lambda line: None)["awaiting"] == ANNS
        first = next(t for t in ws.store.turns_of("ann") if t.match_id == anns[0])
        size = int(first.brief.budget.amount * 0.8)
        assert ws.store.submit_speech(first.match_id, first.stage, first.side, speech_text("ANN", size=size))
        assert app.run(ws, concurrency=1, progress=lambda line: None)["awaiting"] == ANNS
        rebuttal = next(t for t in ws.store.turns_of("ann") if t.match_id == anns[0] and not t.submitted)
        assert rebuttal.stage == "rebuttal" and len(rebuttal.brief.visible) == 2
        assert len(ws.store.match_ids(done=True)) == n_matches
        assert len(ws.store.turns_of("ann")) == 3 * played + ANNS + 1
        (link,) = app.debaters_issue(ws)
        token = link["url"].rsplit("/d/", 1)[1]
        return token, turn_id(ws.store.ballot_secret(), "ann", rebuttal)
    finally:
        ws.close()


def play_ann(ws, pairings: list[tuple[str, str, str]]) -> None:
    """ann's matches against bot played to the end: `arena run` parks them, her speeches go in, three times."""
    ws.store.add_tournament("single", 1, {}, pairings)
    for _ in range(3):
        app.run(ws, concurrency=2, progress=lambda line: None)
        for t in ws.store.turns_of("ann"):
            if not t.submitted:
                text = speech_text(f"ANN {t.match_id} {t.stage}", size=int(t.brief.budget.amount * 0.8))
                assert ws.store.submit_speech(t.match_id, t.stage, t.side, text)
    assert app.run(ws, concurrency=2, progress=lambda line: None)["done"] == len(pairings)


def measure(base: str, paths: list[str], n: int, warm: int = 5) -> list[tuple[float, float, int]]:
    """(median ms, 95th percentile ms, bytes) of n GETs of each path, one after another on one kept-alive
    connection, after warm unmeasured ones."""
    parts = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    rows = []
    try:
        for path in paths:
            times, size = [], 0
            for k in range(warm + n):
                start = time.perf_counter()
                conn.request("GET", path)
                response = conn.getresponse()
                body = response.read()
                elapsed = (time.perf_counter() - start) * 1000
                assert response.status == 200, (path, response.status)
                if k >= warm:
                    times.append(elapsed)
                size = len(body)
            rows.append((statistics.median(times), statistics.quantiles(times, n=20)[-1], size))
    finally:
        conn.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000, help="done matches of the workspace measured")
    parser.add_argument("--reference", type=int, default=10, help="done matches of the reference workspace")
    parser.add_argument("--played", type=int, default=100,
                        help="a third workspace: the reference's, after ann has played this many matches (0: none)")
    parser.add_argument("--requests", type=int, default=200, help="GETs of each page per workspace")
    args = parser.parse_args()
    cases = [(f"{args.reference:,} matches (reference)", args.reference, 0),
             (f"{args.matches:,} matches", args.matches, 0)]
    if args.played:
        cases.append((f"{args.reference:,} + ann's {args.played:,} played", args.reference, args.played))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, n, played) in enumerate(cases):
            began = time.perf_counter()
            token, turn = build(Path(tmp) / f"ws{k}", n, played)
            built = time.perf_counter() - began
            began = time.perf_counter()
            with served(Path(tmp) / f"ws{k}", env={**os.environ, "PYTHONPATH": str(ROOT)}) as (_, base):
                startup = time.perf_counter() - began  # until it listened
                rows.append((label, measure(base, [f"/d/{token}", f"/d/{token}/{turn}"], args.requests), built,
                             startup))
    print(f"{args.requests} sequential GETs per page on one kept-alive connection to `arena serve`, in ms; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'workspace':<32}{'list median':>12}{'p95':>7}{'KB':>6}   {'turn median':>12}{'p95':>7}{'KB':>6}"
          f"   {'built':>6}{'serve ready':>12}")
    reference = rows[0][1]
    for label, ((median, p95, size), (t_median, t_p95, t_size)), built, startup in rows:
        print(f"{label:<32}{median:>12.2f}{p95:>7.2f}{size / 1000:>6.1f}   {t_median:>12.2f}{t_p95:>7.2f}"
              f"{t_size / 1000:>6.1f}   {built:>5.1f}s{startup:>11.2f}s")
    for label, ((median, _, _), (t_median, _, _)), _, _ in rows[1:]:
        print(f"{label}: {median / reference[0][0]:.2f}x the reference's list, {t_median / reference[1][0]:.2f}x "
              "its turn page (medians)")


if __name__ == "__main__":
    main()
