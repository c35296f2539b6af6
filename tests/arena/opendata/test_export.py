"""`arena export`: the workspace as Parquet tables with the documented columns, a dataset card whose counts are the
store's, what a public export leaves out, keys never exported, and a failed export leaving the old one."""
from __future__ import annotations

import errno
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.opendata import exports
from arena.domain.ballots import token_hash
from arena.opendata.exports import TABLES, pseudonym, schema, table_path
from arena.domain.records import Ballot
from arena.store import DB_NAME, Store
from tests.support.helpers import (PEOPLE, PLAYED_PEOPLE, TWO_OFFLINE, assert_user_error, entry, invoke, judge,
                           new_workspace, play_round_robin, played_with_people, query, snapshot)

DOC = Path(__file__).resolve().parents[3] / "docs" / "reference" / "formats.md"
NAMES = PLAYED_PEOPLE  # the people of played_with_people's judge "experts"


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    return played_with_people(tmp_path_factory.mktemp("export") / "ws")


def export(workspace: Path, out: Path, *args) -> Path:
    result = invoke("export", "-w", workspace, "--out", out, *args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    return out


def cells(folder: Path) -> list:
    """Every value of every table of an export, nested values flattened."""
    found = []

    def walk(value) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        else:
            found.append(value)

    for table in TABLES:
        walk(pq.read_table(folder / table_path(table)).to_pylist())
    return found


def card_counts(folder: Path) -> dict[str, int]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return {t: int(n.replace(",", "")) for t, n in re.findall(r"^\| `(\w+)` \| ([\d,]+) \| `", text, re.M)}


def test_every_table_has_its_documented_columns_and_types_and_pandas_reads_it(played, tmp_path):
    out = export(played, tmp_path / "out")
    for table, (_, columns) in TABLES.items():
        frame = pd.read_parquet(out / table)  # a table's folder reads as one table
        assert list(frame.columns) == [c.name for c in columns]
        assert pq.read_schema(out / table_path(table)).remove_metadata().equals(schema(table).remove_metadata())
    matches = pd.read_parquet(out / "matches").set_index("id")
    assert matches.loc["m00007", "forfeit"] == "con" and matches.loc["m00008", "status"] == "failed"
    assert matches.loc["m00008", "error"] == "the provider answered 503"
    speeches = pd.read_parquet(out / "speeches")
    assert set(speeches["stage"]) == {"constructive", "rebuttal", "summary"}
    verdicts = pd.read_parquet(out / "verdicts")
    assert set(verdicts["judge"]) == {"j1", "j2"}  # people's runs are ballots
    assert set(verdicts["overall"]) <= {"pro", "con", "tie"}
    assert (verdicts["argument"] == [json.loads(d).get("argument") for d in verdicts["dimensions"]]).all()
    ballots = pd.read_parquet(out / "ballots")
    assert set(zip(ballots["run"], ballots["person"])) == set(enumerate(NAMES))
    calls = pd.read_parquet(out / "calls")
    assert calls["simulated"].all() and calls["prompt_tokens"].sum() > 0
    judges = pd.read_parquet(out / "judges").set_index("name")
    assert judges.loc["experts", "kind"] == "human" and judges.loc["experts", "runs"] == 3
    assert json.loads(judges.loc["experts", "options"])["people"] == list(NAMES)


def test_the_card_counts_are_the_stores_and_it_says_what_is_simulated(played, tmp_path):
    out = export(played, tmp_path / "out")
    one = lambda sql: query(played, sql)[0][0]  # noqa: E731
    assert card_counts(out) == {
        "entries": 3, "motions": one("SELECT COUNT(DISTINCT motion_id) FROM matches"),
        "matches": one("SELECT COUNT(*) FROM matches"), "speeches": one("SELECT COUNT(*) FROM speeches"),
        "verdicts": one("SELECT COUNT(*) FROM verdicts WHERE judge <> 'experts'"),
        "ballots": one("SELECT COUNT(*) FROM verdicts WHERE judge = 'experts'"),
        "calls": one("SELECT COUNT(*) FROM calls"), "judges": 3}
    manifest = json.loads((out / "arena-export.json").read_text())
    assert {t: v["rows"] for t, v in manifest["tables"].items()} == card_counts(out)
    card = (out / "README.md").read_text(encoding="utf-8")
    simulated = one("SELECT COUNT(*) FROM matches WHERE simulated")
    assert f"{simulated} of 9 matches and 42 of 42 verdicts and ballots are simulated" in card
    assert "**Warning:**" in card and "License: <fill in>" in card
    assert "| `experts` | human | offline/people | 3 | 18 | people (3)" in card
    for table, (_, columns) in TABLES.items():  # the schema of every table, column by column
        assert all(f"| `{c.name}` | `{c.type}` | {c.meaning} |" in card for c in columns), table


def test_datasets_reads_every_table_by_config_and_by_its_folder(played, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    out = export(played, tmp_path / "out")
    counts = card_counts(out)
    for table, (_, columns) in TABLES.items():
        by_config = datasets.load_dataset(str(out), table, split="train", cache_dir=str(tmp_path / "cache"))
        by_folder = datasets.load_dataset("parquet", data_dir=str(out / table), split="train",
                                          cache_dir=str(tmp_path / "cache"))
        for loaded in (by_config, by_folder):
            assert loaded.column_names == [c.name for c in columns] and loaded.num_rows == counts[table]
    assert datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache")).num_rows == 9


def test_empty_tables_keep_their_columns_and_types(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    workspace = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE, judges=[judge("j1", runs=1)],
                              motions=["builtin:en"])
    out = export(workspace, tmp_path / "out")
    assert card_counts(out)["matches"] == 0
    for table, (_, columns) in TABLES.items():
        frame = pd.read_parquet(out / table)
        assert list(frame.columns) == [c.name for c in columns] and (len(frame) == 0) == (table not in ("entries",
                                                                                                       "judges"))
        assert pq.read_schema(out / table_path(table)).remove_metadata().equals(schema(table).remove_metadata())
    # datasets reads an empty table, or (versions that refuse a split of no rows) says it has no data, rather
    # than failing deep in its reader as it does on a row group of no rows
    try:
        empty = datasets.load_dataset(str(out), "ballots", split="train", cache_dir=str(tmp_path / "cache"))
        assert empty.num_rows == 0 and empty.column_names == [c.name for c in TABLES["ballots"][1]]
    except ValueError as exc:
        assert "corresponds to no data" in str(exc)
    assert datasets.load_dataset(str(out), "entries", split="train", cache_dir=str(tmp_path / "cache")).num_rows == 2


def test_the_reference_documents_every_column_with_its_type_and_meaning():
    sections = re.split(r"^#{2,4} ", DOC.read_text(encoding="utf-8"), flags=re.M)
    for table, (what, columns) in TABLES.items():
        section = next(s for s in sections if s.startswith(f"Table `{table}`"))
        assert f"A row is {what}." in section
        rows = re.findall(r"^\| `(\w+)` \| `(.+?)` \| (.+) \|$", section, re.M)
        assert rows == [(c.name, c.type, c.meaning) for c in columns], table
        # a column that may be null says when; the others always have a value (the importer checks it)
        assert [c.name for c in columns if c.nullable] == [c.name for c in columns if "null" in c.meaning]


def test_an_export_is_the_same_bytes_every_time(played, tmp_path):
    assert snapshot(export(played, tmp_path / "one")) == snapshot(export(played, tmp_path / "two"))


def test_public_exports_give_people_stable_pseudonyms_and_no_name_or_error_text(played, tmp_path):
    one, two = export(played, tmp_path / "one", "--public"), export(played, tmp_path / "two", "--public")
    assert snapshot(one) == snapshot(two)  # the same pseudonyms, every export
    store = Store(played / DB_NAME)
    secret = store.ballot_secret()
    store.close()
    ballots = pd.read_parquet(one / "ballots")
    assert set(zip(ballots["run"], ballots["person"])) == {(k, pseudonym(secret, p)) for k, p in enumerate(NAMES)}
    assert all(re.fullmatch(r"person-[0-9a-f]{12}", p) for p in ballots["person"])
    experts = pd.read_parquet(one / "judges").set_index("name").loc["experts"]
    assert json.loads(experts["options"])["people"] == [pseudonym(secret, p) for p in NAMES]
    for name in NAMES:  # in no file's bytes and no cell
        assert not any(name.encode() in data for data in snapshot(one).values()), name
        assert not any(isinstance(c, str) and name in c for c in cells(one)), name
    assert pd.read_parquet(one / "calls")["error"].isna().all()
    assert pd.read_parquet(one / "matches")["error"].isna().all()
    assert "public export" in (one / "README.md").read_text(encoding="utf-8")
    # the full export names them: the public one is what changed
    assert json.loads(pd.read_parquet(export(played, tmp_path / "full") / "judges").set_index("name")
                      .loc["experts", "options"])["people"] == list(NAMES)


def test_a_public_export_replaces_peoples_names_in_any_case_and_in_every_free_text(played, tmp_path):
    copy = tmp_path / "ws"
    shutil.copytree(played, copy)
    conn = sqlite3.connect(copy / DB_NAME)
    with conn:  # names as people and models write them: another case, in punctuation, in other columns
        conn.execute("UPDATE verdicts SET rationale = 'Signed, ANN-AALTO. (Bo-Brandt agrees; annual bo-brandtish.)' "
                     "WHERE judge = 'experts'")
        conn.execute("UPDATE verdicts SET rationale = 'As Cy-Castell said: \"cy-castell\" wins.' WHERE judge = 'j1'")
        conn.execute("UPDATE speeches SET text = text || ' Thanks, ann-Aalto!'")
    conn.close()
    out = export(copy, tmp_path / "out", "--public")
    texts = [c for c in cells(out) if isinstance(c, str)]
    for name in NAMES:
        assert not any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", t, re.I) for t in texts), name
    store = Store(played / DB_NAME)
    secret = store.ballot_secret()
    store.close()
    ann, bo = pseudonym(secret, NAMES[0]), pseudonym(secret, NAMES[1])
    ballots = pd.read_parquet(out / "ballots")
    assert set(ballots["rationale"]) == {f"Signed, {ann}. ({bo} agrees; annual bo-brandtish.)"}  # words kept
    assert all(t.endswith(f" Thanks, {ann}!") for t in pd.read_parquet(out / "speeches")["text"])


def test_a_public_export_leaves_out_what_people_still_judge_blind(tmp_path):
    workspace = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE, judges=[judge("j1", runs=1), PEOPLE],
                              motions=["builtin:en"], init="cli")
    play_round_robin(workspace)
    store = Store(workspace / DB_NAME)
    done = query(workspace, "SELECT id FROM matches ORDER BY seq")
    store.cast_ballots("experts", ("ann", "bo", "cy"),
                       [Ballot(done[0][0], p, "pro") for p in ("ann", "bo", "cy")], simulated=False)
    store.issue_links("experts", {"ann": token_hash("a-secret-token-of-ann")})
    store.close()
    public = export(workspace, tmp_path / "public", "--public")
    assert list(pd.read_parquet(public / "matches")["id"]) == [done[0][0]]  # the one match every person judged
    assert set(pd.read_parquet(public / "verdicts")["match_id"]) == {done[0][0]}
    assert set(pd.read_parquet(public / "calls")["match_id"].dropna()) == {done[0][0]}
    full = export(workspace, tmp_path / "full")
    assert len(pd.read_parquet(full / "matches")) == 2
    for folder in (public, full):  # links are never exported: neither the token nor its hash
        for data in snapshot(folder).values():
            assert b"a-secret-token-of-ann" not in data and token_hash("a-secret-token-of-ann").encode() not in data


def test_api_keys_appear_in_no_file_of_any_export(tmp_path, monkeypatch):
    key = "zq7PLANTEDkey0123456789"  # no provider's key shape: only the environment tells it is a key
    workspace = new_workspace(tmp_path / "ws", motions=["builtin:en"], judges=[judge("j1", runs=1)], entries=[
        entry("a", strength=0.5), entry("b"),
        entry("remote", model="openai/gpt-4o", api_base=f"http://user:{key}@127.0.0.1:9/v1?api-key={key}#{key}",
              retired=True)])
    play_round_robin(workspace)
    store = Store(workspace / DB_NAME)  # stored before the key is in the environment, so stored unredacted
    store.record_call(kind="llm", model="openai/gpt-4o", latency_s=0.1, cache_hit=False, simulated=False,
                      error=f"401: invalid key {key}")
    store.mark_failed(query(workspace, "SELECT id FROM matches")[0][0], f"the provider refused the key {key}")
    store.close()
    assert key in str(query(workspace, "SELECT error FROM calls WHERE error IS NOT NULL"))
    monkeypatch.setenv("ACME_API_KEY", key)
    for mode in ((), ("--public",)):
        out = export(workspace, tmp_path / f"out{len(mode)}", *mode)
        for name, data in snapshot(out).items():
            assert key.encode() not in data, name
        assert not any(isinstance(c, str) and key in c for c in cells(out))
        entries = pd.read_parquet(out / "entries").set_index("name")
        assert entries.loc["remote", "api_base"] == "http://127.0.0.1:9/v1"
    errors = pd.read_parquet(tmp_path / "out0" / "calls")["error"].dropna()
    assert list(errors) == ["401: invalid key [redacted] (key redacted)"]  # the full export keeps it, redacted


def test_out_that_is_a_file_or_under_one_or_holds_the_workspace_exits_2_writing_nothing(played, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    before = snapshot(played)
    assert_user_error(invoke("export", "-w", played, "--out", a_file), "--out", "a-file", "file")
    assert_user_error(invoke("export", "-w", played, "--out", a_file / "export"), "--out", "is a file, not a folder")
    assert_user_error(invoke("export", "-w", played, "--out", played.parent), "--out", "holds the workspace")
    assert a_file.read_text() == "mine" and snapshot(played) == before


def test_a_failed_export_leaves_the_old_one_as_it_was(played, tmp_path, monkeypatch):
    out = export(played, tmp_path / "out")
    (out / "my-notes.txt").write_text("kept")
    before = snapshot(out)
    written = []

    class FullDisk(pq.ParquetWriter):  # the disk fills up at the third table
        def write_table(self, table, *args, **options):
            written.append(table)
            if len(written) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
            super().write_table(table, *args, **options)

    monkeypatch.setattr(exports.pq, "ParquetWriter", FullDisk)
    result = invoke("export", "-w", played, "--out", out, "--public")
    assert result.exit_code == 1 and "no space left on device" in result.output
    assert snapshot(out) == before
    assert [p.name for p in out.parent.iterdir()] == ["out"]  # nothing of the failed build is left beside it
    monkeypatch.undo()
    export(played, out, "--public")
    assert (out / "my-notes.txt").read_text() == "kept"  # files an export does not write stay
