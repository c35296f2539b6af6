"""`arena demo`: a simulated tournament end to end, in a workspace of its own."""
from __future__ import annotations

import shutil
from pathlib import Path

from arena.app import commands
from arena.config import CONFIG_NAME
from arena.workspace import init_workspace

CONFIG = '''\
# The `arena demo` workspace: six offline (simulated) entries of planted strengths and a simulated judge.
[arena]
language = "en"
seed = 0
judge_runs = 3

[search]
provider = "offline"

[motions]
sets = ["builtin:en"]
{entries}
[[judges]]
name = "sim-judge"
kind = "single"
model = "offline/judge"
runs = 3
'''
ENTRIES = {"sim-ace": 1.5, "sim-bold": 0.9, "sim-calm": 0.3, "sim-deft": -0.3, "sim-eager": -0.9, "sim-faint": -1.5}


def demo(path: Path, *, rounds: int = 2, progress=None) -> Path:
    """A simulated tournament end to end: init, schedule, play, judge, rate, publish. Resumes if rerun."""
    path = Path(path)
    if not (path / CONFIG_NAME).exists():
        entries = "".join(f'\n[[entries]]\nname = "{name}"\ndebater = "direct"\nmodel = "offline/{name}"\n'
                          f"strength = {strength}\n" for name, strength in ENTRIES.items())
        init_workspace(path, CONFIG.format(entries=entries))
    ws = commands.open_workspace(path)
    try:
        if not ws.store.match_rows():
            commands.schedule(ws, "round-robin", rounds=rounds)
        commands.run(ws, concurrency=4, progress=progress)
        site = ws.path / "site"
        if site.exists():
            shutil.rmtree(site)
        return commands.publish(ws, site)
    finally:
        ws.close()
