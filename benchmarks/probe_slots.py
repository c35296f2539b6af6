"""How many slots `arena check` measures for a real one-slot server on a loaded machine, and what the probe costs.

SmolLM2-135M-Instruct on the stock llama-cpp-python server (tests/support/local_llm.py starts it; it serves one
request at a time), one entry on it (the judge simulated, not probed, unless --judge-on-model). While --spinners processes spin on the CPUs (the other core
loaded, on top of whatever else the machine runs), `arena check --format json` is run --runs times, each a fresh
measurement, and the slots it measured are counted, with the wall time of each check.

--src runs another checkout's arena (e.g. the base commit's, `git archive <commit> | tar -x -C /tmp/base`); given
twice or more, each run checks with each in turn, so before and after are measured on the same server, in the same
conditions, interleaved.

Run: .venv/bin/python benchmarks/probe_slots.py --runs 10 [--src /tmp/base --src .] [--threads 1] [--spinners 1]
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.local_llm import LocalLLM  # noqa: E402


def spin() -> None:  # pragma: no cover - a load for the CPU, killed by the parent
    while True:
        pass


def workspace(path: Path, model: str, api_base: str, judged: bool = False) -> None:
    path.mkdir(parents=True)
    where = f'model = "{model}"\napi_base = "{api_base}"'
    judge = where if judged else 'model = "offline/j"'  # simulated: not probed
    (path / "arena.toml").write_text(
        '[arena]\njudge_runs = 1\n[llm]\nretries = 1\nbackoff_s = 0.1\ntimeout_s = 120\n'
        f'[[entries]]\nname = "a"\ndebater = "direct"\n{where}\n'
        f'[[judges]]\nname = "j"\nkind = "single"\n{judge}\n')


def check(src: Path, path: Path) -> tuple[float, list[dict]]:
    env = {**os.environ, "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "arena", "check", "-w", str(path), "--format", "json"],
                          env=env, cwd=src, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"arena check exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return wall, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--src", type=Path, action="append",
                        help="a checkout whose arena is run (default: this one); repeat to compare")
    parser.add_argument("--threads", type=int, default=None, help="the server's threads (default: LocalLLM's)")
    parser.add_argument("--judge-on-model", action="store_true",
                        help="the judge on the model too (probed after the entry, its throughput measured again)")
    parser.add_argument("--spinners", type=int, default=1, help="busy processes spinning while it measures")
    args = parser.parse_args()
    sources = args.src or [ROOT]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the server and the spinners stopped too

    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.spinners)]
    with LocalLLM(n_threads=args.threads) as llm, tempfile.TemporaryDirectory() as tmp:
        for p in spinners:
            p.start()
        try:
            slots: dict[Path, collections.Counter[int | None]] = {src: collections.Counter() for src in sources}
            walls: dict[Path, list[float]] = {src: [] for src in sources}
            for run in range(args.runs):
                for n, src in enumerate(sources):
                    path = Path(tmp) / f"ws{run}-{n}"
                    workspace(path, llm.model, llm.api_base, args.judge_on_model)
                    wall, rows = check(src, path)
                    walls[src].append(wall)
                    rows = [r for r in rows if r["name"] == "a"]
                    slots[src][rows[0]["slots"]] += 1
                    print(f"run {run + 1} {src}: slots {rows[0]['slots']}, tokens_per_s {rows[0]['tokens_per_s']}, "
                          f"check {wall:.1f} s", flush=True)
        finally:
            for p in spinners:
                p.terminate()
    for src in sources:
        print(json.dumps({"src": str(src), "threads": llm.n_threads, "spinners": args.spinners, "runs": args.runs,
                          "slots": {str(k): v for k, v in sorted(slots[src].items(), key=str)},
                          "check_s_median": round(statistics.median(walls[src]), 2),
                          "check_s_max": round(max(walls[src]), 2)}))


if __name__ == "__main__":
    main()
