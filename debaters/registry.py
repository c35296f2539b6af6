"""The debater kinds an entry can name (arena.toml `debater = ...`)."""
from arena.base.registry import Registry

DEBATERS = Registry("debater", "arena.debaters", {
    "direct": "debaters.direct:DirectDebater",
    "agent4debate": "debaters.agent4debate:Agent4Debate",
    "search-baseline": "debaters.search_baseline:SearchBaseline",
    "human": "debaters.human:HumanDebater",
    "imported": "debaters.imported:ImportedDebater",
})
