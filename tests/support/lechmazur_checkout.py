"""A small checkout in lechmazur/debate's layout, written from our own text: transcripts/, the per-matchup
reports under reports/debate_matchup_judgments/<template>/, and optionally the judge results JSONL.

The tests of `arena import lechmazur` build one with write_checkout; what it plants (who wins, margins, a tie
row, broken files) is in the arguments, so each test states what it expects from what it wrote.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

TEMPLATE = "judge_judge_test_20990101a__debate_placement_test_20990101a"  # the report folder
JSONL = "judgments/judge_results__judge_test_20990101a.jsonl"  # its judge template's results
TITLES = ("Opening", "Rebuttal 1", "Pressure Questions", "Rebuttal 2", "Closing")
STAGES = ("opening", "rebuttal_1", "pressure_questions", "rebuttal_2", "closing")
TOPICS = {
    "topic_01": "Cities should replace downtown parking minimums with congestion pricing.",
    "topic_02": "Open-source weather models are better public investments than proprietary forecasting contracts.",
    "topic_03": "Community gardens reduce neighbourhood food insecurity more than food-bank expansions do.",
}
DISPLAY = {"alpha-1": "Alpha One (deep thought)", "bravo-2": "Bravo Two", "charlie-3": "Charlie <b>Three</b>",
           "delta-4": "Delta Four (no reasoning)"}
PANEL = ("Panel Owl", "Panel <i>Heron</i>", "Panel Finch")


@dataclass(frozen=True)
class Row:
    """A judge row: the panelist, who won ("pro", "con", or anything else: named neither), its margin and score."""

    panelist: str
    winner: str
    margin: float = 1.5
    entertainment: float = 7.0
    note: str = "The winning side kept its main clash alive to the end."


@dataclass(frozen=True)
class Debate:
    topic: str
    pro: str
    con: str
    swap: int  # 0 or 1: which of the side-swapped pair (s0, s1)
    rows: tuple[Row, ...] = ()
    scores: dict = field(default_factory=dict)  # JSONL extra columns, e.g. {"argument_strength_pro": 8}

    @property
    def id(self) -> str:
        return f"{self.topic}__{self.pro}__{self.con}__s{self.swap}__tpl_placement_test_20990101a"


def speech(debate: Debate, k: int, side: str) -> str:
    """Turn k (0-4) of a side: two claims labelled as the source labels them, in our own words."""
    letter, model = ("P", debate.pro) if side == "pro" else ("C", debate.con)
    return (f"[{letter}{k + 1}.1] {model} speaks in the {TITLES[k].lower()} for {side.upper()} on {debate.topic}.\n"
            f"[{letter}{k + 1}.2] A second claim of turn {2 * k + (1 if side == 'pro' else 2)}, kept short.")


def transcript(debate: Debate, turns: int = 10) -> str:
    head = [f"# Debate {debate.id}", "", f"- topic_id: {debate.topic}", f"- proposition: {TOPICS[debate.topic]}",
            f"- model_pro: {debate.pro}", f"- model_con: {debate.con}", f"- side_swap: {bool(debate.swap)}", ""]
    body = []
    for n in range(turns):
        k, side = n // 2, ("pro", "con")[n % 2]
        text = speech(debate, k, side)
        model, letter = (debate.pro, "P") if side == "pro" else (debate.con, "C")
        body += [f"## Turn {n + 1}: {side.upper()} {TITLES[k]}", "", f"- model: {model}",
                 f"- raw_words: {len(text.split())}", f"- claim_ids: [{letter}{k + 1}.1]",
                 "- missing_claim_id_refs: (none)", "", text, ""]
    return "\n".join(head + body)


def _winner_name(debate: Debate, row: Row) -> str:
    return {"pro": DISPLAY[debate.pro], "con": DISPLAY[debate.con]}.get(row.winner, row.winner)


def report(a: Debate, b: Debate | None) -> str:
    """A matchup report of a side-swapped pair (b None: only one debate of the pair was reported)."""
    lines = ["# Debate Matchup Judgment Report", "", f"- template_id: `{TEMPLATE}`", f"- topic_id: `{a.topic}`",
             f"- matchup: **{DISPLAY[a.pro]}** vs **{DISPLAY[a.con]}**", "", f"**Motion:** {TOPICS[a.topic]}", ""]
    for label, debate in (("A", a), ("B", b)):
        if debate is None:
            continue
        lines += [f"## Debate {label}", "", f"- debate_id: `{debate.id}`",
                  f"- transcript: [read transcript](../../../transcripts/{debate.id}.md)",
                  f"- roles: PRO = **{DISPLAY[debate.pro]}**, CON = **{DISPLAY[debate.con]}**", "",
                  "| Judge | Winner | Signed Margin (PRO+) | Normalized | Entertainment |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for row in debate.rows:
            signed = row.margin if row.winner == "pro" else -row.margin if row.winner == "con" else 0.0
            lines.append(f"| {row.panelist} | {_winner_name(debate, row)} | {signed:+.1f} | {signed / 2:+.2f} | "
                         f"{row.entertainment:.1f} |")
        lines += ["", "### Judge Notes", ""]
        for row in debate.rows:
            lines += [f"- **{row.panelist}**: {row.note}",
                      f"  Most decisive rebuttal noted: {debate.con} in Rebuttal 2."]
        lines.append("")
    return "\n".join(lines)


def jsonl_rows(debate: Debate) -> list[dict]:
    out = []
    for row in debate.rows:
        signed = row.margin if row.winner == "pro" else -row.margin if row.winner == "con" else 0.0
        out.append({"debate_id": debate.id, "topic_id": debate.topic, "model_pro": debate.pro,
                    "model_con": debate.con, "judge_model": row.panelist, "winner_side": row.winner,
                    "signed_margin": signed, "normalized_signed_margin": signed / 2, "margin": abs(signed),
                    "entertainment_value": row.entertainment, "reasoning": f"(full) {row.note}",
                    "notable_rebuttals": f"{debate.con} in Rebuttal 2", "parse_ok": True, **debate.scores})
    return out


def write_checkout(path: Path, debates: list[Debate], *, jsonl: bool = False, extra_jsonl: list[str] = (),
                   reported_only: list[Debate] = (), short: list[Debate] = ()) -> Path:
    """The checkout of these debates at path: a transcript each, a report per side-swapped pair; with jsonl,
    the judge results JSONL too (extra_jsonl: raw lines appended to it). reported_only: debates whose reports
    exist but whose transcripts do not; short: transcripts with three turns, no reports."""
    (path / "transcripts").mkdir(parents=True)
    reports = path / "reports" / "debate_matchup_judgments" / TEMPLATE
    reports.mkdir(parents=True)
    for d in debates:
        (path / "transcripts" / f"{d.id}.md").write_text(transcript(d), encoding="utf-8")
    for d in short:
        (path / "transcripts" / f"{d.id}.md").write_text(transcript(d, turns=3), encoding="utf-8")
    pairs: dict[tuple, list[Debate]] = {}
    for d in [*debates, *reported_only]:
        if d.rows:
            pairs.setdefault((d.topic, *sorted((d.pro, d.con))), []).append(d)
    for (topic, m1, m2), pair in pairs.items():
        pair.sort(key=lambda d: d.swap)
        (reports / f"matchup-judgment-{topic}-{m1}-vs-{m2}.md").write_text(
            report(pair[0], pair[1] if len(pair) > 1 else None), encoding="utf-8")
    if jsonl:
        (path / "judgments").mkdir()
        lines = [json.dumps(r) for d in [*debates, *reported_only] for r in jsonl_rows(d)] + list(extra_jsonl)
        (path / JSONL).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def swapped(topic: str, a: str, b: str, rows_a: tuple[Row, ...], rows_b: tuple[Row, ...]) -> list[Debate]:
    """The side-swapped pair on a topic: a is PRO in s0, b is PRO in s1."""
    return [Debate(topic, a, b, 0, rows_a), Debate(topic, b, a, 1, rows_b)]


def rows(*winners: str) -> tuple[Row, ...]:
    """Judge rows by the panel in order, one per winner."""
    return tuple(Row(PANEL[k], w) for k, w in enumerate(winners))


def tournament() -> list[Debate]:
    """Four models, every pair side-swapped on one topic: alpha-1 wins every row, delta-4 loses every row,
    bravo-2 and charlie-3 split; one row (bravo-2 vs charlie-3, s0) names neither debater."""
    return [
        *swapped("topic_01", "alpha-1", "bravo-2", rows("pro", "pro"), rows("con", "con", "con")),
        *swapped("topic_02", "alpha-1", "charlie-3", rows("pro", "pro", "pro"), rows("con", "con")),
        *swapped("topic_03", "alpha-1", "delta-4", rows("pro", "pro"), rows("con", "con")),
        *swapped("topic_01", "bravo-2", "charlie-3", rows("pro", "Neither side"), rows("pro", "con")),
        *swapped("topic_02", "bravo-2", "delta-4", rows("pro", "pro"), rows("con", "con")),
        *swapped("topic_03", "charlie-3", "delta-4", rows("pro", "pro"), rows("con", "con")),
    ]
