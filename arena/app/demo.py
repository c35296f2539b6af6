"""`arena demo`'s workspace: six simulated entries, two simulated LLM judges and three simulated people
(arena.app.commands.demo plays it end to end)."""
from __future__ import annotations

from pathlib import Path

from arena.config import CONFIG_NAME, load_config
from arena.errors import UserError
from arena.workspace import init_workspace

CONFIG = '''\
# The `arena demo` workspace: six offline (simulated) entries of planted strengths, two of each debater
# kind, two simulated LLM judges of different kinds, and three simulated people casting ballots.
[arena]
language = "{language}"
seed = 0
judge_runs = 3

[search]
provider = "offline"

[motions]
sets = ["builtin:{language}"]
{entries}
[[judges]]
name = "sim-debatrix"
kind = "debatrix"
model = "offline/debatrix"
runs = 3

[[judges]]
name = "sim-panel"
kind = "panel"
model = "offline/panel"
runs = 1

[[judges]]
name = "sim-experts"
kind = "human"
model = "offline/people"  # an offline model: the simulator casts these people's ballots
[judges.options]
people = ["ann", "bo", "cy"]
'''
ENTRIES = {"sim-ace": ("agent4debate", 1.5), "sim-bold": ("search-baseline", 0.9), "sim-calm": ("direct", 0.3),
           "sim-deft": ("agent4debate", -0.3), "sim-eager": ("search-baseline", -0.9), "sim-faint": ("direct", -1.5)}
PEOPLE = "sim-experts"


def prepare(path: Path, language: str) -> None:
    """Create the demo workspace at path in language, or check that the one there is in that language (a demo
    resumes in the language it was started in)."""
    path = Path(path)
    if not (path / CONFIG_NAME).exists():
        entries = "".join(f'\n[[entries]]\nname = "{name}"\ndebater = "{kind}"\nmodel = "offline/{name}"\n'
                          f"strength = {strength}\n" for name, (kind, strength) in ENTRIES.items())
        init_workspace(path, CONFIG.format(entries=entries, language=language))
        return
    there = load_config(path).arena.language
    if there != language:
        raise UserError(f"{path}: a demo in language {there!r} is there already; give '--language {there}' "
                        f"to resume it, or another -w for one in {language!r}")
