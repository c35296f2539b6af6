"""`arena init DIR --preset NAME`: workspaces that set up a published arena, or a simulated one that shows a point,
every part commented with its source or its reason.

A preset is an arena.toml text and the schedule to draw into the new workspace. `agent4debate` mirrors the
Competitive Debate Arena of "Can LLMs Beat Humans in Debating? A Dynamic Multi-agent Framework for
Competitive Debate" (Agent4Debate, arXiv 2408.04472). `verbose` is a simulated arena whose judge likes long
speeches: a long-winded entry is over-rated by `arena rate` and put right by `arena rate --control length`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Required, TypedDict


class Draw(TypedDict, total=False):
    """The arguments of arena.app.commands.schedule a preset draws its schedule with."""

    fmt: Required[str]
    rounds: int
    matches: int


# The published arena's own figures, shown beside ours by `arena stats paper`: per section of its output,
# the key of a row → the paper's values of that row's columns.
Figures = dict[str, dict[tuple[str, ...], dict[str, float]]]


@dataclass(frozen=True)
class Preset:
    """A workspace to set up: its arena.toml, its first schedule and what it is; a published arena's, its figures."""

    config: str  # arena.toml
    schedule: Draw  # drawn right after init
    about: str  # one line for `arena init --help` and the init message
    figures: Figures = field(default_factory=dict)


_A4D_MODELS = (  # (entry name, litellm model string): the paper's Agent4Debate foundation models (Tables 3-4)
    ("a4d-gemini-1.5-pro", "gemini/gemini-1.5-pro"),
    ("a4d-claude-3.5-sonnet", "anthropic/claude-3-5-sonnet-20240620"),
    ("a4d-qwen2-72b", "dashscope/qwen2-72b-instruct"),
    ("a4d-gpt-4o", "openai/gpt-4o"),
    ("a4d-gemini-1.5-flash", "gemini/gemini-1.5-flash"),
    ("a4d-glm-4-air", "zai/glm-4-air"),
    ("a4d-deepseek-chat", "deepseek/deepseek-chat"),
)


def _entry(name: str, debater: str, model: str, comment: str = "") -> str:
    note = f"  # {comment}" if comment else ""
    return f'[[entries]]\nname = "{name}"\ndebater = "{debater}"\nmodel = "{model}"{note}\n'


_AGENT4DEBATE = f'''\
# The Competitive Debate Arena of Agent4Debate (arXiv 2408.04472), set up by `arena init --preset agent4debate`.
# Every part says where in the paper it comes from. API keys come from the environment only:
# GEMINI_API_KEY, ANTHROPIC_API_KEY, DASHSCOPE_API_KEY, OPENAI_API_KEY, ZAI_API_KEY, DEEPSEEK_API_KEY and
# TAVILY_API_KEY. Models since retired by their providers: swap in a successor under a new entry name.
# Before paying for anything: `arena run --dry-run` projects the calls and cost per model.

[arena]
language = "zh"            # the arena is Chinese: Chinese prompts, Chinese speeches (section "Competitive Debate Arena")
seed = 0
judge_runs = 3             # Debatrix is run three times per debate ("Debatrix-Elo")

[search]
provider = "tavily"        # the Searcher and the baselines search with Tavily ("Experimental Setup")
max_results = 5

[motions]
sets = ["builtin:zh"]      # our own Chinese motions, fact / value / policy like the paper's 66 (which are not published)

[rating]
side = "ignore"            # the paper's weighted Bradley-Terry has no Pro-advantage parameter ("Debatrix-Elo")

# --- Agent4Debate on the paper's foundation models ("Agent4Debate", Tables 3-4) -------------------------
# temperature 0.2 and top_p 0.75 for all models, as in the paper, are every debater's defaults.
{"".join(_entry(name, "agent4debate", model) + chr(10) for name, model in _A4D_MODELS)}
# --- Baselines ("Baseline": the AI-Debater 2024 framework, Tavily search and stage prompts) --------------
{_entry("base-claude-3.5-sonnet", "search-baseline", "anthropic/claude-3-5-sonnet-20240620")}
{_entry("base-deepseek-chat", "search-baseline", "deepseek/deepseek-chat")}
# Not in the paper: the model alone, no search, to show what the frameworks add.
{_entry("direct-gpt-4o", "direct", "openai/gpt-4o")}
# --- People ("ten experienced human debaters"): speeches typed in an editor or read from files -----------
{_entry("humans", "human", "human/debaters", "see docs/guides/debaters.md, Human entries: speeches_dir or an editor")}
# --- Judges ------------------------------------------------------------------------------------------
# Debatrix on GPT-4o-mini, R = 3 ("Debatrix-Elo"): win, lose or tie per dimension as Debatrix's rules allow
# (ties on source and language), and the overall result ternary too, as the paper converts it.
[[judges]]
name = "debatrix-mini"
kind = "debatrix"
model = "openai/gpt-4o-mini"
runs = 3
[judges.options]
overall_ties = true
# The paper runs Debatrix three times on each debate as it was held, the sides never exchanged, so the preset does
# too (the arena's default, swap_sides = true, reads odd runs with PRO and CON exchanged). At Debatrix's temperature
# 0 the three runs may only repeat one another, which `arena check` and `arena run` warn of; set true to have them
# differ and cancel position bias, at the cost of following the paper less closely.
swap_sides = false

# Three experienced judges vote win, lose or tie, told only of an equal burden of proof ("Human-Elo").
# Hand out their private links with `arena ballots issue --judge experts`, then `arena serve`.
[[judges]]
name = "experts"
kind = "human"
[judges.options]
people = ["judge-1", "judge-2", "judge-3"]
'''


def _slao(s: float, l: float, a: float, o: float, **more: float) -> dict[str, float]:
    return {"source": s, "language": l, "argument": a, "overall": o, **more}


# Agent4Debate's figures, points out of 3 under Debatrix (R = 3) and consistency of outcomes. Table 1: each
# framework against the search baseline on the same model, head to head (20 matches each); Table 5: the human
# debaters against Agent4Debate on every foundation model (30 matches), with the human judges' points
# (people_overall); Table 6: Debatrix against the human judges' majority, and the human judges among themselves,
# over the matches without a human debater and over all. Table 2's ablations have no entries in the preset.
_A4D_FIGURES: Figures = {
    "pairs": {("a4d-claude-3.5-sonnet", "base-claude-3.5-sonnet"): _slao(2.83, 1.76, 2.52, 2.62),
              ("base-claude-3.5-sonnet", "a4d-claude-3.5-sonnet"): _slao(0.17, 1.24, 0.48, 0.38),
              ("a4d-deepseek-chat", "base-deepseek-chat"): _slao(2.73, 1.88, 2.31, 2.77),
              ("base-deepseek-chat", "a4d-deepseek-chat"): _slao(0.27, 1.12, 0.69, 0.23)},
    "kinds": {("human", "agent4debate"): _slao(0.52, 0.30, 0.6, 0.42, people_overall=1.22),
              ("agent4debate", "human"): _slao(2.48, 2.70, 2.40, 2.58, people_overall=1.78)},
    "judges": {("debatrix-mini", "experts"): {"excluding_human_debaters": 0.66, "all": 0.56}},
    "among_people": {("experts",): {"excluding_human_debaters": 0.74, "all": 0.73}},
}

# (name, planted strength, verbosity): sim-wordy and sim-plain are equally strong; sim-wordy says it at length.
_VERBOSE_ENTRIES = (("sim-ace", 1.2, 1.3), ("sim-bold", 0.6, 1.3), ("sim-wordy", 0.0, 1.8), ("sim-plain", 0.0, 1.3),
                    ("sim-deft", -0.6, 1.3), ("sim-faint", -1.2, 1.3))


def _verbose_entry(name: str, strength: float, verbosity: float) -> str:
    return (_entry(name, "direct", f"offline/{name}") + f"strength = {strength}\n"
            f"[entries.params]\nverbosity = {verbosity}\n")


_VERBOSE = f'''\
# A simulated arena whose judge likes long speeches, set up by `arena init --preset verbose`. Everything runs on the
# offline simulator (no keys, no cost). After `arena run`:
#   arena entry list --format json       the planted strengths
#   arena rate                           raw ratings: sim-wordy, as strong as sim-plain, rated above it
#   arena rate --control length          ratings net of length: sim-wordy back beside sim-plain, and the
#                                        judge's taste for length as a coefficient (Elo per unit of x)

[arena]
language = "en"
seed = 0
# Ten runs a match: each is a draw of the judge's verdict, and the length effect is measured on the draws.
judge_runs = 10

[search]
provider = "offline"

[motions]
sets = ["builtin:en"]

# Each entry's speeches run `verbosity` times the simulator's usual length on average, between 1 and
# 2 * verbosity - 1 times it from motion to motion, at the share of cogent sentences its strength plants: longer,
# never better. Lengths vary within every entry, as real models' do from prompt to prompt; a length control needs
# that, since a length every match of an entry carries alike cannot be told from the entry's strength.
{"".join(_verbose_entry(*planted) + chr(10) for planted in _VERBOSE_ENTRIES)}\
# One judge, with a planted taste for length: the logit of PRO winning gains length_bias * x, where
# x = (pro - con) / (pro + con) of the two sides' words over the debate, as `arena rate --control length` counts it.
[[judges]]
name = "sim-judge"
kind = "single"
model = "offline/judge"
[judges.options]
length_bias = 3.0
'''

PRESETS = {
    "agent4debate": Preset(_AGENT4DEBATE, {"fmt": "random", "matches": 200},
                           "Agent4Debate's Competitive Debate Arena: Chinese motions, 11 entries, Debatrix (R = 3) "
                           "and three human judges, 200 random matches", _A4D_FIGURES),
    "verbose": Preset(_VERBOSE, {"fmt": "round-robin", "rounds": 6},
                      "a simulated arena whose judge likes long speeches: six entries, one long-winded, 180 matches; "
                      "compare 'arena rate' with 'arena rate --control length'"),
}
