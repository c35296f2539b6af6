"""The simulator plays along with length: a debater's planted verbosity makes its speeches longer and no better,
a judge's planted length_bias favours the longer side, and both leave everything as it was at their defaults."""
from __future__ import annotations

import asyncio
import json
import math
import random
import re

import pytest

from arena.domain import features
from arena.gateway import offline
from arena.domain import speechchecks
from arena.domain import transcript
from arena.workspace.config import LLMSettings
from arena.domain.formats import AGENT4DEBATE
from arena.match.judging import JudgeView, run_judge, verdict_schema
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, LLMHandle
from arena.domain.records import JudgeSpec, Match, Motion, Speech
from judges.registry import JUDGES
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace

MOTIONS = [f"Motion: {text}\nWrite." for text in (
    "Cities should ban private cars from their centres", "Homework should be abolished",
    "Zoos do more harm than good", "Voting should be compulsory", "Social media has made politics worse",
    "Nuclear power is essential to fighting climate change", "Universities should be free",
    "Remote work is better for society", "Art should be publicly funded", "Space exploration is worth its cost")]
ZH_MOTIONS = [f"辩题：{text}\n" for text in (
    "人工智能的发展利大于弊", "大学应当免费", "城市应当禁止私家车进入市中心", "网络让人更孤独", "应当实行强制投票")]
STAGES = ("constructive", "rebuttal", "summary")
ORDER = (("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro"))


def speech(prompt: str, strength: float = 0.0, verbosity: float = 1.0, stage: str = "constructive", *,
           model: str = "offline/a", seed: int = 0) -> str:
    return offline.respond(model, strength, [{"role": "user", "content": prompt}], seed=seed, role="writer",
                           stage=stage, verbosity=verbosity)[0]


# --- verbosity -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("verbosity", [1.5, 1.8, 2.0])
def test_a_verbose_debater_writes_about_verbosity_times_the_words(verbosity):
    ratios = [features.words(speech(m, verbosity=verbosity, stage=stage, model=f"offline/{k}"))
              / features.words(speech(m, stage=stage, model=f"offline/{k}"))
              for k in range(4) for m in MOTIONS for stage in STAGES]
    assert sum(ratios) / len(ratios) == pytest.approx(verbosity, abs=0.12)
    # Never shorter than usual, at most 2 · verbosity - 1 times as long (with the sentences' own spread).
    assert min(ratios) > 0.85 and max(ratios) < (2 * verbosity - 1) * 1.2
    assert max(ratios) - min(ratios) > (verbosity - 1)  # it varies from motion to motion


def test_a_verbose_speakers_length_is_one_per_motion_and_seed():
    one = [features.words(speech(MOTIONS[0], verbosity=1.8, stage=s)) / features.words(speech(MOTIONS[0], stage=s))
           for s in STAGES]
    assert max(one) - min(one) < 0.25  # the same stretch for each of its speeches on a motion
    lengths = {features.words(speech(MOTIONS[0], verbosity=1.8, seed=seed)) for seed in range(6)}
    assert len(lengths) > 1  # the workspace's seed draws it anew


@pytest.mark.parametrize("strength", [-1.5, 0.0, 0.7, 1.5])
def test_a_verbose_debater_is_no_better(strength):
    """The share of cogent sentences, what a simulated judge reads as strength, is the planted one at any
    verbosity."""
    def read(verbosity: float) -> float:
        return offline.estimated_strength("\n".join(speech(m, strength, verbosity, stage)
                                                    for m in MOTIONS for stage in STAGES))
    assert read(1.8) == pytest.approx(strength, abs=0.15)
    assert read(1.8) == pytest.approx(read(1.0), abs=0.1)


def test_only_the_writer_is_verbose():
    prompt = [{"role": "user", "content": MOTIONS[0]}]
    for role, judging in (("analyzer", False), ("judge", True)):
        assert offline.respond("offline/a", 0.5, prompt, role=role, stage="constructive", judging=judging,
                               verbosity=2.0) == offline.respond("offline/a", 0.5, prompt, role=role,
                                                                 stage="constructive", judging=judging)


@pytest.mark.parametrize("motions, language", [(MOTIONS, "en"), (ZH_MOTIONS, "zh")])
def test_verbose_debates_pass_the_speech_checks(motions, language):
    """Twice the sentences from the same templates is neither a loop, nor an echo of the other side's or its own
    earlier speeches, nor short, in either language."""
    for k, prompt in enumerate(motions):
        for pro, con in ((2.0, 1.0), (2.0, 2.0), (1.0, 2.0)):
            verbosity, strength = {"pro": pro, "con": con}, {"pro": 1.5 - k % 4, "con": -0.5 + k % 3}
            speeches = tuple(Speech(stage, side, speech(prompt, strength[side], verbosity[side], stage,
                                                        model=f"offline/{side}{k}"))
                             for stage, side in ORDER)
            motion = Motion(f"m{k}", offline._found_motion(prompt), "policy", language)
            match = Match(f"m{k}", motion, "a", "b", speeches=speeches)
            assert speechchecks.match_problems(match, AGENT4DEBATE) == []


# --- length_bias -----------------------------------------------------------------------------------------------

def debate(pro_sentences: int, con_sentences: int, *, strength: float = 0.0) -> tuple[Speech, ...]:
    """A debate whose sides are equally strong (each a share sigmoid(strength) of cogent sentences) and
    pro_sentences / con_sentences long per speech."""
    rng = random.Random(7)
    return tuple(Speech(stage, side, offline.prose(MOTIONS[0], strength, rng,
                                                    pro_sentences if side == "pro" else con_sentences))
                 for stage, side in ORDER)


def length_gap(speeches) -> float:
    """x = (pro - con) / (pro + con) of the sides' words, as a length-controlled rating computes it."""
    totals = features.side_totals((s.side, s.text) for s in speeches)
    pro, con = totals["pro"]["length"], totals["con"]["length"]
    return (pro - con) / (pro + con)


def pro_share(speeches, length_bias: float, runs: int = 600) -> float:
    prompt = [{"role": "user", "content": MOTIONS[0] + transcript.render(speeches)}]
    return sum(json.loads(offline.respond("offline/j", 0.0, prompt, schema=verdict_schema(), sample=run,
                                          length_bias=length_bias)[0])["overall"] == "pro"
               for run in range(runs)) / runs


@pytest.mark.parametrize("length_bias", [1.0, 3.0])
def test_a_biased_judge_draws_from_bradley_terry_plus_the_bias_on_the_length_gap(length_bias):
    speeches = debate(28, 14)
    x = length_gap(speeches)
    assert x == pytest.approx(1 / 3, abs=0.05)
    assert pro_share(speeches, length_bias) == pytest.approx(1 / (1 + math.exp(-length_bias * x)), abs=0.05)
    assert pro_share(speeches, 0.0) == pytest.approx(0.5, abs=0.05)
    reverse = debate(14, 28)  # the longer CON is favoured as much
    assert pro_share(reverse, length_bias) == pytest.approx(1 / (1 + math.exp(-length_bias * length_gap(reverse))),
                                                            abs=0.05)


def test_a_biased_judge_tips_only_draws_near_the_line():
    """The bias does not enter the seed: a biased judge decides as an unbiased one but where the bias tips it."""
    speeches = debate(28, 14)
    prompt = [{"role": "user", "content": MOTIONS[0] + transcript.render(speeches)}]
    for run in range(40):
        fair, biased = (json.loads(offline.respond("offline/j", 0.0, prompt, schema=verdict_schema(), sample=run,
                                                   length_bias=bias)[0])["overall"] for bias in (0.0, 2.0))
        assert biased == "pro" or fair == "con"


def test_a_biased_judges_notes_carry_the_lengths_that_a_later_reader_weighs():
    """Debatrix's dimensions read earlier speeches only through their own notes: a biased judge's note states each
    speech's length beside its counts, so the verdict on the notes sees the same gap as one on the transcript."""
    speeches = debate(28, 14)
    for prompt, zh in ((MOTIONS[0] + transcript.render(speeches), False),
                       ("辩题：人工智能的发展利大于弊\n" + transcript.render(
                           tuple(Speech(s.stage, s.side, speech(ZH_MOTIONS[0], 0.0, 2.0 if s.side == "pro" else 1.0,
                                                                s.stage)) for s in speeches), language="zh"), True)):
        messages = [{"role": "user", "content": prompt}]
        fair = offline.respond("offline/j", 0.0, messages, judging=True)[0]
        biased = offline.respond("offline/j", 0.0, messages, judging=True, length_bias=1.0)[0]
        assert fair.endswith(offline.assessment(prompt, chinese=zh))  # an unbiased judge's notes as before
        assert not re.search(r"(pro|con)/\w+ \d+/\d+/\d+", fair)
        note = biased.split("\n\n")[-1]
        assert note == offline.assessment(prompt, chinese=zh, lengths=True)
        assert re.search(r"(pro|con)/\w+ \d+/\d+/\d+", note)
        assert offline.length_gap(note) == pytest.approx(offline.length_gap(prompt))
        assert offline.length_gap(prompt) > 0.2
        assert offline.tally(note) == offline.tally(prompt)


@pytest.mark.parametrize("kind", ["single", "debatrix", "panel", "devils_advocate"])
def test_each_kind_of_simulated_judge_favours_the_longer_side(kind):
    view = JudgeView(Motion("m", "Cities should ban private cars from their centres", "policy"), debate(28, 14))
    gateway = LLMGateway(LLMSettings(cache=False), None)

    # 120 runs: a kind's runs share much of what they read (the devil's advocate's critiques), so fewer leave "about
    # even" to the draws of one prompt text (60 gave 18 of 60 on one key of the transcript, 33 on another).
    def pro_wins(length_bias: float, runs: int = 120) -> int:
        options = {"length_bias": length_bias} if length_bias else {}
        spec = JudgeSpec("j", kind, "offline/j", "", runs, options)
        judge_ = JUDGES.get(kind)(spec)
        return sum(asyncio.run(run_judge(judge_, view, LLMHandle(gateway, ModelRef.of(spec), AgentLog(),
                                                                 match_id=None, sample=run), run)).overall == "pro"
                   for run in range(runs))

    fair, biased = pro_wins(0.0), pro_wins(5.0)
    assert 40 <= fair <= 80  # equally strong: about even
    assert biased - fair >= 24  # PRO's speeches are twice as long: sigmoid(5 / 3) = 0.84 a draw


# --- defaults and bad values ---------------------------------------------------------------------------------

def test_at_their_defaults_nothing_changes():
    prompt = [{"role": "user", "content": MOTIONS[0] + transcript.render(debate(28, 14))}]
    for kw in ({"role": "writer", "stage": "summary"}, {"schema": verdict_schema(), "judging": True},
               {"judging": True}):
        assert offline.respond("offline/a", 0.3, prompt, **kw) == offline.respond(
            "offline/a", 0.3, prompt, verbosity=1.0, length_bias=0.0, **kw)
    spec = JudgeSpec("j", "single", "offline/j")
    assert ModelRef.of(spec).length_bias == 0.0
    assert ModelRef.of(JudgeSpec("j", "single", "offline/j", options={"length_bias": 2})).length_bias == 2


@pytest.mark.parametrize("params, fragment", [
    ({"verbosity": 0.5}, "verbosity = 0.5: expected from 1 to 2"),
    ({"verbosity": 2.5}, "verbosity = 2.5: expected from 1 to 2"),
    ({"verbosity": "long"}, "verbosity = 'long': expected from 1 to 2"),
    ({"verbosity": float("nan")}, "entries[0].params.verbosity: expected a finite number"),
])
def test_a_bad_verbosity_exits_2_naming_the_key(tmp_path, params, fragment):
    new_workspace(tmp_path, init=None, entries=[entry("a", params=params)])
    assert_user_error(invoke("entry", "list", "-w", tmp_path), "arena.toml:", "entries[0].params", fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.toml"]


@pytest.mark.parametrize("debater", ["direct", "search-baseline", "agent4debate"])
def test_verbosity_on_a_real_model_exits_2(tmp_path, debater):
    new_workspace(tmp_path, init=None, entries=[entry("a", debater, "openai/gpt-4o", params={"verbosity": 1.5})])
    assert_user_error(invoke("entry", "list", "-w", tmp_path), "entries[0].params", "param verbosity",
                      "only offline models", "'openai/gpt-4o'")


def test_verbosity_through_entry_add(tmp_path):
    new_workspace(tmp_path)
    assert_user_error(invoke("entry", "add", "b", "--debater", "direct", "--model", "openai/gpt-4o", "--param",
                             "verbosity=1.5", "-w", tmp_path), "--param", "param verbosity", "only offline models")
    assert_user_error(invoke("entry", "add", "b", "--debater", "direct", "--model", "offline/b", "--param",
                             "verbosity=3", "-w", tmp_path), "--param", "verbosity = 3: expected from 1 to 2")
    added = invoke("entry", "add", "b", "--debater", "direct", "--model", "offline/b", "--param", "verbosity=1.5",
                   "-w", tmp_path)
    assert added.exit_code == 0, added.output
    assert "verbosity = 1.5" in (tmp_path / "arena.toml").read_text()


@pytest.mark.parametrize("kind", ["single", "debatrix", "panel", "devils_advocate"])
@pytest.mark.parametrize("options, model, fragment", [
    ({"length_bias": 6}, None, "length_bias = 6: expected from -5 to 5"),
    ({"length_bias": "yes"}, None, "length_bias = 'yes': expected from -5 to 5"),
    ({"length_bias": 1.0}, "openai/gpt-4o-mini", "option length_bias: only offline models"),
    ({"length_bias": 0}, "openai/gpt-4o-mini", "option length_bias: only offline models"),
])
def test_a_bad_length_bias_exits_2_naming_the_key(tmp_path, kind, options, model, fragment):
    new_workspace(tmp_path, init=None, entries=[entry("a")], judges=[judge("j", kind, model, options=options)])
    assert_user_error(invoke("entry", "list", "-w", tmp_path), "arena.toml:", "judges[0].options", fragment)


def test_length_bias_through_judge_add(tmp_path):
    new_workspace(tmp_path, entries=[entry("a")])
    assert_user_error(invoke("judge", "add", "j", "--kind", "single", "--model", "openai/gpt-4o-mini", "--option",
                             "length_bias=1", "-w", tmp_path), "--option", "option length_bias", "only offline")
    added = invoke("judge", "add", "j", "--kind", "single", "--model", "offline/j", "--option", "length_bias=1.5",
                   "-w", tmp_path)
    assert added.exit_code == 0, added.output


# --- the preset: a long-winded entry over-rated raw, put right controlled ---------------------------------------

@pytest.mark.slow
def test_the_verbose_preset_over_rates_the_long_winded_entry_raw_and_puts_it_right_controlled(tmp_path):
    """sim-wordy is planted as strong as sim-plain, and writes 1.8 times the simulator's usual length where the
    others write 1.3 times it, to a judge whose logit gains 3 per unit of x. Raw, it is rated above its planted
    position beyond its interval; controlled for length, every entry is back at its planted position, and the
    judge's taste is recovered as a coefficient."""
    ws = tmp_path / "ws"
    assert invoke("init", ws, "--preset", "verbose").exit_code == 0
    played = invoke("run", "-w", ws)
    assert played.exit_code == 0, played.output
    planted = {e["name"]: e["strength"] for e in json.loads(invoke("entry", "list", "-w", ws, "--format",
                                                                   "json").output)}
    assert planted["sim-wordy"] == planted["sim-plain"]
    mean = sum(planted.values()) / len(planted)
    elo = 400 / math.log(10)  # Elo per logit; ratings average 1000, as the planted strengths average `mean`
    position = {name: 1000 + elo * (strength - mean) for name, strength in planted.items()}

    def rate(*options: str) -> dict:
        result = invoke("rate", "-w", ws, "--format", "json", *options)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    raw, controlled = rate(), rate("--control", "length")
    raw_rows = {r["entry"]: r for r in raw["ratings"]}
    rows = {r["entry"]: r for r in controlled["ratings"]}
    wordy = raw_rows["sim-wordy"]
    assert wordy["ci_low"] > position["sim-wordy"] + 10  # over-rated beyond its interval
    assert wordy["rating"] - raw_rows["sim-plain"]["rating"] > 60
    fixed = rows["sim-wordy"]
    assert fixed["ci_low"] <= position["sim-wordy"] <= fixed["ci_high"]
    assert abs(fixed["rating"] - rows["sim-plain"]["rating"]) < 30
    assert max(abs(rows[name]["rating"] - position[name]) for name in planted) < 40
    assert set(controlled["control"]) == {"length"} and set(controlled["control"]["length"]) == {
        "coef", "ci_low", "ci_high"}
    taste = controlled["control"]["length"]  # Elo per unit of x; the planted 3 logits are 521
    assert 0 < taste["ci_low"] <= 3 * elo <= taste["ci_high"]
    assert "control" not in raw
