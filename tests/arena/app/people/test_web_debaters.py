"""People debate on the web: a match reaching a web human's turn is parked (its claim given up, the run going on),
the turn showing exactly what the protocol lets that side see; a later run continues it once the speech is in,
replaying what was said before from the cache, and a turn past its deadline forfeits that side."""
from __future__ import annotations

import time

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.base.clock import now
from tests.support.helpers import entry, judge, new_workspace, speech_text

WEB = {"via": "web"}


def workspace(tmp_path):
    return new_workspace(tmp_path / "ws", entries=[entry("ann", debater="human", model="human/ann", params=WEB),
                                                   entry("bot", strength=0.5)],
                         judges=[judge("j", runs=1)])


def write(ws, turn, marker: str) -> None:
    """ann writes the turn's speech: ordinary prose of about its budget, passing the speech checks."""
    size = int(turn.brief.budget.amount * 0.8)
    assert ws.store.submit_speech(turn.match_id, turn.stage, turn.side, speech_text(marker, size=size))


def test_a_match_waits_for_the_person_at_each_turn_and_goes_on_once_they_have_spoken(tmp_path):
    path = workspace(tmp_path)
    ws = open_workspace(path)
    try:
        (match_id,) = ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bot")])
        written, seen = [], {}
        for _ in range(10):
            result = app.run(ws, concurrency=2, progress=lambda line: None)
            state = ws.store.match_states()[0]
            if state.status == "done":
                break
            assert state.status == "awaiting" and result["awaiting"] == 1 and result["failed"] == 0
            (turn,) = [t for t in ws.store.turns_of("ann") if not t.submitted]
            assert turn.side == "pro" and turn.entry == "ann"
            shown = [(v.stage, v.side) for v in turn.brief.visible]
            if turn.stage == "constructive":  # blind: bot's constructive, written meanwhile, is not shown
                assert shown == []
            else:
                assert ("constructive", "con") in shown and all(side in ("pro", "con") for _, side in shown)
            assert turn.brief.motion.id == state.motion_id and turn.brief.budget.amount > 0
            seen.update({(v.stage, v.side): v.text for v in turn.brief.visible})
            marker = f"ANN-{turn.stage.upper()}"
            write(ws, turn, marker)
            written.append((turn.stage, marker))
        match = ws.store.match(match_id)
        assert match is not None and match.status == "done" and match.forfeit is None
        assert [s.stage for s in match.speeches if s.side == "pro"] == [stage for stage, _ in written]
        assert all(s.text.startswith(marker) for s, (_, marker) in zip(
            [s for s in match.speeches if s.side == "pro"], written))
        assert [v.judge for v in match.verdicts] == ["j"]
        # Each replay of the match said again what was said before: what ann was shown is what was debated.
        assert seen and all(next(s.text for s in match.speeches if (s.stage, s.side) == key) == text
                            for key, text in seen.items())
    finally:
        ws.close()


def test_a_turn_past_its_deadline_forfeits_that_side(tmp_path):
    path = workspace(tmp_path)
    toml = path / "arena.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[people]\nturn_deadline_h = 0.0003\n", encoding="utf-8")
    ws = open_workspace(path)
    try:
        ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bot")])
        app.run(ws, concurrency=1, progress=lambda line: None)
        assert ws.store.match_states()[0].status == "awaiting"
        (turn,) = ws.store.turns_of("ann")
        while now() <= turn.deadline:  # about a second after the turn opened
            time.sleep(0.05)
        result = app.run(ws, concurrency=1, progress=lambda line: None)
        state = ws.store.match_states()[0]
        assert state.status == "done" and result.get("awaiting") is None
        assert state.forfeit is not None and state.forfeit.side == "pro"
        assert state.forfeit.reason.startswith("deadline:")
    finally:
        ws.close()


def test_a_real_model_is_not_asked_again_for_what_it_said_before_the_match_was_parked(tmp_path, fake_llm):
    """Each run replays the parked match from the start, and the opponent's earlier speeches come from the cache:
    each of its three speech requests reaches the provider once, however many times the match is continued."""
    from tests.support.helpers import debate_responder, mark_checked, stage_and_side

    fake_llm.responder = debate_responder()
    path = new_workspace(tmp_path / "ws", llm={"backoff_s": 0.01}, motions=["builtin:en"],
                         entries=[entry("ann", debater="human", model="human/ann", params=WEB),
                                  entry("beta", model="openai/beta-model", api_base=fake_llm.api_base)],
                         judges=[judge("j1", model="openai/judge-model", api_base=fake_llm.api_base, runs=1)])
    mark_checked(path)
    ws = open_workspace(path)
    try:
        ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "beta")])
        runs = 0
        while runs < 10 and ws.store.match_states()[0].status != "done":
            app.run(ws, concurrency=1, progress=lambda line: None)
            runs += 1
            for turn in [t for t in ws.store.turns_of("ann") if not t.submitted]:
                write(ws, turn, f"ANN-{turn.stage.upper()}")
        asked = [stage_and_side(r.body) for r in fake_llm.requests if not r.body.get("response_format")]
        assert runs == 4 and ws.store.match_states()[0].status == "done"
        assert sorted(asked) == [("constructive", "con"), ("rebuttal", "con"), ("summary", "con")]
    finally:
        ws.close()


def test_web_debaters_need_the_cache_a_parked_match_is_replayed_from(tmp_path):
    from tests.support.helpers import invoke

    path = new_workspace(tmp_path / "ws", llm={"cache": False},
                         entries=[entry("ann", debater="human", model="human/ann", params=WEB), entry("bot")])
    result = invoke("entry", "list", "-w", path)
    assert result.exit_code == 2 and "[llm] cache = false" in result.stderr and "'ann'" in result.stderr
    assert "Traceback" not in result.output


def test_a_run_that_waits_continues_each_match_as_soon_as_its_speech_is_in(tmp_path):
    """`arena run --wait SECONDS` (a process of its own, as a person's speech comes from another: `arena serve`)
    looks for speeches while matches await them, and ends once none does."""
    import subprocess
    import sys

    from arena.store import DB_NAME, Store

    path = workspace(tmp_path)
    ws = open_workspace(path)
    ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bot")])
    ws.close()
    run = subprocess.Popen([sys.executable, "-m", "arena", "run", "--wait", "0.2", "-w", str(path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written, deadline = [], time.monotonic() + 90
    try:
        while run.poll() is None and time.monotonic() < deadline:
            store = Store(path / DB_NAME)
            try:
                for turn in [t for t in store.turns_of("ann") if not t.submitted]:
                    size = int(turn.brief.budget.amount * 0.8)
                    store.submit_speech(turn.match_id, turn.stage, turn.side, speech_text(turn.stage, size=size))
                    written.append(turn.stage)
            finally:
                store.close()
            time.sleep(0.1)
        out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert written == ["constructive", "rebuttal", "summary"] and "1 done, 0 failed, of 1" in out
    ws = open_workspace(path)
    try:
        assert ws.store.match_states()[0].status == "done"
    finally:
        ws.close()


def test_match_play_of_a_web_debater_parks_the_match_and_says_so(tmp_path):
    from tests.support.helpers import invoke

    path = workspace(tmp_path)
    ws = open_workspace(path)
    motion = ws.store.motion_ids()[0]
    ws.close()
    result = invoke("match", "play", "--motion", motion, "--pro", "ann", "--con", "bot", "-w", path)
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "m00001 is parked: ann has still to write the PRO constructive speech" in result.stderr
    assert "[awaiting]" in result.stdout and "Awaiting ann's PRO constructive speech" in result.stdout


def test_two_runs_never_continue_one_match_twice(tmp_path):
    """Once the person has spoken, the parked match is claimable again, by one claimer only (two stores, as two
    `arena run`s have, whose claims are write transactions taken one after the other), and not before."""
    from arena.match.claims import Holder
    from arena.store import DB_NAME, Store

    path = workspace(tmp_path)
    ws = open_workspace(path)
    try:
        (match_id,) = ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bot")])
        app.run(ws, concurrency=1, progress=lambda line: None)
        (turn,) = ws.store.turns_of("ann")
        first, second = Store(path / DB_NAME), Store(path / DB_NAME)
        try:
            assert first.claim_match(Holder.here()) is None and first.pending_matches() == []  # not yet spoken
            write(ws, turn, "ANN")
            assert first.pending_matches() == [match_id]
            claimed = [first.claim_match(Holder.here()), second.claim_match(Holder.here())]
            assert claimed == [match_id, None]
        finally:
            first.close()
            second.close()
    finally:
        ws.close()


def test_a_lapsed_turn_is_forfeited_while_the_other_persons_turn_of_the_match_is_still_open(tmp_path):
    """ann and bo write the blind constructives of one match on the web; ann's turn lapses while bo's has hours
    left. The next run forfeits ann's side at once (it waited for bo before), and `arena debaters status` and both
    people's pages say the same of each turn before the run and after it."""
    import json
    import re

    from starlette.testclient import TestClient

    from arena.app.people.web import create_app, turn_id
    from arena.domain.ballots import new_token, token_hash
    from tests.support.helpers import invoke
    from tests.support.serving import csrf

    path = new_workspace(tmp_path / "ws", entries=[entry("ann", debater="human", model="human/ann", params=WEB),
                                                   entry("bo", debater="human", model="human/bo", params=WEB)],
                         judges=[judge("j", runs=1)])
    toml = path / "arena.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[people]\nturn_deadline_h = 0.0003\n", encoding="utf-8")
    ws = open_workspace(path)
    try:
        (match_id,) = ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bo")])
        app.run(ws, concurrency=1, progress=lambda line: None)
        assert ws.store.match_states()[0].status == "awaiting"
        assert invoke("debaters", "extend", "--entry", "bo", "--hours", "1", "-w", path).exit_code == 0
        (anns,), (bos,) = ws.store.turns_of("ann"), ws.store.turns_of("bo")
        assert (anns.side, bos.side, anns.stage, bos.stage) == ("pro", "con", "constructive", "constructive")
        while now() <= anns.deadline:  # about a second after the turn opened
            time.sleep(0.05)
        tokens = {who: new_token() for who in ("ann", "bo")}
        for who, token in tokens.items():
            ws.store.issue_debater_link(who, token_hash(token))
        key = ws.store.ballot_secret()
    finally:
        ws.close()

    def status() -> dict[str, tuple[int, int, list[bool]]]:
        result = invoke("debaters", "status", "--format", "json", "-w", path)
        assert result.exit_code == 0, result.output
        return {r["entry"]: (r["pending"], r["missed"], [t["lapsed"] for t in r["open"]])
                for r in json.loads(result.stdout)}

    def listed(client: TestClient, who: str) -> dict[str, list[str]]:
        page = client.get(f"/d/{tokens[who]}").text
        return {section: re.findall(r'href="[^"]*/([0-9a-f]{24})"', found.group(1)) if (found := re.search(
            rf'<ol class="queue" id="{section}">(.*?)</ol>', page, re.S)) else [] for section in ("open", "missed")}

    ids = {"ann": turn_id(key, "ann", anns), "bo": turn_id(key, "bo", bos)}
    with TestClient(create_app(path)) as client:
        # Before the run: ann's turn lapsed (status) is past its deadline on her page; bo's is open on both.
        assert status() == {"ann": (1, 0, [True]), "bo": (1, 0, [False])}
        assert listed(client, "ann") == {"open": [], "missed": [ids["ann"]]}
        assert listed(client, "bo") == {"open": [ids["bo"]], "missed": []}
        form = csrf(client.get(f"/d/{tokens['bo']}/{ids['bo']}").text)

        ws = open_workspace(path)
        try:
            result = app.run(ws, concurrency=1, progress=lambda line: None)
            match = ws.store.match(match_id)
        finally:
            ws.close()
        assert result.get("awaiting") is None and match is not None and match.status == "done"
        assert match.forfeit is not None and match.forfeit.side == "pro"
        assert match.forfeit.reason.startswith("deadline: ann wrote no PRO")

        # After it: both turns missed, in status and on both pages; bo's speech is no longer taken.
        assert status() == {"ann": (0, 1, []), "bo": (0, 1, [])}
        assert listed(client, "ann") == {"open": [], "missed": [ids["ann"]]}
        assert listed(client, "bo") == {"open": [], "missed": [ids["bo"]]}
        page = client.get(f"/d/{tokens['bo']}/{ids['bo']}")
        assert "<textarea" not in page.text and 'id="deadline-passed"' in page.text
        late = client.post(f"/d/{tokens['bo']}/{ids['bo']}",
                           data={"csrf": form, "speech": speech_text("BO", size=300), "action": "submit"})
        assert late.status_code == 410 and "the debate went on without it" in late.text
    ws = open_workspace(path)
    try:
        assert ws.store.human_turn(match_id, "constructive", "con").speech is None
    finally:
        ws.close()
