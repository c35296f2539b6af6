"""`arena import arena DIR`: an export read back into a fresh workspace rates the same under every judge and shows
the same matches; it is idempotent, and a folder that is no export (or a newer one) exits 2 writing nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.opendata.exports import table_path
from arena.domain.records import Match, Verdict
from arena.store import DB_NAME, Store
from tests.support.helpers import (PLAYED_PEOPLE, assert_user_error, entry, invoke, judge, new_workspace,
                           played_with_people, query, snapshot)

JUDGES = ("j1", "j2", "experts")  # played_with_people's


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    return played_with_people(tmp_path_factory.mktemp("import") / "ws")


def run(*args) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def exported(workspace: Path, out: Path, *args) -> Path:
    run("export", "-w", workspace, "--out", out, *args)
    return out


def fresh(path: Path) -> Path:
    run("init", path)
    return path


def imported(export: Path, path: Path) -> dict:
    return json.loads(run("import", "arena", export, "-w", path, "--format", "json"))


def ratings(workspace: Path, judge_name: str) -> dict:
    return json.loads(run("rate", "-w", workspace, "--judge", judge_name, "--format", "json", "--bootstrap", "200"))


def shown(workspace: Path, match_id: str) -> dict:
    return json.loads(run("match", "show", match_id, "-w", workspace, "--format", "json"))


def unsigned(match: dict) -> dict:
    """A match's JSON without its people's rationales."""
    return {**match, "verdicts": [{**v, "rationale": None if v["judge"] == "experts" else v["rationale"]}
                                  for v in match["verdicts"]]}


@pytest.mark.parametrize("public", [False, True], ids=["full", "public"])
def test_every_judge_rates_the_same_and_every_match_shows_the_same_after_the_round_trip(played, tmp_path, public):
    back = fresh(tmp_path / "back")
    done = imported(exported(played, tmp_path / "out", *(["--public"] if public else [])), back)
    assert (done["matches"], done["entries"], done["judges"]) == (7, 3, list(JUDGES))  # the done ones
    # A public export leaves out the matches not done while people judge; the full one has them, skipped here.
    assert sorted(s["reason"].split(":")[0] for s in done["skipped"]) == \
        ([] if public else ["status failed", "status scheduled"])
    for name in JUDGES:
        before = ratings(played, name)
        assert before["ratings"] and ratings(back, name) == before, name
    assert json.loads(run("rate", "-w", back, "--format", "json")) == json.loads(run("rate", "-w", played, "--format",
                                                                                     "json"))  # the default judge
    for (match_id,) in query(played, "SELECT id FROM matches WHERE status = 'done'"):
        after, before = shown(back, match_id), shown(played, match_id)
        if public:  # people's rationales name them (the simulator signs its ballots): pseudonyms there too
            assert not any(p in v["rationale"] for v in after["verdicts"] for p in PLAYED_PEOPLE)
            after, before = unsigned(after), unsigned(before)
        assert after == before, match_id
    assert shown(back, "m00007")["forfeit"] == "con"
    config = (back / "arena.toml").read_text(encoding="utf-8")
    assert 'kind = "imported"' in config and 'debater = "imported"' in config
    people = query(back, "SELECT COUNT(*) FROM verdicts WHERE judge = 'experts'")[0][0]
    assert people == query(played, "SELECT COUNT(*) FROM verdicts WHERE judge = 'experts'")[0][0]
    assert (PLAYED_PEOPLE[0] in config) is not public  # a public export's people stay pseudonyms


def test_the_imported_entries_and_judges_keep_what_they_were(played, tmp_path):
    back = fresh(tmp_path / "back")
    imported(exported(played, tmp_path / "out"), back)
    entries = {e["name"]: e for e in json.loads(run("entry", "list", "-w", back, "--format", "json"))}
    assert {n: (e["debater"], e["model"]) for n, e in entries.items()} == {
        "a": ("imported", "offline/a"), "b": ("imported", "offline/b"), "c": ("imported", "offline/c")}
    shown_c = json.loads(run("entry", "show", "c", "-w", back, "--format", "json"))
    assert shown_c["params"]["debater"] == "search-baseline" and shown_c["strength"] == -0.8
    from arena.workspace.config import load_config

    judges = {j.name: j for j in load_config(back).judges}
    assert [j.name for j in load_config(back).judges] == list(JUDGES)
    assert (judges["j1"].kind, judges["j1"].model, judges["j1"].runs, judges["j1"].options["kind"]) == \
        ("imported", "offline/j1", 3, "single")
    assert judges["experts"].options["panelists"] == list(PLAYED_PEOPLE) and judges["experts"].runs == 3


def test_importing_again_adds_nothing(played, tmp_path):
    back = fresh(tmp_path / "back")
    out = exported(played, tmp_path / "out")
    imported(out, back)
    before = snapshot(back)
    again = imported(out, back)
    assert (again["matches"], again["entries"], again["judges"], again["runs"]) == (0, 0, [], 0)
    assert again["known"] == {"matches": 7, "entries": 3, "judges": 3}
    assert snapshot(back)["arena.toml"] == before["arena.toml"]
    assert query(back, "SELECT COUNT(*) FROM matches")[0][0] == 7


def test_a_verdicts_own_simulated_flag_survives_the_round_trip(tmp_path):
    """An offline judge's verdict on a match of real models is simulated, though its match is not; a person's
    ballot on a simulated match is not (arena.domain.records.simulated)."""
    source = new_workspace(tmp_path / "src", motions=["builtin:en"], init="cli",
                           entries=[entry("x", model="openai/x"), entry("y", model="openai/y")],
                           judges=[judge("bot", runs=1), judge("real", model="openai/judge", runs=1)])
    store = Store(source / DB_NAME)
    motion = store.motion(store.motion_ids()[0])
    store.import_matches([Match("r1", motion, "x", "y", "done", verdicts=(Verdict("bot", 0, "pro"),
                                                                           Verdict("real", 0, "con")))],
                         simulated={("r1", "bot", 0): True})
    store.close()
    back = fresh(tmp_path / "back")
    imported(exported(source, tmp_path / "out"), back)
    flags = "SELECT m.simulated, v.judge, v.simulated FROM verdicts v JOIN matches m ON m.id = v.match_id ORDER BY 2"
    assert query(back, flags) == query(source, flags) == [(0, "bot", 1), (0, "real", 0)]
    assert json.loads(run("rate", "-w", back, "--judge", "bot", "--format", "json"))["meta"]["simulated"] is True


def break_it(out: Path, how: str) -> None:
    if how == "no manifest":
        (out / "arena-export.json").unlink()
    elif how == "newer":
        manifest = json.loads((out / "arena-export.json").read_text())
        (out / "arena-export.json").write_text(json.dumps({**manifest, "export_version": 99}))
    elif how == "no table":
        (out / table_path("speeches")).unlink()
    elif how == "no column":
        path = out / table_path("verdicts")
        pq.write_table(pq.read_table(path).drop_columns(["extra"]), path)
    elif how == "not parquet":
        (out / table_path("matches")).write_text("id,status\nm1,done\n")
    elif how == "rows lost":
        path = out / table_path("ballots")
        pq.write_table(pq.read_table(path).slice(0, 2), path)
    elif how == "null":
        path = out / table_path("verdicts")
        data = pq.read_table(path)
        pq.write_table(data.set_column(data.schema.get_field_index("judge"), "judge",
                                       pa.nulls(data.num_rows, pa.string())), path)
    elif how in ("bad outcome", "bad json"):
        path = out / table_path("ballots")
        data = pq.read_table(path)
        column, value = ("overall", "maybe") if how == "bad outcome" else ("dimensions", "{not json")
        values = data.column(column).to_pylist()
        pq.write_table(data.set_column(data.schema.get_field_index(column), column,
                                       pa.array([value, *values[1:]], pa.string())), path)
    elif how == "wrong type":
        path = out / table_path("verdicts")
        data = pq.read_table(path)
        pq.write_table(data.set_column(data.schema.get_field_index("run"), "run",
                                       pa.array(["first"] * data.num_rows)), path)


@pytest.mark.parametrize("how, fragments", [
    ("no manifest", ["not an arena export", "arena-export.json"]),
    ("newer", ["export_version 99 is newer", "upgrade arena"]),
    ("no table", ["missing speeches/speeches.parquet"]),
    ("no column", ["verdicts.parquet", "missing column extra"]),
    ("not parquet", ["matches.parquet", "not a table of an arena export"]),
    ("rows lost", ["ballots.parquet", "2 rows", "the export is incomplete"]),
    ("wrong type", ["verdicts.parquet", "not a table of an arena export"]),
    ("null", ["verdicts.parquet", "null in column judge, which always has a value"]),
    ("bad outcome", ["ballots.parquet: row 1: overall 'maybe': expected one of ['con', 'pro', 'tie']"]),
    ("bad json", ["ballots.parquet: row 1: dimensions is not JSON"]),
])
def test_a_folder_that_is_not_a_whole_export_exits_2_naming_what_is_missing(played, tmp_path, how, fragments):
    out = exported(played, tmp_path / "out")
    break_it(out, how)
    back = fresh(tmp_path / "back")
    before = snapshot(back)
    assert_user_error(invoke("import", "arena", out, "-w", back), str(out), *fragments)
    assert snapshot(back) == before


def tamper(out: Path, table: str, change) -> None:
    """Rewrite a table of the export at out with change(rows) -> rows, its manifest's row count kept true."""
    path = out / table_path(table)
    data = pq.read_table(path)
    rows = change(data.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=data.schema), path)
    manifest = json.loads((out / "arena-export.json").read_text())
    manifest["tables"][table]["rows"] = len(rows)
    (out / "arena-export.json").write_text(json.dumps(manifest))


def first(column: str, value):
    return lambda rows: [{**rows[0], column: value}, *rows[1:]]


@pytest.mark.parametrize("table, change, fragment", [
    ("speeches", lambda rows: [*rows, rows[0]], "speeches.parquet: row 37: ('m00001', 'constructive', 'pro') again "
                                                "(first in row 1)"),
    ("verdicts", first("run", -5), "verdicts.parquet: row 1: run -5: judge 'j1' has runs 0 to 2"),
    ("judges", first("runs", 2_000_000_000), "judges.parquet: row 1: runs 2000000000: expected a whole number "
                                             "from 1 to 100"),
    ("entries", first("strength", float("inf")), "entries.parquet: row 1: strength inf: expected a number"),
    ("matches", lambda rows: [{**rows[0], "con": rows[0]["pro"]}, *rows[1:]], "matches.parquet: row 1: pro and "
                                                                              "con are both"),
    ("matches", first("pro", "nobody"), "matches.parquet: row 1: pro 'nobody': no entry of that name"),
    ("verdicts", first("match_id", "m99999"), "verdicts.parquet: row 1: match_id 'm99999': no match of that id"),
    ("ballots", first("judge", "ghosts"), "ballots.parquet: row 1: judge 'ghosts': no judge of that name"),
    # each speech a turn of its match's format, in its order (a stage not the format's wrote arena.toml and the
    # database, then failed with a KeyError)
    ("speeches", first("stage", "nonsense"), "speeches.parquet: row 1: match 'm00001': stage 'nonsense' is not a "
                                             "stage of debate format 'agent4debate' (its stages: constructive, "
                                             "rebuttal, summary); nothing was imported"),
    ("speeches", lambda rows: [{**rows[0], "seq": 2}, rows[1], {**rows[2], "seq": 0}, *rows[3:]],
     "speeches.parquet: row 2: match 'm00001': the con turn of stage 'constructive' is spoken after the pro turn of "
     "stage 'rebuttal', which debate format 'agent4debate' speaks after it"),
], ids=["duplicate speech", "negative run", "runs past the limit", "infinite strength", "against itself",
        "no such entry", "verdict of no match", "ballot of no judge", "stage of no turn", "out of order"])
def test_a_tampered_export_is_refused_whole_naming_the_row_and_nothing_is_written(played, tmp_path, table,
                                                                                   change, fragment):
    out = exported(played, tmp_path / "out")
    tamper(out, table, change)
    back = fresh(tmp_path / "back")
    before = snapshot(back)
    assert_user_error(invoke("import", "arena", out, "-w", back), fragment)
    assert snapshot(back) == before


MINI = """
[[formats]]
name = "mini"
title = "Mini"
[[formats.turns]]
stage = "constructive"
side = "pro"
title = "Case"
words = 200
[[formats.turns]]
stage = "constructive"
side = "con"
title = "Case"
words = 200
[[formats.turns]]
stage = "rebuttal"
side = "con"
title = "Reply"
words = 200
"""


def test_a_match_of_a_format_this_workspace_lacks_or_that_its_speeches_do_not_follow_is_refused(played, tmp_path):
    """A format the importing arena does not know is checked against the workspace's own: unknown, it is named;
    declared in arena.toml, the speeches must be its turns."""
    out = exported(played, tmp_path / "out")
    tamper(out, "matches", first("format", "mini"))
    back = fresh(tmp_path / "back")
    before = snapshot(back)
    assert_user_error(invoke("import", "arena", out, "-w", back), "match 'm00001' is in debate format 'mini', which "
                      "this workspace does not know", "declare it in arena.toml ([[formats]])")
    assert snapshot(back) == before
    with (back / "arena.toml").open("a", encoding="utf-8") as toml:
        toml.write(MINI)
    before = snapshot(back)
    assert_user_error(invoke("import", "arena", out, "-w", back), "match 'm00001', speech 3: side 'pro' has no turn "
                      "in stage 'rebuttal' of debate format 'mini'; nothing was imported")
    assert snapshot(back) == before


def test_an_import_the_database_refuses_leaves_arena_toml_as_it_was(played, tmp_path, monkeypatch):
    """arena.toml and the database change together or not at all: the entries and judges written to arena.toml
    go again when storing the matches fails (here, made to fail as a constraint the checks missed would)."""
    import sqlite3

    from arena.app import commands as app
    from arena.app.setup.importing import import_folder

    out = exported(played, tmp_path / "out")
    back = fresh(tmp_path / "back")
    before = snapshot(back)["arena.toml"]
    ws = app.open_workspace(back)
    try:
        def refused(*args, **kwargs):
            raise sqlite3.IntegrityError("UNIQUE constraint failed: speeches.match_id, speeches.seq")

        monkeypatch.setattr(ws.store, "import_matches", refused)
        with pytest.raises(sqlite3.IntegrityError):
            import_folder(ws, "arena", out)
        assert [e.name for e in ws.config.entries] == []  # the open workspace as the file is
    finally:
        ws.close()
    assert snapshot(back)["arena.toml"] == before
    assert query(back, "SELECT COUNT(*) FROM matches") == [(0,)]


def test_a_missing_folder_or_a_judge_option_exits_2(played, tmp_path):
    back = fresh(tmp_path / "back")
    assert_user_error(invoke("import", "arena", tmp_path / "nowhere", "-w", back), "nowhere", "no such folder")
    out = exported(played, tmp_path / "out")
    assert_user_error(invoke("import", "arena", out, "-w", back, "--judge", "mine"), "arena importer", "judge")


def test_an_imported_workspace_exports_the_same_runs_and_its_public_export_names_no_one(played, tmp_path):
    back = fresh(tmp_path / "back")
    first = exported(played, tmp_path / "first")
    imported(first, back)
    again = exported(back, tmp_path / "again")
    rows = lambda out, table: pq.read_table(out / table_path(table)).to_pylist()  # noqa: E731
    runs = lambda out, tables: sorted((r["match_id"], r["judge"], r["run"], r["overall"], r["dimensions"],  # noqa
                                       r["rationale"]) for t in tables for r in rows(out, t))
    assert runs(again, ["verdicts"]) == runs(first, ["verdicts", "ballots"])  # people's runs are the judge's now
    assert rows(again, "speeches") == rows(first, "speeches")
    card = (again / "README.md").read_text(encoding="utf-8")  # the card names an imported judge as its source's
    assert "| `j1` | imported | offline/j1 | 3 | 18 | imported from an arena export of ws: that source's own panel, " \
           "not a judge this arena ran |" in card
    public = exported(back, tmp_path / "public", "--public")
    for name in PLAYED_PEOPLE:
        assert not any(name.encode() in data for data in snapshot(public).values()), name


def test_matches_scheduled_after_an_import_take_ids_no_imported_match_has(tmp_path):
    """An import keeps its source's ids, so the 2 matches held are m00006 and m00009 (a public export holds back
    the rest); what is scheduled or played after it is numbered above them, and runs."""
    source = new_workspace(tmp_path / "src", motions=["builtin:en"], init="cli",
                           entries=[entry("x", model="openai/x"), entry("y", model="openai/y")],
                           judges=[judge("bot", runs=1)])
    store = Store(source / DB_NAME)
    motion = store.motion(store.motion_ids()[0])
    store.import_matches([Match(match_id, motion, "x", "y", "done", verdicts=(Verdict("bot", 0, "pro"),))
                          for match_id in ("m00006", "m00009")])
    store.close()
    back = new_workspace(tmp_path / "back", motions=["builtin:en"], init="cli",
                         entries=[entry("a", strength=1.0), entry("b")], judges=[judge("j", runs=1)])
    imported(exported(source, tmp_path / "out"), back)
    run("schedule", "--format", "round-robin", "--rounds", "5", "-w", back)  # 10 matches: m00010 ... m00019
    run("match", "play", "--motion", "en-fact-001", "--pro", "a", "--con", "b", "-w", back)  # m00020
    ids = [r[0] for r in query(back, "SELECT id FROM matches ORDER BY seq")]
    assert ids[:2] == ["m00006", "m00009"] and ids[2:] == [f"m{n:05d}" for n in range(10, 21)]
    assert query(back, "SELECT status FROM matches WHERE id = 'm00020'") == [("done",)]
    run("run", "-w", back)
    assert query(back, "SELECT status, COUNT(*) FROM matches GROUP BY status") == [("done", 13)]
    # The plan lists its tournaments' matches; the imported ones were debated in none (this was a KeyError).
    listed = [line.split()[0] for line in run("schedule", "--show", "-w", back).splitlines()[1:]]
    assert listed == [f"m{n:05d}" for n in range(10, 21)]


def test_a_source_match_whose_id_this_workspace_gives_another_is_named_and_left_out(tmp_path):
    """Another arena's export whose m00001 is not our m00001: named as skipped, its entries not registered when
    none of their matches is imported; before, taken for 'nothing new' and dropped without a word."""
    source = new_workspace(tmp_path / "src", motions=["builtin:en"], init="cli",
                           entries=[entry("x", model="openai/x"), entry("y", model="openai/y")],
                           judges=[judge("bot", runs=1)])
    store = Store(source / DB_NAME)
    motion = store.motion("en-fact-001")
    store.import_matches([Match("m00001", motion, "x", "y", "done", verdicts=(Verdict("bot", 0, "pro"),))])
    store.close()
    back = new_workspace(tmp_path / "back", motions=["builtin:en"], init="cli",
                         entries=[entry("a", strength=1.0), entry("b")], judges=[judge("j", runs=1)])
    run("match", "play", "--motion", "en-value-001", "--pro", "a", "--con", "b", "-w", back)  # our m00001
    before = (back / "arena.toml").read_text(encoding="utf-8")
    done = imported(exported(source, tmp_path / "out"), back)
    assert done["matches"] == 0 and done["entries"] == 0 and done["known"]["matches"] == 0
    assert done["known"]["entries"] == 0  # x and y: neither registered nor there before
    assert done["skipped"] == [{"path": "m00001", "reason": "this workspace has a match of that id already, another "
                                                            "one (en-value-001: PRO a vs CON b): not imported"}]
    assert query(back, "SELECT pro, con FROM matches") == [("a", "b")]
    assert "openai/x" not in (back / "arena.toml").read_text(encoding="utf-8").replace(before, "")
