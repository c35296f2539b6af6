"""The workspace database: versioned schema, WAL, and a refusal to open a newer schema."""
from __future__ import annotations

import sqlite3

import pytest

from arena.base.errors import ArenaError
from arena.store import SCHEMA_VERSION, Store


def test_new_store_has_versioned_schema_in_wal_mode(tmp_path):
    store = Store(tmp_path / "arena.db")
    conn = store.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"entries", "motions", "tournaments", "matches", "speeches", "agent_messages", "verdicts", "calls",
            "cache"} <= tables
    store.close()
    Store(tmp_path / "arena.db").close()  # reopening an existing store migrates nothing and keeps data


def test_a_newer_schema_is_refused(tmp_path):
    Store(tmp_path / "arena.db").close()
    conn = sqlite3.connect(tmp_path / "arena.db")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(ArenaError, match="newer"):
        Store(tmp_path / "arena.db")


def test_references_keep_their_number_and_source_text_and_older_rows_still_load(tmp_path):
    from arena.app import commands as app
    from arena.app.shapes.records import match_json
    from arena.match.claims import Holder
    from arena.domain.records import Reference, Speech
    from tests.support.helpers import entry, new_workspace

    new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], search=None)
    ws = app.open_workspace(tmp_path / "ws")
    [match_id] = ws.store.add_tournament("t", 0, {}, [(ws.store.motion_ids()[0], "a", "b")])
    holder = Holder.here()
    assert ws.store.claim_match(holder, only=match_id) == match_id
    cited = (Reference("Report", "https://example.org/r", "Injuries fell by a third.", 7),)
    ws.store.commit_match(match_id, [Speech("constructive", "pro", "Injuries fell [7].", cited)], [], [], True,
                          holder)

    assert ws.store.match(match_id).speeches[0].references == cited
    assert match_json(ws.store.match(match_id))["speeches"][0]["references"] == [
        {"title": "Report", "url": "https://example.org/r", "text": "Injuries fell by a third.", "number": 7}]
    # A speech stored before references had text and numbers reads with neither.
    ws.store.conn.execute("UPDATE speeches SET refs = ?", ('[{"title": "Old", "url": "https://example.org/o"}]',))
    assert ws.store.match(match_id).speeches[0].references == (Reference("Old", "https://example.org/o"),)
    ws.close()


def test_the_change_stamp_is_renewed_by_every_write_of_what_the_site_shows_and_by_nothing_else(tmp_path):
    """arena publish compares the stamp rather than hashing tables, so a write the site shows must renew it (or a
    publish would keep a stale site), and reads, claims and unchanged entries must not (or every publish would
    write the site again)."""
    from arena.match.claims import Holder
    from arena.domain.records import Entry, Motion, Verdict

    store = Store(tmp_path / "arena.db")
    try:
        ace, bold = Entry("ace", "direct", "openai/x"), Entry("bold", "direct", "openai/y")
        renewed = []

        def write(what, step):
            before = store.change_stamp()
            step()
            renewed.append((what, store.change_stamp() != before))

        write("entries", lambda: store.sync_entries([ace, bold]))
        write("the same entries again", lambda: store.sync_entries([ace, bold]))
        write("a motion", lambda: store.add_motions([Motion("m1", "A motion.", "fact")]))
        write("a tournament", lambda: store.add_tournament("round-robin", 0, {}, [("m1", "ace", "bold")]))
        holder = Holder.here()
        write("a claim", lambda: store.claim_match(holder))
        write("a heartbeat", lambda: store.heartbeat(holder))
        write("a ledger row", lambda: store.record_call(kind="llm", model="openai/x", latency_s=0.1,
                                                        cache_hit=False, simulated=False, match_id="m00001"))
        write("a cached answer", lambda: store.cache_put("k", "llm", {"text": "hi"}))
        write("the match's commit", lambda: store.commit_match("m00001", [], [], [], False, holder))
        write("reads", lambda: (store.matches(), store.match_states(), store.judged_verdicts(), store.ledger()))
        write("a verdict", lambda: store.replace_verdicts("m00001", "j", [Verdict("j", 0, "pro")], False))
        assert renewed == [("entries", True), ("the same entries again", False), ("a motion", True),
                           ("a tournament", True), ("a claim", True), ("a heartbeat", False), ("a ledger row", True),
                           ("a cached answer", False), ("the match's commit", True), ("reads", False),
                           ("a verdict", True)]
    finally:
        store.close()


def test_a_version_12_workspace_keeps_its_calls_and_verdicts_and_counts_cached_tokens_from_then_on(tmp_path):
    """Schema 13 adds the prompt tokens a provider read from its cache, to each call and each judge run: a workspace
    written before keeps its rows (none cached), and shows them as before, with 0."""
    from arena.app import commands as app
    from arena.app.shapes.records import match_json
    from arena.domain.records import AgentUsage, Speech, Verdict
    from arena.match.claims import Holder
    from tests.support.helpers import entry, new_workspace

    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], search=None)
    ws = app.open_workspace(path)
    [match_id] = ws.store.add_tournament("t", 0, {}, [(ws.store.motion_ids()[0], "a", "b")])
    ws.close()
    db = sqlite3.connect(path / "arena.db")  # what version 12 wrote: no cached_tokens columns, a call and a verdict
    db.executescript("DROP TABLE judge_attacks;"
                     "ALTER TABLE calls DROP COLUMN cached_tokens; ALTER TABLE verdicts DROP COLUMN cached_tokens;"
                     "UPDATE meta SET value='12' WHERE key='schema_version';"
                     f"INSERT INTO calls (kind, match_id, model, prompt_tokens, latency_s, cache_hit, simulated,"
                     f" created_at, cost) VALUES ('llm', '{match_id}', 'openai/x', 900, 0.1, 0, 0, 'then', 0.01);"
                     f"INSERT INTO verdicts (match_id, judge, run, overall, dimensions, rationale, simulated,"
                     f" created_at) VALUES ('{match_id}', 'j', 0, 'pro', '{{}}', 'Clear.', 0, 'then');")
    db.close()

    ws = app.open_workspace(path)
    assert [(c.prompt_tokens, c.cached_tokens, c.cost) for c in ws.store.ledger()] == [(900, 0, 0.01)]
    assert [v.verdict.cached_tokens for v in ws.store.stored_verdicts()] == [0]
    used = AgentUsage(2, 3000, 400, 0.02, cached_tokens=1152)  # a speech and a run played from now on
    holder = Holder.here()
    ws.store.conn.execute("UPDATE matches SET status='scheduled' WHERE id=?", (match_id,))
    assert ws.store.claim_match(holder, only=match_id) == match_id
    ws.store.commit_match(match_id, [Speech("constructive", "pro", "Our case.", agents={"writer": used})],
                          [Verdict("j", 1, "con", cached_tokens=1024)], [], False, holder)
    shown = match_json(ws.store.match(match_id))
    assert shown["speeches"][0]["agents"]["writer"]["cached_tokens"] == used.cached_tokens
    assert [(v["run"], v["cached_tokens"]) for v in shown["verdicts"]] == [(0, 0), (1, 1024)]
    ws.store.record_call(kind="llm", model="openai/x", latency_s=0.1, cache_hit=False, simulated=False,
                         prompt_tokens=2000, cached_tokens=1536)
    assert [c.cached_tokens for c in ws.store.ledger()] == [0, 1536]
    ws.close()


def test_a_version_13_workspace_gains_the_judges_attack_runs_and_each_run_replaces_the_last(tmp_path):
    from arena.app import commands as app
    from arena.domain.records import AttackResult
    from tests.support.helpers import entry, new_workspace

    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], search=None)
    db = sqlite3.connect(path / "arena.db")
    db.executescript("DROP TABLE judge_attacks; UPDATE meta SET value='13' WHERE key='schema_version';")
    db.close()
    ws = app.open_workspace(path)
    try:
        stamp = ws.store.change_stamp()
        first = [AttackResult("j", "padding", 8, 2, 0.07, 0.59, 0, 8, 0.01, ran_at="then", flips_uncaught=2),
                 AttackResult("j", "null", 8, 0, 0.0, 0.32, 24, 8, None, ran_at="then")]
        ws.store.save_attack_results("j", first)
        ws.store.save_attack_results("k", [AttackResult("k", "swap", 0, 0, None, None, 0, 0, 0.0, True, "now")])
        assert ws.store.attack_results("j") == first and ws.store.change_stamp() != stamp  # the site shows them
        again = [AttackResult("j", "swap", 3, 1, 0.06, 0.79, 0, 3, 0.0, ran_at="later", flips_uncaught=1)]
        ws.store.save_attack_results("j", again)
        assert [(r.judge, r.attack) for r in ws.store.attack_results()] == [("j", "swap"), ("k", "swap")]
        assert ws.store.attack_results("k")[0].flip_rate is None  # no trials: no share
    finally:
        ws.close()
