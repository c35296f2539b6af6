"""Speech checks on real and simulated debates: how many speeches each check would flag, and how close the rest
came to each threshold, printed beside the threshold itself.

Sources, any of them in one run:
  --demo            a fresh `arena demo` (English and Chinese), its prompts included (agent messages);
  --workspace DIR   any workspace's done matches (e.g. the real local model's e2e workspace), prompts included;
  --lechmazur DIR   a checkout of lechmazur/debate (its transcripts/ folder): 1,547 debates between frontier models.
For each source: speeches, the count per check, each flagged speech (up to --show), and the margins of the speeches
that pass: the highest copied share (echo), the highest one-sentence share (repetition), the highest looped share,
the lowest English share of English speeches (language) and the lowest share of the turn's budget over the least
the turn asks (too-short; 1.0 is the threshold).

Run: .venv/bin/python benchmarks/speech_checks.py --demo --lechmazur /tmp/lech [--workspace DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.domain import speechchecks as sc  # noqa: E402
from arena.domain.formats import CHARACTER_LANGUAGES, get_format  # noqa: E402
from arena.domain.records import Match  # noqa: E402


def measured(matches, formats, prompts_of=lambda m: None, budgets_of=lambda m: None) -> None:
    started = time.perf_counter()
    counts: Counter = Counter()
    flagged = []
    margins = defaultdict(list)  # name -> [(value, where)]
    speeches = 0
    for match in matches:
        fmt = formats(match)
        prompts, budgets = prompts_of(match), budgets_of(match) or {}
        caught = set()
        for speech, problem in sc.match_problems(match, fmt, prompts=prompts, budgets=budgets):
            counts[problem.check] += 1
            flagged.append((match.id, speech.stage, speech.side, str(problem)))
            caught.add((speech.stage, speech.side))
        for k, speech in enumerate(match.speeches):
            speeches += 1
            if (speech.stage, speech.side) in caught:  # the margins are those of the speeches that pass
                continue
            where = f"{match.id} {speech.stage} {speech.side}"
            turn = fmt.turn(speech.stage, speech.side)
            blind = turn.blind
            shown = [s for s in match.speeches[:k] if not (blind and s.stage == speech.stage)]
            turn_prompts = (prompts or {}).get((speech.stage, speech.side), ())
            sources = [("the motion", match.motion.text)] + ([("the prompt", turn_prompts[0])] if turn_prompts else [])
            sources += [("other", s.text) for s in shown if s.side != speech.side]
            language = match.motion.language
            own = [("own", s.text) for s in shown if s.side == speech.side]
            copied, _ = sc.copied_share(speech.text, sources, own, language)
            again, _ = sc.copied_share(speech.text, own, (), language)
            share, count, _, loop, _ = sc.repeated_shares(speech.text, language)
            margins["echo: copied share"].append((copied, where))
            margins["echo (own): share of its own earlier speeches"].append((again, where))
            margins["repetition: one sentence's share (said 3+ times)"].append((share if count >= 3 else 0.0, where))
            margins["repetition: looped share"].append((loop, where))
            if language == "en":
                margins["language: English words' share (lowest)"].append((-sc.english_share(speech.text), where))
            amount, _ = sc.length(speech.text, language)
            least = sc.MIN_SHARE if turn.min_share is None else turn.min_share
            budget = budgets.get((speech.stage, speech.side)) or turn.budget(language)[0]
            margins["too-short: share of the budget / the turn's least (lowest)"].append(
                (-amount / budget / least, where))
    elapsed = time.perf_counter() - started
    print(f"  {speeches} speeches checked in {elapsed:.1f} s ({1e3 * elapsed / max(speeches, 1):.2f} ms a speech)")
    print(f"  flagged: {sum(counts.values())}" + (f" ({', '.join(f'{k} {v}' for k, v in counts.most_common())})"
                                                  if counts else ""))
    for row in flagged[:ARGS.show]:
        print("    " + " | ".join(row)[:300])
    thresholds = {"echo (own)": sc.ECHO_OWN_SHARE, "echo": sc.ECHO_SHARE, "repetition: one": sc.REPEAT_SHARE, "repetition: looped": sc.LOOP_SHARE,
                  "language": sc.ENGLISH_SHARE, "too-short": 1.0}
    print(f"  {'margin':60} {'closest':>8} {'threshold':>9}  where")
    for name, values in margins.items():
        value, where = max(values)
        limit = next(v for k, v in thresholds.items() if name.startswith(k))
        print(f"  {name:60} {abs(value):8.3f} {limit:9.3f}  {where}")


def workspace_matches(path: Path):
    from arena.app.setup.wiring import open_workspace
    from arena.domain.formats import shown
    ws = open_workspace(path)
    matches = [m for m in ws.store.matches() if m.status == "done" and m.speeches]

    def prompts_of(match: Match):
        out = defaultdict(list)
        for message in ws.store.agent_messages(match.id):
            if message.side is not None:
                out[(message.stage, message.side)].append(message.prompt)
        return out

    def budgets_of(match: Match):
        """The budgets each speaker was asked for: its entry's words_<stage> (chars_ in zh/ja), else the turn's."""
        unit = "chars" if match.motion.language in CHARACTER_LANGUAGES else "words"
        names = {"pro": match.pro, "con": match.con}
        return {(s.stage, s.side): ws.config.entry(names[s.side]).params.get(f"{unit}_{s.stage}")
                for s in match.speeches}
    return matches, (lambda m: shown(m.format, ws.config.formats)), prompts_of, budgets_of


def main() -> None:
    if ARGS.demo:
        from arena.app import commands
        for language in ("en", "zh"):
            folder = Path(tempfile.mkdtemp()) / f"demo-{language}"
            commands.demo(folder, language=language, progress=None)
            print(f"arena demo --language {language} ({folder})")
            measured(*workspace_matches(folder))
    for path in ARGS.workspace:
        print(f"workspace {path}")
        measured(*workspace_matches(Path(path)))
    if ARGS.lechmazur:
        from arena.opendata.lechmazur import read_transcript
        fmt = get_format("lechmazur")
        matches = []
        for p in sorted((Path(ARGS.lechmazur) / "transcripts").glob("*.md")):
            d = read_transcript(p.read_text(encoding="utf-8"), p.stem)
            matches.append(Match(d.id, d.motion, d.pro, d.con, speeches=d.speeches, format=fmt.name))
        print(f"lechmazur/debate at {ARGS.lechmazur}: {len(matches)} debates")
        measured(matches, lambda m: fmt)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", action="store_true")
    parser.add_argument("--workspace", action="append", default=[])
    parser.add_argument("--lechmazur")
    parser.add_argument("--show", type=int, default=10)
    ARGS = parser.parse_args()
    main()
