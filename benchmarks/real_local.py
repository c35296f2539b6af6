"""A small tournament on a REAL local model: what a match costs on it, and what the arena had to do.

SmolLM2-135M-Instruct on the stock llama-cpp-python server (tests/support/local_llm.py starts it), with
the loopback Tavily fake for search. A round-robin of direct, search-baseline and agent4debate
entries (50-word speeches; agent4debate with 2 queries, 1 review), judged by `single` (R = 1),
then rated and published. Per match it prints wall time, LLM calls, prompt and completion
tokens, structured-output fallbacks taken, prompts fitted to the window, answers cut at their
cap, and failed calls. The reference beside it, in the same run: the same tournament on the
offline simulator, so the ratio is what the real model adds over the arena's own work.

Run: .venv/bin/python benchmarks/real_local.py
"""
from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.fakes.tavily_server import FakeTavily  # noqa: E402
from tests.support.local_llm import LocalLLM  # noqa: E402

ENTRIES = (("direct", "direct", ""), ("search", "search-baseline", "max_results = 2"),
           ("a4d", "agent4debate", "max_queries = 2\nmax_reviews = 1\nmax_requests = 0"))
WORDS = "\n".join(f"words_{stage} = 50" for stage in ("constructive", "rebuttal", "summary"))


def config(model: str, api_base: str, tavily: str) -> str:
    where = f'model = "{model}"' + (f'\napi_base = "{api_base}"' if api_base else "")
    text = (f'[arena]\njudge_runs = 1\n[llm]\nretries = 1\nbackoff_s = 0.1\ntimeout_s = 300\n'
            f'[search]\nprovider = "{"tavily" if api_base else "offline"}"\napi_base_url = "{tavily}"\n')
    for name, kind, params in ENTRIES:
        text += f'[[entries]]\nname = "{name}"\ndebater = "{kind}"\n{where}\n[entries.params]\n{WORDS}\n{params}\n'
    return text + f'[[judges]]\nname = "judge"\nkind = "single"\n{where}\n'


def tournament(path: Path, text: str) -> tuple[float, list[dict], Path]:
    """Schedule a round-robin, run it one match at a time, rate and publish: (wall s, per-match rows, site)."""
    init_workspace(path, text)
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        started = time.perf_counter()
        result = app.run(ws, concurrency=1, progress=lambda line: None)
        wall = time.perf_counter() - started
        rows = per_match(path / "arena.db")
        rows[0]["probe"] = probe_summary(path / "arena.db")
        if result["done"]:
            app.rate(ws, bootstrap=200)
        site = app.publish(ws)
    finally:
        ws.close()
    return wall, rows, site


def per_match(db: Path) -> list[dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = conn.execute(
        "SELECT m.id, m.pro, m.con, m.status, m.simulated, m.error, "
        "(julianday(m.finished_at) - julianday(m.started_at)) * 86400 AS wall, "
        "SUM(c.kind='llm' AND c.error IS NULL) AS calls, SUM(c.prompt_tokens) AS prompt, "
        "SUM(c.completion_tokens) AS completion, SUM(c.error LIKE '%falling back%') AS fallbacks, "
        "SUM(c.fitted) AS fitted, SUM(c.finish_reason = 'length') AS cut, "
        "SUM(c.error IS NOT NULL AND c.error NOT LIKE '%falling back%') AS failures, SUM(c.kind='search') AS searches "
        "FROM matches m LEFT JOIN calls c ON c.match_id = m.id GROUP BY m.id ORDER BY m.seq").fetchall()
    return [dict(r) for r in rows]


def probe_summary(db: Path) -> str:
    """What `arena run`'s probe found before the first match: the modes refused, the mode remembered."""
    conn = sqlite3.connect(db)
    refused = conn.execute("SELECT COUNT(*) FROM calls WHERE role='probe' AND structured IS NOT NULL "
                           "AND error IS NOT NULL").fetchone()[0]
    facts = [json.loads(r[0]) for r in conn.execute("SELECT facts FROM models")]
    modes = ", ".join(sorted({f.get("structured") or "-" for f in facts})) or "none"
    return f"probe: {refused} structured-output refusals, mode remembered: {modes}"


def show(label: str, wall: float, rows: list[dict]) -> None:
    print(f"\n{label}: {len(rows)} matches in {wall:.1f} s")
    print(f"{'match':8} {'pro':>7} {'con':>7} {'status':>7} {'wall s':>8} {'calls':>6} {'prompt':>7} {'compl.':>7} "
          f"{'fallbk':>6} {'fitted':>6} {'cut':>4} {'fail':>4} {'search':>6}")
    for r in rows:
        print(f"{r['id']:8} {r['pro']:>7} {r['con']:>7} {r['status']:>7} {r['wall'] or 0:8.1f} {r['calls'] or 0:6} "
              f"{r['prompt'] or 0:7} {r['completion'] or 0:7} {r['fallbacks'] or 0:6} {r['fitted'] or 0:6} "
              f"{r['cut'] or 0:4} {r['failures'] or 0:4} {r['searches'] or 0:6}")
    for r in rows:
        if r["error"]:
            print(f"  {r['id']} failed: {r['error'][:150]}")
    print(f"  {rows[0]['probe']}")


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="real-local-"))
    with FakeTavily() as tavily, LocalLLM() as llm:
        os.environ.setdefault("TAVILY_API_KEY", "tvly-local-bench")
        print(f"server: {llm.model} at {llm.api_base}; start-up {llm.startup_s:.1f} s, warm-up {llm.warmup_s:.1f} s")
        ws = app.open_workspace(_init(root / "check", config(llm.model, llm.api_base, tavily.base_url)))
        probe = app.check(ws, ["judge"])[0]
        ws.close()
        print(f"arena check: ok={probe['ok']} structured={probe['structured']} window={probe['context_window']} "
              f"latency={probe['latency_s']} s")
        real_wall, real_rows, real_site = tournament(root / "real", config(llm.model, llm.api_base, tavily.base_url))
    sim_wall, sim_rows, _ = tournament(root / "sim", config("offline/bench", "", ""))
    show("real local model (SmolLM2-135M, llama-cpp-python)", real_wall, real_rows)
    show("reference: the same tournament on the offline simulator", sim_wall, sim_rows)
    done = [r for r in real_rows if r["status"] == "done"]
    calls = {label: sum(r["calls"] or 0 for r in rows) for label, rows in (("real", real_rows), ("sim", sim_rows))}
    print(f"\nwall time, real / simulated: {real_wall:.1f} s / {sim_wall:.2f} s; LLM calls, real / simulated: "
          f"{calls['real']} / {calls['sim']} = {calls['real'] / calls['sim']:.2f} (the simulator never fails or "
          f"re-asks)")
    total = {key: sum(r[key] or 0 for r in real_rows) for key in ("fallbacks", "fitted", "cut")}
    print(f"matches done: {len(done)} of {len(real_rows)}; fallbacks {total['fallbacks']}, "
          f"fitted prompts {total['fitted']}, cut answers {total['cut']}")
    banner = "Simulated results" in real_site.read_text(encoding="utf-8")
    print(f"published: {real_site} (simulated banner: {'YES' if banner else 'no'})")


def _init(path: Path, text: str) -> Path:
    init_workspace(path, text)
    return path


if __name__ == "__main__":
    main()
