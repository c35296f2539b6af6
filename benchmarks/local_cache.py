"""What the prompt cache flags save on the real local model: a round robin on a server without them, then on one with them.

SmolLM2-135M-Instruct on llama-cpp-python's server, started by tests/support/local_llm.py twice in the same run:
first with the server's own defaults (``LocalLLM(cache=False)``: it keeps only the previous prompt's KV cache, so a
call reuses the prefix it shares with the call just before it and nothing older), then with CACHE_ARGS (a RAM cache
of saved prompt states, any of which a later prompt can start from; see tests/support/local_llm.py). On each, the same
tournament: two direct entries and a `single` judge (one run), all on that server, a round robin on 2 motions (4
matches: each pair on each motion with sides swapped), played as `arena run` plays it by default (4 matches at once,
the server sent one call at a time, so calls of different matches, sides and the judge take turns on it). Speeches
are short (50-word budgets, 64-token cap) and every call is at temperature 0, so the two runs send nearly the same
prompts.

Printed side by side, per server:
  * the prompt tokens the calls sent (the ledger, as the server counted them) and the prompt tokens the server read
    (its log: llama.cpp's "prompt eval ... / N tokens" of each completion), and the share it did not have to read;
  * the server's CPU seconds (from /proc, so another process's load does not count) and the run's wall time;
  * matches done, calls, the calls' latency summed (the ledger).
The prompts as they are on this branch: they share more, and the cache saves more, when prompts put what they share
first (issue 52).

Run: .venv/bin/python benchmarks/local_cache.py [--rounds N]   (2 rounds: 4 matches; about 2 x 1-3 minutes)
"""
from __future__ import annotations

import argparse
import os
import re
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.local_llm import CACHE_ARGS, LocalLLM  # noqa: E402

READ = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def config(llm: LocalLLM) -> str:
    where = f'model = "{llm.model}"\napi_base = "{llm.api_base}"\n'
    params = "[entries.params]\ntemperature = 0\nmax_tokens = 64\n" + "".join(
        f"words_{stage} = 50\n" for stage in ("constructive", "rebuttal", "summary"))
    text = ('[arena]\njudge_runs = 1\nspeech_checks = false\n[llm]\nretries = 1\nbackoff_s = 0.1\ntimeout_s = 900\n'
            '[search]\nprovider = "offline"\n')
    for name in ("direct-a", "direct-b"):
        text += f'[[entries]]\nname = "{name}"\ndebater = "direct"\n{where}{params}'
    return text + f'[[judges]]\nname = "judge"\nkind = "single"\nruns = 1\n{where}'


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time (Linux's /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tournament(root: Path, cache: bool, rounds: int, threads: int) -> dict:
    """One server, one workspace, the round robin played: the figures of the run."""
    with LocalLLM(cache=cache, n_threads=threads) as llm:
        path = root / ("cached" if cache else "plain")
        init_workspace(path, config(llm))
        ws = app.open_workspace(path)
        try:
            app.check(ws)  # the probe's calls come before the marks below, so they are not counted
            app.schedule(ws, "round-robin", rounds=rounds)
            log_from = llm.log_path.stat().st_size
            cpu_from = cpu_seconds(llm._proc.pid)
            started = time.perf_counter()
            result = app.run(ws, progress=lambda line: None)
            wall = time.perf_counter() - started
            cpu = cpu_seconds(llm._proc.pid) - cpu_from
        finally:
            ws.close()
        with open(llm.log_path, "rb") as log:
            log.seek(log_from)
            read = sum(int(n) for n in READ.findall(log.read().decode("utf-8", "replace")))
    conn = sqlite3.connect(path / "arena.db")
    calls, sent, latency = conn.execute(
        "SELECT COUNT(*), SUM(prompt_tokens), SUM(latency_s) FROM calls WHERE kind = 'llm' AND role != 'probe' "
        "AND match_id IS NOT NULL").fetchone()
    conn.close()
    return {"done": f"{result['done']}/{result['total']}", "calls": calls, "sent": sent or 0, "read": read,
            "cpu": cpu, "wall": wall, "latency": latency or 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=2, help="round-robin rounds (2 entries: 2 matches a round)")
    parser.add_argument("--threads", type=int, default=1,
                        help="the server's threads (default 1: on a shared machine a second thread waits for the first)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="arena-local-cache-"))
    runs = {}
    for cache in (False, True):
        runs[cache] = tournament(root, cache, args.rounds, args.threads)
        print(f"{'with' if cache else 'without'} the cache flags: done", flush=True)
    plain, cached = runs[False], runs[True]
    rows = [("matches done", plain["done"], cached["done"], ""),
            ("LLM calls", plain["calls"], cached["calls"], ""),
            ("prompt tokens sent", plain["sent"], cached["sent"], ""),
            ("prompt tokens the server read", plain["read"], cached["read"], ratio(plain["read"], cached["read"])),
            ("share of sent tokens not read again", share(plain), share(cached), ""),
            ("server CPU s", f"{plain['cpu']:.1f}", f"{cached['cpu']:.1f}", ratio(plain["cpu"], cached["cpu"])),
            ("wall s", f"{plain['wall']:.1f}", f"{cached['wall']:.1f}", ratio(plain["wall"], cached["wall"])),
            ("calls' latency summed, s", f"{plain['latency']:.1f}", f"{cached['latency']:.1f}",
             ratio(plain["latency"], cached["latency"]))]
    print(f"\nserver flags: without = llama-cpp-python's defaults; with = {' '.join(CACHE_ARGS)}")
    print(f"{'figure':38} {'without':>10} {'with':>10}  {'without / with'}")
    for name, a, b, r in rows:
        print(f"{name:38} {a!s:>10} {b!s:>10}  {r}")


def share(run: dict) -> str:
    return f"{100 * (1 - run['read'] / run['sent']):.0f}%" if run["sent"] else "-"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


if __name__ == "__main__":
    main()
