"""The web app's words for a refused speech: every speech check has its own, in every language the pages speak."""
from __future__ import annotations

import pytest

from arena.app.people.words import Words
from arena.domain.speechchecks import CHECKS


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_speech_check_has_its_own_reason_on_the_writing_page(language):
    words = Words.of(language)
    fallback = words.reason("no-such-check")
    # too-short says it with the speech's numbers (Words.too_short), not a fixed reason.
    said = {check: str(words.reason(check)) for check in CHECKS if check != "too-short"}
    assert all(reason != str(fallback) for reason in said.values()), said
    assert len(set(said.values())) == len(said)  # one reason each, none shared
    if language == "zh":
        assert all(any("\u4e00" <= c <= "\u9fff" for c in reason) for reason in said.values()), said
