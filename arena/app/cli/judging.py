"""`arena judge` (judging completed matches), `arena judge list | add | remove` (the judges of arena.toml),
`arena judge-bench` (a judge against human labels) and `arena judge-attacks` (a judge against debaters who write to
it)."""
from __future__ import annotations

from pathlib import Path

import click

from arena.app.cli.common import (CONCURRENCY, FiniteFloat, echo, echo_json, fixed, format_option, key_values, open_ws,
                                  table, workspace_option)
from arena.base.errors import ArenaError, UserError, plural


# A group that also runs by itself: `arena judge` judges, `arena judge add|remove` edit the registry.
@click.group("judge", invoke_without_command=True, subcommand_metavar="[list|add|remove ...]")
@click.option("--judge", "judges", multiple=True, help="A judge to run; repeat for more (default: all configured).")
@click.option("--rejudge", is_flag=True, help="Replace these judges' verdicts (all runs) of every completed match; "
              "where a run fails, the stored verdicts stay (a failure never replaces a verdict).")
@click.option("--concurrency", type=CONCURRENCY, default=None,
              help="Matches judged at once, each model sent up to [llm] max_concurrency calls at once.  [default: 4 "
              "matches, each model sent at most the calls its server serves at once, as 'arena check' measured]")
@workspace_option
@click.pass_context
def judge(ctx: click.Context, judges: tuple[str, ...], rejudge: bool, concurrency: int | None, workspace: Path) -> None:
    """Judge completed matches that lack the judges' verdicts or have a failed run of theirs; or list, register
    (add) and remove judges."""
    from arena.app import commands as app

    if ctx.invoked_subcommand is not None:
        given = [p.opts[-1] for p in ctx.command.params
                 if ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
        if given:  # e.g. `arena judge -w DIR add ...` would edit another workspace than meant
            raise UserError(f"{given[0]} is an option of 'arena judge' itself; 'arena judge "
                            f"{ctx.invoked_subcommand}' takes its own options after its name")
        return
    totals = app.judge(open_ws(workspace), judges, rejudge=rejudge, concurrency=concurrency,
                       progress=lambda line: echo(line, err=True))
    for t in totals:
        echo(f"judged {plural(t['matches'], 'match')} with {t['judge']}: {plural(t['verdicts'], 'verdict')}, "
             f"{plural(t['failed_runs'], 'failed run')}"
             + (f", {plural(t['kept'], 'stored verdict')} kept in their place" if t["kept"] else "")
             + (f" ({t['elsewhere']} judged by another process)" if t["elsewhere"] else ""))
    failed, kept = sum(t["failed_runs"] for t in totals), sum(t["kept"] for t in totals)
    if failed:
        raise ArenaError(f"{plural(failed, 'judge run')} failed (see the lines above, and 'arena match show ID'); "
                         + (f"{plural(kept, 'stored verdict')} stayed in their place, since a failure never "
                            "replaces a verdict; " if kept else "")
                         + "run 'arena judge' again to retry them" + (" (with --rejudge, those kept)" if kept else ""))


def _people(ctx: click.Context, option: click.Parameter, value: str | None) -> list[str] | None:
    """--people a,b,c as names, in order; the config's checks of each name apply after."""
    return None if value is None else [p.strip() for p in value.split(",")]


@judge.command("list")
@workspace_option
@format_option
def judge_list(workspace: Path, fmt: str) -> None:
    """List the judges of arena.toml: kind, model, runs a match, the done matches each has judged, and those still
    to judge ('arena judge' judges them)."""
    from arena.app import commands as app

    rows = app.judge_list(open_ws(workspace))
    if fmt == "json":
        echo_json(rows)
        return
    if not rows:
        echo("no judges: add one with 'arena judge add NAME --kind single --model offline/judge' (or a real model)")
        return
    table([{**r, "model": f"people: {', '.join(r['people'])}" if r["people"] else
            f"pool: {', '.join(r['models'])}" if len(r["models"]) > 1 else r["model"],
            "to judge": "-" if r["to_judge"] is None else r["to_judge"]} for r in rows],
          ["name", "kind", "model", "runs", "family", "judged", "to judge"])
    waiting = [f"{r['to_judge']} by {r['name']!r}" for r in rows if r["to_judge"]]
    if waiting:
        echo(f"done matches still to judge: {', '.join(waiting)}; 'arena judge' judges them", err=True)


@judge.command("add")
@click.argument("name")
@click.option("--kind", required=True, help="The judge kind (single, debatrix, panel, ... or a plug-in); "
              "'arena kinds' lists them with their options.")
@click.option("--model", default=None, help="PROVIDER/MODEL, e.g. openai/gpt-4o-mini; offline/NAME is the "
              "simulator. Judges of people need none (an offline one simulates their ballots).")
@click.option("--api-base", default=None, help="http(s) URL of the model's server, e.g. a local one.")
@click.option("--runs", type=int, default=None, help="R, runs per match (default: [arena] judge_runs); a judge of "
              "people's R is its number of people.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", callback=key_values,
              help="An option of the judge kind; VALUE is read as TOML (0.5, 200, true), else as text. Repeatable.")
@click.option("--people", default=None, metavar="A,B,C", callback=_people,
              help="Judges of people (--kind human): the people who vote, by name, comma-separated.")
@click.option("--family", default=None, help="Who made the judge's model (default: derived from --model).")
@workspace_option
def judge_add(name: str, kind: str, model: str | None, api_base: str | None, runs: int | None,
              options: dict[str, object], people: list[str] | None, family: str | None, workspace: Path) -> None:
    """Register a judge: append a [[judges]] table to arena.toml, keeping the rest of the file as is."""
    from arena.app import commands as app
    from arena.domain.records import JURY

    ws = open_ws(workspace)
    j = app.judge_add(ws, name, kind=kind, model=model, api_base=api_base, runs=runs, options=options, people=people,
                      family=family)
    on = (f"people {', '.join(j.people)}" if j.casts_ballots else
          f"{plural(j.runs, 'model')} a match drawn from a pool of {len(j.models)}" if j.kind == JURY else
          f"on {j.model}, {plural(j.runs, 'run')} a match")
    echo(f"added judge {j.name!r} ({j.kind}, {on}) to {ws.config.path}")


@judge.command("remove")
@click.argument("name")
@workspace_option
def judge_remove(name: str, workspace: Path) -> None:
    """Remove a judge with no verdicts or ballot links: its [[judges]] table leaves arena.toml, the rest as is."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    app.judge_remove(ws, name)
    echo(f"removed judge {name!r} from {ws.config.path}")


@click.command("judge-bench")
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
@click.option("--judge", "judge_name", required=True, help="The configured judge to benchmark.")
@click.option("--concurrency", type=CONCURRENCY, default=4, show_default=True, help="Debates judged at once.")
@format_option
@workspace_option
def judge_bench(dataset: Path, judge_name: str, concurrency: int, fmt: str, workspace: Path) -> None:
    """Score a judge against human labels: DATASET is a JSONL file, a folder, or PanelBench's DebateArt folder
    (see docs/guides/judges.md and docs/reference/formats.md)."""
    from arena.app import commands as app

    result = app.judge_bench(open_ws(workspace), dataset, judge_name, concurrency=concurrency,
                             progress=lambda line: echo(line, err=True))
    if fmt == "json":
        echo_json(result)
        return
    echo(f"judge {result['judge']!r} on {result['dataset']}: {plural(result['items'], 'debate')}, {result['judged']} "
         f"judged, {result['failed']} failed{' — SIMULATED' if result['simulated'] else ''}")
    echo(f"accuracy {fixed(result['accuracy'], 3)}  kappa {fixed(result['kappa'], 3)}\n")
    # Rows: the human label; columns: the judge's outcome.
    table([{"human/judge": label, **counts} for label, counts in result["confusion"].items()],
           ["human/judge", "pro", "con", "tie"])
    if "dimensions" in result:
        echo()
        table([{"dimension": name, "judged as": d["judge_dimension"] or "(not judged)", "items": d["items"],
                 "judged": d["judged"], "failed": d["failed"], "accuracy": fixed(d["accuracy"], 3),
                 "kappa": fixed(d["kappa"], 3)} for name, d in result["dimensions"].items()],
               ["dimension", "judged as", "items", "judged", "failed", "accuracy", "kappa"])


def _attacks(ctx: click.Context, option: click.Parameter, value: str | None) -> list[str] | None:
    """--attacks a,b as names, in order; judge_attacks checks each."""
    return None if value is None else [a.strip() for a in value.split(",") if a.strip()]


@click.command("judge-attacks")
@click.option("--judge", "judge_name", required=True, help="The configured judge to attack (one the arena runs).")
@click.option("--attacks", default=None, metavar="A,B", callback=_attacks,
              help="Attacks to run, comma-separated: padding, injection, citations, assertive, swap, null.  "
                   "[default: all]")
@click.option("--matches", type=click.IntRange(min=1), default=None, metavar="N",
              help="Attack N done matches, a sample seeded by [arena] seed.  [default: every done match]")
@click.option("--budget", type=FiniteFloat(min=0), default=None, metavar="USD",
              help="Begin no judging once this run's calls cost this much (the ledger's prices).")
@click.option("--concurrency", type=CONCURRENCY, default=4, show_default=True, help="Judgings at once.")
@click.option("--dry-run", is_flag=True, help="Say what the run would judge and cost (judged on the offline "
              "simulator, nothing sent or written), and stop.")
@format_option
@workspace_option
def judge_attacks(judge_name: str, attacks: list[str] | None, matches: int | None, budget: float | None,
                  concurrency: int, dry_run: bool, fmt: str, workspace: Path) -> None:
    """How far what a debater writes moves a judge: re-judge done matches with the debate altered against the side
    the judge's clean verdict found losing, and count the verdicts that went to that side (see
    docs/guides/judges.md, "How robust is my judge?")."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    if dry_run:
        plan = app.judge_attacks_plan(ws, judge_name, attacks=attacks, matches=matches)
        if fmt == "json":
            echo_json(plan)
            return
        cost = "unknown (a price is not listed)" if plan["cost"] is None else f"${plan['cost']:.4f}"
        echo(f"judge-attacks on {plan['judge']!r}: {plural(plan['matches'], 'match')} × "
             f"{plural(len(plan['attacks']), 'attack')} ({', '.join(plan['attacks'])})"
             + (f", {plan['clean']} clean judgings first" if plan["clean"] else "")
             + f": {plural(plan['judgings'], 'judging')} at most, about {plural(plan['calls'], 'call')}, "
               f"{plan['prompt_tokens'] + plan['completion_tokens']:,} tokens, cost {cost} "
               f"(projected from {plural(plan['sampled'], 'match')} judged on the simulator)")
        return
    rows = app.judge_attacks(ws, judge_name, attacks=attacks, matches=matches, concurrency=concurrency, budget=budget,
                             progress=lambda line: echo(line, err=True))
    if fmt == "json":
        echo_json(rows)
        return
    if rows and rows[0]["simulated"]:
        echo(f"judge {judge_name!r} is the offline simulator: these figures are SIMULATED")
    table([{"attack": r["attack"], "trials": r["trials"], "flips": r["flips"], "flip rate": fixed(r["flip_rate"], 2),
            "95% interval": "-" if r["ci_low"] is None else f"{r['ci_low']:.2f}–{r['ci_high']:.2f}",
            "caught": r["caught"], "calls": r["calls"], "cost": "unknown" if r["cost"] is None else f"${r['cost']:.4f}"}
           for r in rows], ["attack", "trials", "flips", "flip rate", "95% interval", "caught", "calls", "cost"])
