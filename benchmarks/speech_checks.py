"""Speech checks on real and simulated debates: how many speeches each check would flag, and how close the rest
came to each threshold, printed beside the threshold itself.

Sources, any of them in one run:
  --demo            a fresh `arena demo` (English and Chinese), its prompts included (agent messages);
  --workspace DIR   any workspace's done matches (e.g. the real local model's e2e workspace), prompts included;
  --lechmazur DIR   a checkout of lechmazur/debate (its transcripts/ folder): 1,547 debates between frontier models.
For each source: speeches, what the checks cost a speech (process CPU time of
arena.domain.speechchecks.match_problems over the source's matches, beside the 0.2 ms target), and the injection
check's own share of it, the count per check (every check, those that flag none too), each flagged speech (up to
--show), and the margins of the speeches that pass: the highest copied share (echo), the highest share of one of its
own earlier speeches (echo), the highest share of all it was shown (pasted; the first line counts only speeches
drawing on two or more shown texts whole, as the check does), the highest one-sentence share (repetition), the
highest looped share, the lowest English share of English speeches (language), the most words a sentence end and the
lowest function words' share (word-salad; zh scaled to the English thresholds), the lowest share of the turn's budget
over the least the turn asks (too-short; 1.0 is the threshold), and the phrases the injection check's rules match but
let through (arena.domain.steering: a mention, not an order; a directive not framed to the judge; "system:" inside a
line), with one of them.

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
from arena.domain import steering, wordsalad  # noqa: E402
from arena.domain.formats import CHARACTER_LANGUAGES, get_format  # noqa: E402
from arena.domain.records import Match  # noqa: E402
from arena.domain.speechtext import prepared  # noqa: E402


TARGET_MS = 0.2  # the checks' cost a speech, on average over lechmazur/debate's 15,470


def measured(matches, formats, prompts_of=lambda m: None, budgets_of=lambda m: None) -> None:
    """The checks of every speech (timed: process CPU time, as an import spends it), then the margins (untimed)."""
    matches = list(matches)
    asked = [(match, formats(match), prompts_of(match), budgets_of(match) or {}) for match in matches]
    started = time.process_time()
    found = [sc.match_problems(match, fmt, prompts=prompts, budgets=budgets) for match, fmt, prompts, budgets in asked]
    elapsed = time.process_time() - started
    counts: Counter = Counter()
    flagged = []
    margins = defaultdict(list)  # name -> [(value, where)]
    speeches, injection_cost, let_through = 0, 0.0, []
    for (match, fmt, prompts, budgets), problems in zip(asked, found):
        caught = set()
        for speech, problem in problems:
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
            language = match.motion.language
            sources = [("the motion", match.motion.text),
                       ("the turn's brief", f"{turn.title_in(language)}\n{turn.brief_in(language)}")]
            sources += [("the prompt", turn_prompts[0])] if turn_prompts else []
            sources += [("other", s.text) for s in shown if s.side != speech.side]
            own = [("own", s.text) for s in shown if s.side == speech.side]
            seen = sc._seen(speech.text, language, sources, own)  # the text prepared: injection reads it again
            started = time.process_time()
            steering.injection(speech.text, language)
            injection_cost += time.process_time() - started
            let_through += [(where, phrase) for phrase in injection_near(speech.text, language)]
            copied, _ = sc.copied_share(speech.text, sources, own, language)
            again = max((seen.run_share([mine]) for mine in seen.own), default=0.0)
            paste, names = sc.pasted_share(seen)
            share, count, _, loop, _ = sc.repeated_shares(speech.text, language)
            margins["echo: copied share"].append((copied, where))
            margins["echo (own): share of one of its own earlier speeches"].append((again, where))
            margins["pasted: share of all it was shown (2+ texts pasted)"].append(
                (paste if len(names) >= 2 else 0.0, where))
            margins["pasted: share of all it was shown (any)"].append((paste, where))
            margins["repetition: one sentence's share (said 3+ times)"].append((share if count >= 3 else 0.0, where))
            margins["repetition: looped share"].append((loop, where))
            if language == "en":
                margins["language: English words' share (lowest)"].append((-sc.english_share(speech.text), where))
            if language in ("en", "zh"):
                run, function = salad_margins(speech.text, language)
                margins["word-salad: words a sentence end (highest)"].append((run, where))
                margins["word-salad: function words' share (lowest)"].append((-function, where))
            amount, _ = sc.length(speech.text, language)
            least = sc.MIN_SHARE if turn.min_share is None else turn.min_share
            budget = budgets.get((speech.stage, speech.side)) or turn.budget(language)[0]
            margins["too-short: share of the budget / the turn's least (lowest)"].append(
                (-amount / budget / least, where))
    ms = 1e3 * elapsed / max(speeches, 1)
    print(f"  {speeches} speeches checked in {elapsed:.2f} s of CPU: {ms:.3f} ms a speech (target: at most "
          f"{TARGET_MS} ms)")
    print(f"  of which the injection check: {1e3 * injection_cost / max(speeches, 1):.3f} ms a speech")
    print(f"  flagged: {sum(counts.values())} of {speeches} ({100 * sum(counts.values()) / max(speeches, 1):.3f}%)"
          + (f" ({', '.join(f'{k} {v}' for k, v in counts.most_common())})" if counts else ""))
    print(f"  per check: {', '.join(f'{check} {counts[check]}' for check in sc.CHECKS)}")
    for row in flagged[:ARGS.show]:
        print("    " + " | ".join(row)[:300])
    thresholds = {"echo (own)": sc.ECHO_OWN_SHARE, "echo": sc.ECHO_SHARE, "pasted": sc.PASTE_SHARE,
                  "repetition: one": sc.REPEAT_SHARE, "repetition: looped": sc.LOOP_SHARE,
                  "language": sc.ENGLISH_SHARE, "word-salad: words": wordsalad.SALAD_RUN,
                  "word-salad: function": wordsalad.SALAD_FUNCTION, "too-short": 1.0}
    print(f"  {'margin':60} {'closest':>8} {'threshold':>9}  where")
    for name, values in margins.items():
        value, where = max(values)
        limit = next(v for k, v in thresholds.items() if name.startswith(k))
        print(f"  {name:60} {abs(value):8.3f} {limit:9.3f}  {where}")
    print(f"  injection: {len(let_through)} phrases of its rules found and let through, in "
          f"{len({w for w, _ in let_through})} speeches" + (": e.g. {} | {}".format(*let_through[0])[:300]
                                                              if let_through else ""))


def injection_near(text: str, language: str) -> list[str]:
    """The phrases the injection check's rules match in text that it lets through (a mention, not an order; a
    directive not framed to the judge; "system:" inside a line), each with some of the text around it."""
    lower = prepared(text, language in CHARACTER_LANGUAGES).text
    found = {}  # by where it starts: two rules matching one place are one phrase
    for rule in steering._RULES:
        for anchor in rule.anchors or rule.words:
            at = lower.find(anchor)
            while at >= 0:
                if (m := rule.pattern.match(lower, at)) is not None:
                    found.setdefault(at, " ".join(lower[max(0, at - 40):m.end() + 20].split()))
                at = lower.find(anchor, at + 1)
    return [found[at] for at in sorted(found)]


def salad_margins(text: str, language: str) -> tuple[float, float]:
    """(words a sentence end, function words' share) as the word-salad check reads them (zh: characters, and
    scaled to the English thresholds so that one column reads both)."""
    p = sc._read(text, language)
    words = sum(1 for t in p.tokens if wordsalad._CJK.match(t)) if language == "zh" else len(p.tokens)
    if words < wordsalad.SALAD_WORDS:
        return 0.0, 1.0
    ends = max(len(wordsalad._ENDS[language].findall(p.text.strip())), 1)
    function = (sum(map(wordsalad._FUNCTION_ZH.__contains__, p.tokens)) if language == "zh" else p.function) / words
    if language == "zh":
        return (words / ends * wordsalad.SALAD_RUN / wordsalad.SALAD_RUN_ZH,
                function * wordsalad.SALAD_FUNCTION / wordsalad.SALAD_FUNCTION_ZH)
    return words / ends, function


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
