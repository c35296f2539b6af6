"""A person's speech stored from Python (Store.submit_speech, as `arena serve` stores it through Store.take_speech)
goes by the same rule as the web form: longer than 1.5 × its turn's budget (arena.match.turns.too_long), in the
budget's units, it is refused naming its length, and nothing is stored."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from arena.app.commands import open_workspace
from arena.base.errors import UserError
from arena.domain.formats import AGENT4DEBATE
from arena.domain.speechchecks import length
from arena.match.turns import brief
from tests.support.helpers import entry, new_workspace, speech_text


@pytest.mark.parametrize("motion, language, words", [("en-fact-001", "en", 600), ("zh-fact-001", "zh", 600)])
def test_a_speech_longer_than_its_turn_takes_is_refused_from_python_naming_its_length(tmp_path, motion, language,
                                                                                     words):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en", "builtin:zh"],
                         entries=[entry("ann", debater="human", model="human/ann", params={"via": "web"}),
                                  entry("bot")])
    ws = open_workspace(path)
    try:
        (match_id,) = ws.store.add_tournament("single", 0, {}, [(motion, "ann", "bot")])
        amount, unit = AGENT4DEBATE.turn("constructive", "pro").budget(language)
        deadline = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="microseconds")
        shown = brief(ws.store.motion(motion), AGENT4DEBATE, "constructive", "pro", (), language, (amount, unit))
        ws.store.open_turn(match_id, "constructive", "pro", "ann", shown, deadline)
        long = speech_text("ANN", language, size=words * 4)  # about 2,400 words (7,200 characters in zh)
        count, counted = length(long, language)
        assert counted == unit and count > 1.5 * amount
        with pytest.raises(UserError) as refused:
            ws.store.submit_speech(match_id, "constructive", "pro", long)
        assert f"speech: {count} {unit}, over the {int(1.5 * amount)} this turn takes" in str(refused.value)
        assert match_id in str(refused.value)
        turn = ws.store.human_turn(match_id, "constructive", "pro")
        assert turn is not None and turn.speech is None and turn.draft == ""
        # Up to the margin, it is taken; a draft of any length is kept, so that nothing typed is lost.
        assert ws.store.save_draft(match_id, "constructive", "pro", long)
        assert ws.store.human_turn(match_id, "constructive", "pro").draft == long
        fits = speech_text("ANN", language, size=amount if unit == "words" else amount // 3)
        assert length(fits, language)[0] <= 1.5 * amount
        assert ws.store.submit_speech(match_id, "constructive", "pro", fits)
    finally:
        ws.close()
