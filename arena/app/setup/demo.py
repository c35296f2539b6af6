"""`arena demo`'s workspace: six simulated entries, two simulated LLM judges and three simulated people
(arena.app.commands.demo plays it end to end)."""
from __future__ import annotations

from pathlib import Path

from arena.workspace.config import CONFIG_NAME, load_config
from arena.base.errors import UserError
from arena.workspace.folder import init_workspace

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
# The judge the demo attacks (`arena judge-attacks`) on a sample of its matches, so its site shows a robustness table.
ATTACKED, ATTACKED_MATCHES = "sim-panel", 8
MARK = CONFIG.splitlines()[0]  # the first line of every arena.toml `arena demo` writes: what tells its workspaces


def prepare(path: Path, language: str) -> None:
    """Create the demo workspace at path in language, or check that the one there is a demo, in that language (a
    demo resumes in the language it was started in; a workspace of the user's own is never touched)."""
    path = Path(path)
    config = path / CONFIG_NAME
    if config.exists() and not config.read_bytes().startswith(MARK.encode()):
        beside = path.resolve().parent / f"{path.resolve().name}-demo"
        raise UserError(f"-w {path}: a workspace not made by 'arena demo' is there ({config}); the demo plays only "
                        f"in its own: give a new folder, e.g. 'arena demo -w {beside}'")
    if not config.exists():
        entries = "".join(f'\n[[entries]]\nname = "{name}"\ndebater = "{kind}"\nmodel = "offline/{name}"\n'
                          f"strength = {strength}\n" for name, (kind, strength) in ENTRIES.items())
        init_workspace(path, CONFIG.format(entries=entries, language=language))
        return
    there = load_config(path).arena.language
    if there != language:
        raise UserError(f"{path}: a demo in language {there!r} is there already; give '--language {there}' "
                        f"to resume it, or another -w for one in {language!r}")
