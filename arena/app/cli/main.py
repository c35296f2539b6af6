"""The `arena` command line's root: the group every command hangs from, which turns our errors into exit statuses,
and the registration of each command group's commands (one module a group, beside this one).

Each command parses, calls one function of the facade (arena.app.commands), and prints. Heavy imports (litellm,
pandas, the rating code) happen inside commands, so `arena --help` stays fast.
"""
from __future__ import annotations

import os
import sys

import click

# Each command from its module (not `from arena.app.cli import ...`, which would import this package, and so this
# module, round a circle).
from arena.app.cli.common import echo
from arena.app.cli.entries import entry
from arena.app.cli.judging import judge, judge_attacks, judge_bench
from arena.app.cli.matches import match
from arena.app.cli.motions import motion
from arena.app.cli.people import ballots, debaters
from arena.app.cli.plan import run, schedule
from arena.app.cli.publishing import export, publish, serve
from arena.app.cli.rating import rate
from arena.app.cli.stats import stats
from arena.app.cli.workspace import check, demo, import_, init, kinds
from arena.base.errors import ArenaError, UserError
from arena.gateway.redact import redact


class ArenaGroup(click.Group):
    """Maps our errors to exit codes: a user's mistake is 2, any other failure 1; never a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except UserError as exc:
            echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(2)
        except ArenaError as exc:  # a provider's message may echo the key it was sent
            echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:  # Ctrl-C outside a run's own handling (e.g. while opening): still no traceback
            echo("interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            from arena.base.files import no_space, no_space_message  # lazy: `arena --help` stays fast

            fits = sys.modules.get("leaderboard.bt")  # loaded by whatever fitted: no fit, no NotConverged
            if fits is not None and isinstance(exc, fits.NotConverged):  # a fit, not the input: exit 1
                echo(f"error: {exc}", err=True)
                sys.exit(1)
            if not no_space(exc):
                raise
            echo(f"error: {no_space_message(exc)}", err=True)  # a full disk: the path, and what to do
            sys.exit(1)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="debate-arena")
def main() -> None:
    """Debate Arena: LLM debaters, LLM judges, Bradley–Terry ratings, static leaderboards."""
    from arena.gateway.credentials import drop_empty_keys

    drop_empty_keys(os.environ)  # ANTHROPIC_API_KEY="" is named as not set, and no request is sent without it


# Every command, from the imports above; `arena --help` lists them by name whatever the order here.
for command in (init, demo, kinds, import_, check, entry, motion, match, schedule, run, judge, judge_bench,
                judge_attacks, rate, ballots, debaters, stats, publish, export, serve):
    main.add_command(command)
