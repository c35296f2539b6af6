"""Runs that are evidence, on a REAL model: how often a judge's R runs of one match are the same answer, with
odd runs reading the sides exchanged (swap_sides = true, the default) beside the reference without (false).

SmolLM2-135M-Instruct on the stock llama-cpp-python server (tests/support/local_llm.py starts it) plays --matches
direct-vs-direct matches (50-word speeches, speech checks off so that every match is debated and judged: the
tiny model often echoes its instructions), each judged by two `single` judges at temperature 0 with R = 3 that
differ only in swap_sides. Printed per judge: matches judged, identical_runs (the share of matches whose runs
all gave the same verdict and rationale, `arena stats judges`), failed runs, and the Pro win rate.

Run: .venv/bin/python benchmarks/judge_runs.py [--matches 4]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from tests.support.helpers import entry, invoke, judge, new_workspace  # noqa: E402
from tests.support.local_llm import LocalLLM  # noqa: E402

WORDS = {f"words_{stage}": 50 for stage in ("constructive", "rebuttal", "summary")}
MOTIONS = ("en-policy-001", "en-value-001", "en-fact-001", "en-policy-002")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=4)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp()) / "ws"
    with LocalLLM() as llm:
        model = {"model": llm.model, "api_base": llm.api_base}
        new_workspace(path, arena={"judge_runs": 3, "speech_checks": False},
                      llm={"retries": 1, "backoff_s": 0.1, "timeout_s": 600}, search={"provider": "offline"},
                      entries=[entry("plain-a", **model, params=WORDS),
                               entry("plain-b", **model, params={"temperature": 0.7, **WORDS})],
                      judges=[judge("swapped", runs=3, **model),
                              judge("unswapped", runs=3, **model, options={"swap_sides": False})])
        ws = app.open_workspace(path)
        pairs = [(MOTIONS[k // 2 % len(MOTIONS)], *(("plain-a", "plain-b") if k % 2 == 0 else ("plain-b", "plain-a")))
                 for k in range(args.matches)]
        ws.store.add_tournament("runs", 0, {}, pairs)
        ws.close()
        started = time.perf_counter()
        ran = invoke("run", "-w", str(path), "--concurrency", "1")
        print(f"{args.matches} matches played and judged in {time.perf_counter() - started:.0f} s "
              f"(exit {ran.exit_code}); workspace {path}")
    stats = json.loads(invoke("stats", "judges", "-w", str(path), "--format", "json").output)
    print(f"{'judge':12} {'swap_sides':>10} {'matches':>7} {'identical_runs':>14} {'failed_runs':>11} {'pro win rate':>12}")
    for row in stats["judges"]:
        swap = row["judge"] == "swapped"
        rate = "-" if row["pro_win_rate"] is None else f"{row['pro_win_rate']:.2f}"
        same = "-" if row["identical_runs"] is None else f"{row['identical_runs']:.2f}"
        print(f"{row['judge']:12} {str(swap).lower():>10} {row['matches']:7} {same:>14} {row['failed_runs']:11} "
              f"{rate:>12}")


if __name__ == "__main__":
    main()
