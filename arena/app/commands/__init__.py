"""The command facade: one function per command, each returning data to print. The CLI is a thin shell
over these and calls nothing else of the app, and they are the Python API: open a workspace
(open_workspace, from arena.app.setup.wiring), then call what a command would.

The top of the app layer but for the CLI: it hands the kernel (arena.*) the kinds (debaters, judges), the
motion library and the rating code, through the modules below it (tests/test_layers.py keeps their order).
A module per command group (entries, motions, matches, plan, judging, attacks, results, rating, stats, people,
publishing, workspace; names: what their options name, checked); this package re-exports every command, so callers import
the facade alone: `from arena.app import commands`, `from arena.app.commands import open_workspace`.
"""
from __future__ import annotations

from arena.app.commands.attacks import judge_attacks, judge_attacks_plan
from arena.app.commands.entries import (entry_add, entry_key_warnings, entry_list, entry_remove, entry_retire,
                                        entry_show)
from arena.app.commands.judging import judge, judge_add, judge_bench, judge_list, judge_remove
from arena.app.commands.matches import match_get, match_list, match_messages, match_play, match_show, play_one
from arena.app.commands.motions import motion_import, motion_list, motion_show
from arena.app.commands.names import first_judge, judge_or_first
from arena.app.commands.people import (ballots_close, ballots_import, ballots_issue, ballots_status, debaters_extend,
                                       debaters_issue, debaters_status)
from arena.app.commands.plan import Scheduled, dry_run, run, run_until, schedule, schedule_show
from arena.app.runner.until import Criterion, parse_criterion  # --until's criterion, read and checked
from arena.app.commands.publishing import export, publish, serve
from arena.app.commands.rating import (FitOptions, FrameOptions, RateOptions, history_frame, history_results, rate,
                                       rate_frame, rate_history, rate_results, rating_control, rating_side)
from arena.app.commands.results import read_results, results_csv, results_frame
from arena.app.commands.stats import (_length_fit, ballot_people, stats_agents, stats_bias, stats_judges, stats_paper,
                                      stats_sides)
from arena.app.commands.workspace import check, check_notes, check_warnings, demo, import_debates, init_preset, kinds
from arena.app.runner.dryrun import EVERY as DRY_RUN_EVERY  # dry_run's default, for the CLI
from arena.app.runner.runs import summary as run_summary  # the CLI prints a run's summary
from arena.app.setup.wiring import init, kinds_of, open_workspace, reload  # the Python API's too

__all__ = [
    # workspaces
    "open_workspace", "init", "init_preset", "kinds_of", "reload", "kinds", "import_debates", "check", "check_notes",
    "check_warnings", "demo",
    # entries, motions, matches
    "entry_list", "entry_add", "entry_key_warnings", "entry_show", "entry_retire", "entry_remove",
    "motion_list", "motion_show", "motion_import",
    "match_list", "match_get", "match_show", "match_messages", "match_play", "play_one",
    # the plan and its runs
    "Scheduled", "schedule", "schedule_show", "run", "run_until", "Criterion", "parse_criterion", "run_summary",
    "dry_run", "DRY_RUN_EVERY",
    # judging
    "judge", "judge_list", "judge_add", "judge_remove", "judge_bench", "judge_attacks", "judge_attacks_plan", "first_judge", "judge_or_first",
    # rating
    "FitOptions", "RateOptions", "FrameOptions", "rate", "rate_results", "rate_frame", "rate_history",
    "history_results", "history_frame", "rating_side", "rating_control", "results_frame", "results_csv",
    "read_results",
    # statistics
    "stats_agents", "stats_judges", "stats_bias", "stats_sides", "stats_paper", "ballot_people",
    # people
    "ballots_issue", "ballots_status", "ballots_close", "ballots_import", "debaters_issue", "debaters_status",
    "debaters_extend",
    # publishing
    "publish", "export", "serve",
]
