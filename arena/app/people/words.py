"""Every message the web app's code shows, in the workspace's language ([arena] language), from the site's
catalogue (leaderboard.site.labels): each one here, in arena.app.people.forms and in the templates is translated
there."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from arena.domain.ballots import BallotError
from arena.domain.records import DIMENSIONS
from arena.app.people.forms import BODY_MAX
from judges.debatrix import DIMENSIONS as DEFINITIONS
from judges.debatrix import TRANSLATIONS
from leaderboard.site import labels as catalogue

# t(message, **values): the message in the page's language, escaped (markup), its values escaped and filled in.
Translate = Callable[..., str]
# word(value): a value that reads as a word (a side, a dimension) in the page's language; any other as it is.
Word = Callable[[str], str]


def refusals(t: Translate) -> dict[int, tuple[str, str]]:
    """status → (title, what the page says) in t's language; a 404 says nothing about why."""
    return {
        400: (t("Bad request"), t("The request could not be read as a ballot.")),
        403: (t("Form expired"), t("This form is out of date or did not come from its page. Go back, reload the page "
                                   "and cast your ballot again.")),
        404: (t("Not found"), t("There is nothing here.")),
        405: (t("Not allowed"), t("This page cannot be used that way.")),
        408: (t("Too slow"), t("The form took too long to arrive, and nothing of it was stored. Go back and send it "
                               "again.")),
        410: (t("Ballots closed"), t("The organisers have closed these ballots: no more ballots are taken. Thank you.")),
        413: (t("Too long"), t("A ballot is at most {size} KB; shorten the rationale and try again.",
                               size=BODY_MAX // 1000)),
    }


def speech_refusals(t: Translate) -> dict[int, tuple[str, str]]:
    """What a refusal on a debater's page (/d/...) says where a ballot's would not fit; the others are the same."""
    return {
        400: (t("Bad request"), t("The request could not be read as a speech.")),
        403: (t("Form expired"), t("This form is out of date or did not come from its page. Go back, copy what you "
                                   "wrote, reload the page, paste it in and send it again.")),
        408: (t("Too slow"), t("Your speech took too long to arrive, and nothing of it was stored. Go back, copy what "
                               "you wrote, reload the page, paste it in and send it again.")),
        409: (t("Already submitted"), t("A submitted speech cannot be changed.")),
        410: (t("Deadline passed"), t("The deadline of this speech has passed, or the debate went on without it: it is no longer taken.")),
        413: (t("Too long"), t("A speech is at most {size} KB; shorten it and try again.", size=BODY_MAX // 1000)),
    }


def reasons(t: Translate) -> dict[str, str]:
    """Why a speech is not taken, by the speech check it fails (arena.domain.speechchecks.CHECKS but too-short, which
    says it with the speech's numbers), in t's language."""
    return {
        "placeholder": t("It is a placeholder or filler where the speech should be: write the speech itself."),
        "template": t("It holds a blank to fill in (such as [Insert rebuttal here]) in place of the speech: "
                      "write the speech itself."),
        "injection": t("It speaks to the judge instead of debating (a verdict, chat markup or an instruction to the "
                       "judge): argue your case, and ask the judges for their vote in your own words."),
        "echo": t("Most of it is copied from what you were shown or from your own earlier speech, even where words "
                  "are changed: write it in your own words."),
        "pasted": t("It is the page you were shown, pasted in: write your own speech."),
        "repetition": t("Most of it repeats one sentence or phrase: say more than that."),
        "language": t("It is not in the debate's language: write it in that language."),
        "word-salad": t("It reads as words without sentences: write it in whole sentences."),
    }


def questions(language: str, t: Translate, word: Word) -> list[tuple[str, str, str]]:
    """(field, legend, hint) of each question of the ballot, in language: each dimension as the Debatrix judge's
    prompts define it in that language (English where they have no translation), so that people and models are
    asked the same questions."""
    translated = TRANSLATIONS.get(language.split("-")[0].lower(), {})
    asked = [("overall", t("Who won the debate?"), t("Your overall verdict."))]
    for d in DIMENSIONS:
        definition = translated.get(d, {}).get("definition") or DEFINITIONS[d]["definition"]
        end = "。" if re.search(r"[\u3000-\u9fff]$", definition) else "."
        asked.append((d, word(d).capitalize(), definition[0].upper() + definition[1:] + end))
    return asked


def outcome_labels(t: Translate) -> dict[str, str]:
    """The outcomes as the form offers them, in arena.domain.ballots.OUTCOMES order."""
    return {"pro": "PRO", "con": "CON", "tie": t("Tie")}


@dataclass(frozen=True)
class Words:
    """The web app's messages in one language: the templates' filters t and word, and what the pages say."""

    language: str
    t: Translate
    word: Word
    questions: list[tuple[str, str, str]]  # the ballot's
    labels: dict[str, str]  # the ballot's outcomes
    refusals: dict[int, tuple[str, str]]  # a refused request to a ballot's pages (/b/...), by status
    speech_refusals: dict[int, tuple[str, str]]  # one to a debater's pages (/d/...)
    reasons: dict[str, str]  # why a speech is not taken, by its check

    @classmethod
    def of(cls, language: str) -> Words:
        """The messages in language."""
        t, word = catalogue.translator(language), catalogue.words(language)
        said = refusals(t)
        return cls(language, t, word, questions(language, t, word), outcome_labels(t), said,
                   {**said, **speech_refusals(t)}, reasons(t))

    def site(self, debating: bool) -> str:
        """The pages' site name: a debater's (debating) or a judge's."""
        return self.t("Debate Arena debates") if debating else self.t("Debate Arena ballots")

    def too_short(self, amount: int, unit: str, least: int) -> str:
        """Why a speech amount units long (words or characters) is not taken where its turn takes least."""
        if unit == "characters":
            return self.t("It is {amount} characters long; this turn takes at least {least}.", amount=amount,
                          least=least)
        return self.t("It is {amount} words long; this turn takes at least {least}.", amount=amount, least=least)

    def too_long(self, amount: int, unit: str, most: int) -> str:
        """Why a speech amount units long (words or characters) is not taken where its turn takes at most most."""
        if unit == "characters":
            return self.t("It is {amount} characters long; this turn takes at most {most}.", amount=amount, most=most)
        return self.t("It is {amount} words long; this turn takes at most {most}.", amount=amount, most=most)

    def reason(self, check: str) -> str:
        """Why a speech failing check (but too-short and too-long) is not taken."""
        return self.reasons.get(check, self.t("It does not pass the arena's checks of a speech."))

    def problem(self, error: BallotError) -> str:
        """A ballot's problem (a BallotError's messages are in the catalogue as such)."""
        translate = self.t  # of the error's own message, never a literal: the catalogue's test reads literals
        return str(translate(error.message, **error.values))

    def crash_page(self) -> str:
        """The page of a request the app failed on."""
        return f'<!doctype html><html lang="{self.language}"><title>{self.t("Server error")}</title>' \
               f'<p>{self.t("Something went wrong; try again.")}</p>'
