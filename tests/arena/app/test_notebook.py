"""The Python API for notebooks (arena.open, arena.app.notebook): every DataFrame holds what the command's JSON holds
on the same workspace, row for row and value for value, in the columns and dtypes it documents (FRAMES); the
records are the facade's; a closed workspace lets its database go; bad input raises the UserError the CLI exits 2
with; `import arena` pulls in neither pandas nor the app; docs/examples/notebook.py runs on the demo."""
from __future__ import annotations

import asyncio
import json
import math
import os
import re
import runpy
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import arena
from arena.app import commands as app
from arena.app.notebook import FRAMES, Arena
from arena.base.errors import UserError
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.helpers import entry, invoke, judge, mark_checked, new_workspace
from tests.support.running import scheduled, slow, statuses
from tests.support.sites import copied_demo

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "notebook.py"


@pytest.fixture(scope="module")
def demo(builds, tmp_path_factory) -> Path:
    """A private copy of the demo workspace (`arena demo`, built once per test process), for this module."""
    return copied_demo(builds, tmp_path_factory.mktemp("notebook") / "demo")


@pytest.fixture(scope="module")
def ws(demo):
    with arena.open(demo) as opened:
        yield opened


def plain(value):
    """A cell as JSON has it: a missing value is None, numpy's scalars Python's."""
    if value is None or (not isinstance(value, (list, dict, str)) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def records(df: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in row.items()} for row in df.astype(object).to_dict("records")]


def flat(row: dict, prefix: str = "") -> dict:
    """A JSON row with its nested objects' keys as prefix_key, as the tables spell them."""
    out = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out |= flat(value, f"{prefix}{key}_")
        else:
            out[f"{prefix}{key}"] = value
    return out


def same_rows(df: pd.DataFrame, rows: list[dict]) -> None:
    """The frame holds exactly the JSON rows (flattened; a key a row lacks is a missing cell), in order."""
    nested = {c.rsplit("_", 1)[0] for c in df.columns}  # a nested object that is null leaves its columns missing
    expected = [{k: v for k, v in flat(r).items() if not (v is None and k in nested and k not in df.columns)}
                for r in rows]
    assert all(set(r) <= set(df.columns) for r in expected), (set().union(*expected) - set(df.columns))
    assert records(df) == [{c: r.get(c) for c in df.columns} for r in expected]


def cli_json(*args) -> object:
    done = invoke(*args, "--format", "json")
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def dtypes_of(method: str, table: str = "") -> dict[str, str]:
    return {c.name: c.dtype for c in FRAMES[method][table]}


# --- the tables, against the commands' JSON ---------------------------------------------------------------------


def test_ratings_are_the_rows_of_arena_rate_json_in_its_columns(ws, demo):
    shown = cli_json("rate", "-w", demo, "--bootstrap", "200", "--seed", "3")
    table = ws.ratings(bootstrap=200, seed=3)
    assert list(table.columns) == list(shown["ratings"][0])  # exactly the JSON row's keys, in its order
    assert records(table) == shown["ratings"]
    assert table["simulated"].all()  # the demo's entries are the simulator's, and say so
    # The board's separability, as the JSON's top level gives it, rides with the frame.
    assert table.attrs["separability"] == shown["separability"] and shown["separability"]["pairs"] == 6 * 5 // 2


def test_ratings_by_category_are_a_row_per_group_and_entry(ws, demo):
    shown = cli_json("rate", "-w", demo, "--bootstrap", "100", "--by", "category", "--ci", "sandwich")
    table = ws.ratings(bootstrap=100, by="category", ci="sandwich")
    assert list(table.columns) == ["category", *shown["ratings"][0]]
    assert records(table) == [{"category": group, **row} for group, fit in shown["by"].items()
                              for row in fit["ratings"]]
    assert table.attrs["separability"] == {group: fit["separability"] for group, fit in shown["by"].items()}


def test_rate_is_the_whole_json_and_history_its_snapshots(ws):
    assert ws.rate(bootstrap=50, side="ignore") == app.rate(ws.workspace, bootstrap=50, side="ignore")
    snapshots = app.rate_history(ws.workspace, bootstrap=0, every=20)
    same_rows(ws.history(every=20, bootstrap=0),
              [{"at_matches": s["matches"], "last_match": s["last_match"], **row} for s in snapshots
               for row in s["ratings"]])
    assert len(snapshots) == 3  # 60 matches, a snapshot every 20


def test_matches_are_match_list_with_each_matchs_simulated_flag_and_result(ws, demo):
    table = ws.matches()
    listed = cli_json("match", "list", "-w", demo)
    same_rows(table[list(listed[0])], listed)
    assert len(table) == 60
    # then what `arena match show` says of each: simulated, and the first judge's score (the one that rates)
    first = app.first_judge(ws.workspace)
    for row in records(table):
        shown = cli_json("match", "show", row["id"], "-w", demo)
        runs = [v for v in shown["verdicts"] if v["judge"] == first]
        pro = sum(1.0 if v["overall"] == "pro" else 0.5 if v["overall"] == "tie" else 0.0 for v in runs)
        winner = "pro" if pro > len(runs) - pro else "con" if pro < len(runs) - pro else "tie"
        assert (row["simulated"], row["score_pro"], row["score_con"], row["winner"]) == (
            shown["simulated"], pro, len(runs) - pro, winner)
    other = ws.matches(judge="sim-panel")  # another judge's result, its winner by the majority of its runs
    assert set(other["score_pro"] + other["score_con"]) == {1.0} and set(other["winner"]) <= {"pro", "con", "tie"}


def test_matches_leave_the_result_of_a_match_not_played_missing(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], judges=[judge("j", runs=3)])
    with arena.open(path) as ws:
        ws.schedule(format="round-robin", rounds=1, seed=1)  # the CLI's --format, by its name
        ws.run(progress=lambda line: None)
        ws.schedule("random", matches=1, seed=2)  # not played
        table = ws.matches()
    assert table["simulated"].dtype == bool and list(table["simulated"]) == [True, True, False]
    assert table["winner"].isna().tolist() == table["score_pro"].isna().tolist() == [False, False, True]
    assert ((table["score_pro"] + table["score_con"])[:2] == 3.0).all()


def test_schedule_takes_the_format_by_the_clis_name_or_first_and_refuses_both(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], judges=[judge("j", runs=1)])
    with arena.open(path) as ws:
        assert ws.schedule(format="random", matches=2, seed=1).format == "random"
        assert ws.schedule(fmt="round-robin", rounds=1).format == "round-robin"
        for wrong in ({}, {"fmt": "random", "format": "swiss"}):
            with pytest.raises(UserError, match=r"ws.schedule\(format='round-robin'\)"):
                ws.schedule(**wrong)
        assert len(ws.matches()) == 4


def test_verdicts_are_every_match_shows_verdicts(ws):
    table = ws.verdicts()
    expected = []
    for row in app.match_list(ws.workspace):
        for v in app.match_show(ws.workspace, row["id"])["verdicts"]:
            expected.append({"match": row["id"], "judge": v["judge"], "run": v["run"], "winner": v["overall"],
                             **v["dimensions"], "rationale": v["rationale"], "error": v.get("error"),
                             "panelist": v.get("extra", {}).get("panelist")})
    key = lambda r: (r["match"], r["judge"], r["run"])  # noqa: E731
    shown = sorted(({k: r[k] for k in expected[0]} for r in records(table)), key=key)
    assert shown == sorted(expected, key=key)
    assert len(table) == 60 * (3 + 1 + 3)  # debatrix R=3, the panel 1, three people
    assert {"argument", "source", "language"} <= set(table.columns) and table["simulated"].all()
    only = ws.verdicts(judge="sim-panel")
    assert set(only["judge"]) == {"sim-panel"} and len(only) == 60


def test_results_are_results_frame(ws):
    same_rows(ws.results(), app.results_frame(ws.workspace).to_dict("records"))
    plain_rows = ws.results("sim-experts", features=False)
    assert "words_a" not in plain_rows.columns
    same_rows(plain_rows, app.results_frame(ws.workspace, "sim-experts", features=False).to_dict("records"))


def test_the_stats_tables_are_the_stats_commands_json(ws, demo):
    same_rows(ws.stats_agents(), cli_json("stats", "agents", "-w", demo))
    same_rows(ws.stats_bias(), cli_json("stats", "bias", "-w", demo))
    judges, shown = ws.stats_judges(), cli_json("stats", "judges", "-w", demo)
    for name in ("judges", "pairs", "people", "people_vs_judges"):
        same_rows(getattr(judges, name), shown[name])
    sides, shown = ws.stats_sides(), cli_json("stats", "sides", "-w", demo)
    same_rows(sides.entries, shown["entries"])
    same_rows(sides.motions, shown["motions"])
    assert (sides.judge, sides.overall) == (shown["judge"], shown["overall"])
    paper, shown = ws.stats_paper(), cli_json("stats", "paper", "-w", demo)
    assert (paper.judge, paper.people, paper.simulated, paper.preset) == (shown["judge"], shown["people"], True, None)
    for name in ("entries", "pairs", "kinds"):
        same_rows(getattr(paper, name), shown[name])
    same_rows(paper.judges, shown["consistency"]["judges"])
    same_rows(paper.among_people, shown["consistency"]["among_people"])


def test_every_table_has_its_documented_columns_and_dtypes(ws):
    tables = {("ratings", ""): ws.ratings(bootstrap=0), ("history", ""): ws.history(every=30, bootstrap=0),
              ("matches", ""): ws.matches(), ("results", ""): ws.results(), ("stats_agents", ""): ws.stats_agents(),
              ("stats_bias", ""): ws.stats_bias()}
    tables |= {("stats_judges", k): getattr(ws.stats_judges(), k) for k in FRAMES["stats_judges"]}
    tables |= {("stats_sides", k): getattr(ws.stats_sides(), k) for k in FRAMES["stats_sides"]}
    tables |= {("stats_paper", k): getattr(ws.stats_paper(), k) for k in FRAMES["stats_paper"]}
    assert {m for m, _ in tables} == set(FRAMES) - {"verdicts"}
    for (method, table), df in tables.items():
        assert {c: str(t) for c, t in df.dtypes.items()} == dtypes_of(method, table), (method, table)
    by = ws.ratings(by="dimension", bootstrap=0)
    assert {c: str(t) for c, t in by.dtypes.items()} == {"dimension": "string", **dtypes_of("ratings")}
    verdicts = ws.verdicts()
    documented = dtypes_of("verdicts")
    assert {c: str(t) for c, t in verdicts.dtypes.items()} == {
        **{c: t for c, t in documented.items() if c in list(documented)[:4]},
        **{d: "category" for d in ("argument", "source", "language")},
        **{c: t for c, t in documented.items() if c in list(documented)[5:]}}
    assert list(verdicts["winner"].cat.categories) == ["pro", "con", "tie"]
    assert str(verdicts["created_at"].dtype) == "datetime64[ns, UTC]"
    assert list(ws.matches()["status"].cat.categories) == ["scheduled", "running", "awaiting", "done", "failed"]


def test_an_empty_workspace_gives_empty_tables_of_the_same_dtypes(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], judges=[judge("j")])
    with arena.open(path) as ws:
        for method in ("matches", "results", "stats_agents", "stats_bias"):
            df = getattr(ws, method)()
            expected = dtypes_of(method)
            if method == "results":  # an empty plan's results carry the columns results_frame gives
                expected = {c: t for c, t in expected.items() if c in df.columns}
            assert {c: str(t) for c, t in df.dtypes.items()} == expected, method
            assert df.empty or method == "stats_bias", method  # a judge with no votes is a row of bias
        assert ws.verdicts().empty and list(ws.verdicts().columns) == [c.name for c in FRAMES["verdicts"][""]
                                                                       if not c.name.startswith("<")]


# --- records, a tournament driven from Python ---------------------------------------------------------------------


def test_the_records_are_the_facades(ws):
    w = ws.workspace
    assert ws.entries() == app.entry_list(w) and ws.entry("sim-ace") == app.entry_show(w, "sim-ace")
    assert ws.motions("fact") == app.motion_list(w, "fact")
    first = ws.matches()["id"][0]
    assert ws.match(first) == app.match_show(w, first) and ws.match(first)["speeches"]
    assert ws.motion(ws.match(first)["motion"]["id"]) == app.motion_show(w, ws.match(first)["motion"]["id"])
    assert ws.schedule_show() == app.schedule_show(w)


def test_a_notebook_schedules_and_runs_a_tournament_with_progress_lines(tmp_path, capsys):
    path = new_workspace(tmp_path / "ws", entries=[entry("a", strength=1.0), entry("b"), entry("c", strength=-1.0)],
                         judges=[judge("j", runs=1)])
    with arena.open(path) as ws:
        plan = ws.schedule("round-robin", rounds=1, seed=1)
        assert len(plan.match_ids) == 6 and plan.format == "round-robin"
        heard: list[str] = []
        first = ws.run(concurrency=1, progress=heard.append)
        assert (first["done"], first["failed"]) == (6, 0)
        assert all(any(m in line for line in heard) for m in plan.match_ids)  # a line per finished match
        assert not any("\r" in line or "\x1b" in line for line in heard)  # lines, no terminal redraw
        more = ws.schedule("random", matches=1, seed=2)
        ws.run()  # progress by default: printed
        printed = capsys.readouterr().out
        assert more.match_ids[0] in printed and "\r" not in printed
        assert set(ws.matches()["status"]) == {"done"}
        assert ws.ratings(bootstrap=0)["matches"].sum() == 2 * 7  # every match rates both its entries


def test_a_notebook_runs_until_a_criterion_holds_or_a_limit_stops_it(tmp_path):
    """`arena run --until` from a notebook: capped by max_matches, then on to top=1 (about 5 s, some 15 matches)."""
    path = new_workspace(tmp_path / "ws", entries=[entry("a", strength=4.0), entry("b"), entry("c", strength=-4.0)],
                         judges=[judge("j", runs=1)])
    with arena.open(path) as ws:
        heard: list[str] = []
        capped = ws.run(until="top=1", batch=2, max_matches=3, progress=heard.append)
        assert (capped["done"], capped["until"]["met"], capped["until"]["reason"]) == (3, False, "max matches")
        assert len(ws.matches()) == 3
        assert any(line.startswith("top=1: 0 of 1 boundary settled") for line in heard)  # where the board stood
        settled = ws.run(until="top=1", progress=lambda line: None)
        assert settled["until"]["met"] and settled["until"]["reason"] == "met"
        assert settled["until"]["matches"] == len(ws.matches()) == 3 + settled["done"]
        assert ws.ratings()["entry"].iloc[0] == "a"
        for bad, message in (({"until": "top=0"}, "--until 'top=0'"), ({"until": "top=3"}, "top=K needs more"),
                             ({"batch": 3}, "batch=3: goes with until"),
                             ({"until": "top=1", "max_matches": 0}, "max_matches=0: expected a positive")):
            with pytest.raises(UserError, match=re.escape(message)):
                ws.run(progress=lambda line: None, **bad)
    assert statuses(path) == {"done": settled["until"]["matches"]}  # the bad calls wrote nothing


def test_a_cell_running_in_an_event_loop_runs_the_commands_that_run_their_own(tmp_path):
    """A Jupyter cell runs inside the kernel's event loop, where asyncio.run (which check, dry runs, runs and
    judging use) is refused: those methods run beside it, in a thread of their own, and return as usual."""
    path = new_workspace(tmp_path / "ws", entries=[entry("a", strength=1.0), entry("b")], judges=[judge("j", runs=1)])

    async def cell() -> tuple:
        with arena.open(path) as ws:
            ws.schedule("round-robin", rounds=1, seed=1)
            return (ws.check(), ws.dry_run(), ws.run(progress=lambda line: None),
                    ws.judge(["j"], rejudge=True, progress=lambda line: None),
                    ws.judge_attacks_plan("j", attacks=["swap"]),
                    ws.judge_attacks("j", attacks=["swap", "null"], progress=lambda line: None))

    checked, projected, ran, judged, plan, attacked = asyncio.run(cell())
    assert {row["name"] for row in checked} == {"a", "b", "j"} and all(row["ok"] for row in checked)
    assert projected["matches"] == 2 and projected["time_s"]["estimate"] == 0  # simulated models take no time
    assert (ran["done"], ran["failed"], ran["stopped"]) == (2, 0, None)
    assert [(t["judge"], t["verdicts"], t["failed_runs"]) for t in judged] == [("j", 2, 0)]
    assert (plan["matches"], plan["judgings"], plan["clean"]) == (2, 2, 0)
    assert [(r["attack"], r["simulated"]) for r in attacked] == [("swap", True), ("null", True)]
    assert sum(r["trials"] for r in attacked) <= 4 and all(r["calls"] == r["trials"] for r in attacked)
    assert statuses(path) == {"done": 2}


def test_an_interrupt_of_a_cell_stops_its_run_and_puts_the_matches_back(tmp_path):
    """The kernel's interrupt (SIGINT, raised in the thread that waits) reaches the thread that runs the matches:
    the run stops as at Ctrl-C, its matches back in the plan, none left running. ~3 s."""
    with FakeOpenAI(slow(0.5)) as fake:
        path = scheduled(tmp_path, fake.api_base)
        mark_checked(path)

        def interrupt_once_asked() -> None:
            deadline = time.monotonic() + 30
            while not fake.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(os.getpid(), signal.SIGINT)

        async def cell():
            with arena.open(path) as ws:
                return ws.run(concurrency=2, progress=lambda line: None)

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as a kernel's (pytest-xdist's may not)
        loop = asyncio.new_event_loop()  # a running loop without asyncio.run's own SIGINT handler, as a kernel's
        try:
            threading.Thread(target=interrupt_once_asked, daemon=True).start()
            result = loop.run_until_complete(cell())
        finally:
            loop.close()
            signal.signal(signal.SIGINT, previous)

    assert result["stopped"] == "interrupted" and result["done"] < result["total"]
    assert "running" not in statuses(path)  # each match in flight went back to the plan
    assert statuses(path).get("scheduled", 0) == result["total"] - result["done"] - result["failed"]


# --- closing, errors, the cost of `import arena` --------------------------------------------------------------------


def test_a_closed_workspace_lets_its_database_go(demo, tmp_path):
    import shutil

    path = Path(shutil.copytree(demo, tmp_path / "ws"))
    with arena.open(path) as ws:
        ws.matches()
        assert (path / "arena.db-wal").exists()  # SQLite in WAL mode: the open connection's journal
    assert not (path / "arena.db-wal").exists()  # the last connection closed: SQLite removed its journal
    with pytest.raises(UserError, match="closed"):
        ws.matches()
    ws.close()  # twice: nothing happens
    assert "closed" in repr(ws)


def user_error(*args) -> str:
    """The message `arena ARGS` exits 2 with."""
    done = invoke(*args)
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    return done.output.strip().removeprefix("error: ")


def test_bad_input_raises_the_user_error_the_cli_exits_2_with(ws, demo, tmp_path):
    with pytest.raises(UserError) as no_workspace:
        arena.open(tmp_path)
    assert str(no_workspace.value) == user_error("entry", "list", "-w", tmp_path)
    assert not list(tmp_path.iterdir())  # nothing written
    with pytest.raises(UserError) as unknown:
        ws.ratings(judge="nobody")
    assert str(unknown.value) == user_error("rate", "-w", demo, "--judge", "nobody")
    with pytest.raises(UserError) as no_match:
        ws.match("m99999")
    assert str(no_match.value) == user_error("match", "show", "m99999", "-w", demo)
    for options, named in (({"ci": "wide"}, "ci='wide'"), ({"bootstrap": -1}, "bootstrap=-1"),
                           ({"confidence": 0.9}, "confidence"), ({"anchor": "sim-ace=1000"}, "anchor="),
                           ({"control": "length"}, "control=")):
        with pytest.raises(UserError, match=named):
            ws.ratings(**options)
    with pytest.raises(UserError, match="--control words"):
        ws.ratings(control=["words"])
    with pytest.raises(UserError, match="by"):
        ws.history(by="category")
    with pytest.raises(UserError, match="judge: "):
        ws.verdicts(judge="nobody")
    with pytest.raises(UserError, match="category='moral'"):
        ws.motions("moral")


def test_import_arena_imports_neither_pandas_nor_the_app():
    code = ("import sys, arena; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('pandas', 'numpy') or m.startswith('arena.app')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert Arena.__module__ == "arena.app.notebook" and arena.open.__module__ == "arena"


# --- the example notebook -------------------------------------------------------------------------------------------


def test_the_example_notebook_runs_on_the_demo(ws, demo, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), str(demo)])
    cells = runpy.run_path(str(EXAMPLE), run_name="__main__")
    printed = capsys.readouterr().out
    rated = app.rate(ws.workspace, seed=0)["ratings"]
    best = sorted(rated, key=lambda r: -r["rating"])[:5]
    lines = printed.splitlines()
    assert lines[0].split() == ["entry", "rating", "ci_low", "ci_high", "matches", "rank_ub"]
    for line, row in zip(lines[1:6], best):  # the top five, each with its interval, as `arena rate` has them
        name, rating, low, high, *_ = line.split()
        assert name == row["entry"] and math.isclose(float(rating), row["rating"], abs_tol=0.01)
        assert math.isclose(float(low), row["ci_low"], abs_tol=0.01)
        assert math.isclose(float(high), row["ci_high"], abs_tol=0.01)
    assert lines[6].startswith("simulated: sim-")
    assert set(cells["by_category"].columns) == {"fact", "value", "policy"}
    assert "Pro's share of the points" in printed
    agreement = cells["agreement"]
    assert len(agreement) == 2 and set(agreement["b"]) == {"sim-experts"}  # each LLM judge against the people
    wins = cells["matches"]["winner"].value_counts()
    assert f"60 matches: Pro won {wins['pro']}, Con won {wins['con']}, tied {wins.get('tie', 0)} (simulated)" in printed
    assert "closed" in repr(cells["ws"])


# --- types --------------------------------------------------------------------------------------------------------

NOTEBOOK = '''
import arena

with arena.open("arena-demo") as ws:
    board = ws.ratings({option}=200, by="category")
    first: str = ws.entries()[0]["name"]
'''


@pytest.mark.slow
def test_mypy_knows_the_rating_options_and_the_records(tmp_path):
    """Some 5-10 s: mypy reads arena.open's Arena and the facade once, then again from its cache."""
    script = tmp_path / "notebook.py"
    cache = tmp_path / "cache"
    mypy = lambda: subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",  # noqa: E731
                                   "--cache-dir", str(cache), str(script)], cwd=ROOT, capture_output=True, text=True)
    script.write_text(NOTEBOOK.format(option="bootsrap"), encoding="utf-8")
    wrong = mypy()
    assert wrong.returncode == 1 and 'Unexpected keyword argument "bootsrap"' in wrong.stdout, wrong.stdout
    script.write_text(NOTEBOOK.format(option="bootstrap"), encoding="utf-8")
    right = mypy()
    assert right.returncode == 0, right.stdout + right.stderr
