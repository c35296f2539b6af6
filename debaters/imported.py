"""The `imported` debater: an entry an importer registered (`arena import`), whose debates were held elsewhere.

Its matches come whole from the source; it never plays here (schedules leave it out), so `speak` exists
only to say so, should a plug-in runner call it.
"""
from __future__ import annotations

from arena.base.errors import ArenaError
from arena.match.protocol import DebateContext, Draft
from arena.domain.records import Entry
from debaters.params import Param, resolve


class ImportedDebater:
    uses_model = False  # `arena check` and the run's probe leave it alone
    PARAMS = {
        "display": Param("", (str,), "the name the source shows for it (e.g. 'Claude Sonnet 4.6 (no reasoning)')"),
        "source": Param("", (str,), "where its debates were imported from (e.g. 'lechmazur/debate')"),
        "debater": Param("", (str,), "the debater kind it was where it debated (an arena export's entries)"),
    }

    def __init__(self, entry: Entry):
        self.entry = entry
        self.params = resolve(entry, self.PARAMS)

    async def speak(self, ctx: DebateContext) -> Draft:
        raise ArenaError(f"entry {self.entry.name!r} was imported from {self.params['source'] or 'elsewhere'} "
                         "('arena import'): it has debates, but cannot play new ones")
