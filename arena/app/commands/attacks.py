"""`arena judge-attacks`: how far what a debater writes can move a configured judge (arena.match.attacks).

A trial is a done match: the judge's clean verdict of it (its stored runs, or runs judged now when it has none
valid) names a losing side, the attacked side; the attack changes the debate against that side and the judge,
with its configured runs, judges the changed debate; the trial flipped when the outcome (the runs' majority) went
to the attacked side. Nothing is stored but the ledger, the LLM cache and the run's rows per attack (each judge's
last run, which `arena stats judges` and the site show). Each judging's calls carry the match_id
"attack:<run started>:<attack or clean>:<match>", so a run's calls and cost per attack are read off the ledger.
"""
from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from arena.analysis.bias import wilson
from arena.analysis.outcomes import match_outcome
from arena.app.commands.names import judge_specs
from arena.app.runner.check import require_keys
from arena.app.runner.dryrun import judge_stand_in
from arena.app.runner.engine import MatchRunner, judge_view, run_bounded, stop_on_sigterm, stored_match
from arena.app.setup.wiring import kinds_of
from arena.app.shapes.figures import AttackPlan, AttackRow
from arena.base import terminal
from arena.base.clock import now
from arena.base.errors import UserError, plural
from arena.domain.formats import Format
from arena.domain.records import AttackResult, JudgeSpec, Match, Outcome, Side, score
from arena.gateway.catalog import listed_price
from arena.gateway.llm import STANDING_IN
from arena.match.attacks import ATTACKS, Attack, caught, flipped
from arena.store import DB_NAME, Store
from arena.workspace.folder import Workspace
from debaters.params import length

SAMPLED = 3  # matches a dry run judges on the simulator, every attack on each; the rest are projected from them


@dataclass(frozen=True)
class _Trial:
    match: Match
    attack: Attack
    attacked: Side


@dataclass(frozen=True)
class _Outcome:
    """A trial judged: flipped, or None when a run failed (not counted); the attacked speeches refused."""

    flipped: bool | None
    caught: int


def attack_names(names: Sequence[str] | None) -> list[Attack]:
    """The attacks named (None: all, in their order); UserError naming --attacks for one that is not an attack."""
    if names is None:
        return list(ATTACKS.values())
    unknown = [n for n in names if n not in ATTACKS]
    if unknown or not names:
        raise UserError(f"--attacks: {', '.join(map(repr, unknown)) or 'no attack named'}: the attacks are "
                        f"{', '.join(ATTACKS)}")
    return [ATTACKS[n] for n in dict.fromkeys(names)]


def _judge(ws: Workspace, name: str) -> JudgeSpec:
    spec = ws.config.judge(name) if any(j.name == name for j in ws.config.judges) else None
    if spec is not None and spec.casts_ballots:
        raise UserError(f"--judge: {name!r} is a judge of people: judge-attacks re-judges altered debates many "
                        "times over, which the arena can ask of a model but not of people casting ballots")
    return judge_specs(ws, [name])[0]


def _sample(ws: Workspace, matches: int | None) -> list[Match]:
    """The done matches debated to the end, or a seeded sample of `matches` of them, in schedule order."""
    ids = ws.store.debated_match_ids()
    if not ids:
        raise UserError("no match is done and debated to the end (forfeits are not judged): play some first "
                        "('arena run')")
    if matches is not None and matches < len(ids):
        chosen = set(random.Random(ws.config.arena.seed).sample(ids, matches))
        ids = [i for i in ids if i in chosen]
    return [stored_match(ws.store, i) for i in ids]


def _stored_outcome(match: Match, judge: str) -> Outcome | None:
    """The judge's outcome of a match from its stored runs, None unless it has runs and none failed."""
    runs = [v for v in match.verdicts if v.judge == judge]
    return match_outcome(*score(runs)) if runs and not any(v.failed for v in runs) else None


def _asked(ws: Workspace, match: Match, fmt: Format) -> dict[tuple[str, str], int]:
    """The budget each speaker of match (played in fmt) was asked for, by (stage, side): its entry's words_<stage>
    (or chars_<stage>) where it has one, else the turn's; an entry no longer registered is taken at the turn's."""
    params = {e.name: e.params for e in ws.config.entries}
    return {(t.stage, t.side): length(params.get(match.pro if t.side == "pro" else match.con, {}), t,
                                      match.motion.language).amount for t in fmt.turns}


def _play(ws: Workspace, runner: MatchRunner, spec: JudgeSpec, matches: list[Match], attacks: list[Attack],
          tag: str, *, concurrency: int, budget: float | None,
          say: Callable[[str], None]) -> dict[tuple[str, str], _Outcome]:
    """Judge what lacks a clean outcome, then every (match, attack) whose clean outcome has a loser: each trial's
    outcome by (match, attack) (a trial not begun, the budget spent, is left out)."""
    store, formats, secret = runner.ws.store, ws.config.formats, ws.store.ballot_secret()
    share = ws.config.arena.min_speech_share
    start = store.spent()
    views = {m.id: judge_view(m, formats, secret) for m in matches}
    asked = {m.id: _asked(ws, m, views[m.id].format) for m in matches}

    def spent() -> bool:
        return budget is not None and store.spent() - start >= budget

    clean: dict[str, Outcome | None] = {m.id: _stored_outcome(m, spec.name) for m in matches}
    lacking = [m for m in matches if clean[m.id] is None]

    async def judge_clean(match: Match) -> Outcome | None:
        if spent():
            return None
        verdicts = await runner.judge(f"{tag}clean:{match.id}", views[match.id], spec, sitting=runner.sitting(match))
        return None if any(v.failed for v in verdicts) else match_outcome(*score(verdicts))

    def cleaned(finished: int, match: Match, outcome: Outcome | None) -> None:
        clean[match.id] = outcome
        say(f"[clean {finished}/{len(lacking)}] {match.id} {spec.name}: {outcome or 'failed or not judged'}")

    run_bounded(lacking, judge_clean, concurrency=concurrency, done=cleaned)
    trials = [_Trial(m, a, "con" if clean[m.id] == "pro" else "pro") for m in matches if clean[m.id] in ("pro", "con")
              for a in attacks]
    ties = sum(1 for m in matches if clean[m.id] == "tie")
    if ties:
        say(f"{plural(ties, 'match')} the judge found a tie: no side loses, so no trial there")

    async def attack(trial: _Trial) -> _Outcome | None:
        if spent():
            return None
        view = trial.attack.perturb(views[trial.match.id], trial.attacked)
        verdicts = await runner.judge(f"{tag}{trial.attack.name}:{trial.match.id}", view, spec,
                                      sitting=runner.sitting(trial.match))
        # With [arena] speech_checks off no check stands in front of the judge: nothing is caught.
        refused = (caught(trial.attack, trial.match, view, share, asked[trial.match.id])
                   if ws.config.arena.speech_checks else 0)
        if any(v.failed for v in verdicts):
            return _Outcome(None, refused)
        return _Outcome(flipped(trial.attack, trial.attacked, match_outcome(*score(verdicts))), refused)

    def attacked(finished: int, trial: _Trial, out: _Outcome | None) -> None:
        said = ("not begun: the budget is spent" if out is None else "a run failed" if out.flipped is None else
                f"flipped to {trial.attacked.upper()}" if out.flipped else f"not flipped to {trial.attacked.upper()}")
        say(f"[{finished}/{len(trials)}] {trial.match.id} {trial.attack.name}: {said}")

    outcomes = run_bounded(trials, attack, concurrency=concurrency, done=attacked)
    return {(t.match.id, t.attack.name): o for t, o in zip(trials, outcomes) if o is not None}


def judge_attacks(ws: Workspace, judge: str, *, attacks: Sequence[str] | None = None, matches: int | None = None,
                  concurrency: int = 4, budget: float | None = None,
                  progress: Callable[[str], None] | None = None) -> list[AttackRow]:
    """Attack a configured judge on up to `matches` done matches (None: all; else a sample seeded by [arena] seed):
    per attack, the trials, the flips to the attacked side and their 95% Wilson interval, the attacked speeches the
    speech checks would have refused (caught), and the calls and cost. budget (USD): no judging begins once this
    run's calls cost that much. The rows are stored as the judge's last attack run, in place of the one before."""
    spec = _judge(ws, judge)
    chosen = attack_names(attacks)
    sample = _sample(ws, matches)
    require_keys(ws, [spec.name])  # before any call: a missing key is named, nothing written
    ran_at = now()
    tag = f"attack:{ran_at}:"
    with stop_on_sigterm():
        outcomes = _play(ws, MatchRunner.of(ws, follow_slots=False), spec, sample, chosen, tag,
                         concurrency=concurrency, budget=budget, say=progress or terminal.say)
    calls = ws.store.tagged_calls(tag)
    results = []
    for attack in chosen:
        done = [o for (_, name), o in outcomes.items() if name == attack.name]
        counted = [o.flipped for o in done if o.flipped is not None]
        used = [c for match_id, c in calls.items() if match_id.startswith(f"{tag}{attack.name}:")]
        low, high = wilson(sum(counted), len(counted))
        costs = [cost for _, cost in used]
        results.append(AttackResult(spec.name, attack.name, len(counted), sum(counted), low, high,
                                    sum(o.caught for o in done), sum(n for n, _ in used),
                                    None if None in costs else sum(c for c in costs if c is not None),
                                    spec.simulated, ran_at, sum(1 for o in done if o.flipped and not o.caught)))
    ws.store.save_attack_results(spec.name, results)
    return [attack_row(r) for r in results]


def attack_row(result: AttackResult) -> AttackRow:
    """A stored attack result as judge-attacks' JSON gives it."""
    return {"judge": result.judge, "attack": result.attack, "trials": result.trials, "flips": result.flips,
            "flip_rate": result.flip_rate, "ci_low": result.ci_low, "ci_high": result.ci_high,
            "caught": result.caught, "flips_uncaught": result.flips_uncaught, "calls": result.calls,
            "cost": result.cost, "simulated": result.simulated}


def judge_attacks_plan(ws: Workspace, judge: str, *, attacks: Sequence[str] | None = None,
                       matches: int | None = None) -> AttackPlan:
    """What judge_attacks would judge and cost, sending nothing and writing nothing: SAMPLED of its matches are
    judged, every attack on each, by the offline simulator standing in for the judge's model (in a scratch
    workspace), and the rest projected from the mean of a judging; the tokens priced at the real model's listed
    prices (arena.gateway.catalog.listed_price: None when any is unknown). The simulator's answers are not a real
    model's lengths, so this is the shape of the bill rather than its amount, as `arena run --dry-run` says."""
    spec = _judge(ws, judge)
    chosen = attack_names(attacks)
    sample = _sample(ws, matches)
    clean = sum(1 for m in sample if _stored_outcome(m, spec.name) is None)
    judgings = clean + len(sample) * len(chosen)  # at most: a match whose clean outcome is a tie has no trials
    offline, standing = judge_stand_in(spec)
    simulated = replace(ws.config, judges=tuple(offline if j.name == spec.name else j for j in ws.config.judges),
                        llm=replace(ws.config.llm, cache=False))
    played = sample[:SAMPLED]
    with tempfile.TemporaryDirectory(prefix="arena-attack-plan-") as scratch:
        store = Store(Path(scratch) / DB_NAME)
        try:
            scratch_ws = Workspace(Path(scratch), simulated, store, ws.motions, *kinds_of(simulated))
            token = STANDING_IN.set(standing)
            try:
                _play(ws, MatchRunner.of(scratch_ws), offline, played, chosen, "attack:plan:", concurrency=8,
                      budget=None, say=lambda line: None)
            finally:
                STANDING_IN.reset(token)
            ledger = [c for c in store.ledger() if c.kind == "llm"]
        finally:
            store.close()
    # A judging's mean over those the sample made (each has a tag of its own), times the judgings to make.
    scale = judgings / max(1, len({c.match_id for c in ledger}))
    prompt = sum(c.prompt_tokens for c in ledger)
    completion = sum(c.completion_tokens for c in ledger)
    prices = [listed_price(standing.get(c.model, c.model), c.prompt_tokens, c.completion_tokens) for c in ledger]
    return {"judge": spec.name, "matches": len(sample), "attacks": [a.name for a in chosen], "clean": clean,
            "judgings": judgings, "sampled": len(played), "calls": round(len(ledger) * scale),
            "prompt_tokens": round(prompt * scale), "completion_tokens": round(completion * scale),
            "cost": None if None in prices else sum(p for p in prices if p is not None) * scale}
