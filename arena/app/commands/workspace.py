"""`arena init --preset`, `arena kinds`, `arena import`, `arena check` and `arena demo`: a workspace made, what
it can name, what it takes in, whether its models answer, and the demo played end to end."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Literal

from arena.app.commands.attacks import judge_attacks
from arena.app.commands.plan import Scheduled, run, schedule
from arena.app.commands.publishing import publish
from arena.app.people import ballot_links as people
from arena.app.runner.check import check as check_models
from arena.app.runner.check import notes as check_figures
from arena.app.runner.check import repeating_judges
from arena.app.runner.engine import stop_on_sigterm
from arena.app.runner.juries import jury_warnings
from arena.app.setup import demo as demo_workspace
from arena.app.setup.importing import import_folder
from arena.app.setup.presets import PRESETS
from arena.app.setup.wiring import init, open_workspace
from arena.app.shapes import records as shapes
from arena.app.shapes.reports import CheckRow, ImportReport, RunResult
from arena.base import terminal
from arena.base.errors import UserError
from arena.workspace.folder import Workspace
from arena.opendata.registry import IMPORTERS
from debaters.registry import DEBATERS
from judges.registry import JUDGES

if TYPE_CHECKING:  # for annotations alone
    from arena.base.registry import Registry


def init_preset(path: Path, name: str) -> tuple[Path, Scheduled]:
    """`arena init --preset NAME`: the preset's arena.toml, then its schedule drawn into the new workspace, which
    remembers the preset (`arena stats paper` shows the published figures beside its own)."""
    if name not in PRESETS:
        raise UserError(f"--preset: unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})")
    preset = PRESETS[name]
    config_path = init(path, preset.config)
    ws = open_workspace(Path(path))
    try:
        ws.store.set_preset(name)
        return config_path, schedule(ws, **preset.schedule)
    finally:
        ws.close()


def kinds() -> list[shapes.Kind]:
    """Every debater, judge and importer kind, built-in or plug-in: [{family, kind, source, params: [{name,
    default, type, accepts, help}]}]: a debater's params go in [entries.params], a judge's in [judges.options],
    an importer's are `arena import` options."""
    from arena.match.judging import BaseJudge
    from arena.base.params import describe

    out: list[shapes.Kind] = []
    families: tuple[tuple[Literal["debater", "judge", "importer"], Registry], ...] = (
        ("debater", DEBATERS), ("judge", JUDGES), ("importer", IMPORTERS))
    for family, registry in families:
        for name in registry.names():
            cls = registry.get(name)
            # A plug-in that declares no table takes whatever it is given.
            judge = isinstance(cls, type) and issubclass(cls, BaseJudge)
            table = cls.accepted() if judge else getattr(cls, "OPTIONS" if family == "importer" else "PARAMS", {})
            params = describe(table)
            out.append({"family": family, "kind": name, "source": registry.source(name), "params": params})
    return out


def import_debates(ws: Workspace, kind: str, folder: Path, *, judge: str | None = None) -> ImportReport:
    """`arena import KIND DIR`: the debates an importer kind reads from folder, added to the workspace
    (arena.app.setup.importing.import_folder); judge names the imported judge, for importers that take that option."""
    return import_folder(ws, kind, folder, {} if judge is None else {"judge": judge})


def check(ws: Workspace, names: Iterable[str] = ()) -> list[CheckRow]:
    """Probe the models of the named entries and judges (default: all): [{name, model, ok, structured,
    context_window, latency_s, error, priced}] (arena.app.runner.check)."""
    return check_models(ws, names)


def check_notes(ws: Workspace, rows: Iterable[CheckRow]) -> list[str]:
    """What check's measured figures (rows, as check returned them) mean for a run, a line each, where the settings
    will hurt: too few slots for a run's matches at once, or a speech slower than [llm] timeout_s
    (arena.app.runner.check.notes)."""
    return check_figures(ws, rows)


def check_warnings(ws: Workspace, names: Iterable[str] = ()) -> list[str]:
    """What `arena check` warns of before its probes, for the named entries and judges (default: all): each judge
    whose R runs can only repeat one another (arena.app.runner.check.repeating_judges); a jury that cannot sit on
    some entries' matches, a declared family the family table contradicts, a guessed one a jury seats by
    (arena.app.runner.juries)."""
    return repeating_judges(ws, list(names) or None) + jury_warnings(ws, names)


@dataclass(frozen=True)
class Demo:
    """How `arena demo` ended: the published site's index, or None when it was interrupted before it could publish
    (Ctrl-C or SIGTERM: nothing is published then, and a rerun resumes); and its run's result (RunResult)."""

    site: Path | None
    run: RunResult


def demo(path: Path, *, language: str = "en", rounds: int = 2, progress: Callable[[str], None] | None = None) -> Demo:
    """`arena demo`: a simulated tournament end to end in language: init, schedule, play, judge, ballots, attacks on
    one judge (arena.app.setup.demo.ATTACKED; once), rate, publish. Resumes if rerun (in the language it was started
    in). Interrupted (Ctrl-C, or a SIGTERM, which stops it as Ctrl-C does) while playing, it publishes nothing: a site
    of some of the matches would pass for the demo's result; the matches not done are scheduled again for the rerun.
    Interrupted after, KeyboardInterrupt."""
    demo_workspace.prepare(Path(path), language)
    ws = open_workspace(path)
    try:
        with stop_on_sigterm():
            if not ws.store.count_matches():
                schedule(ws, "round-robin", rounds=rounds)
            played = run(ws, concurrency=4, progress=progress)
            if played["stopped"] is not None:
                return Demo(None, played)
            people.simulate(ws, demo_workspace.PEOPLE, seed=ws.config.arena.seed)
            if not ws.store.attack_results(demo_workspace.ATTACKED):
                judge_attacks(ws, demo_workspace.ATTACKED, matches=demo_workspace.ATTACKED_MATCHES,
                              progress=lambda line: None)
                (progress or terminal.say)(f"attacked judge {demo_workspace.ATTACKED!r} on "
                                           f"{demo_workspace.ATTACKED_MATCHES} matches: 'arena stats judges' shows "
                                           "how far each attack moved it")
            return Demo(publish(ws, ws.path / "site", keep_others=False), played)
    finally:
        ws.close()
