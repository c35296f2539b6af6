"""The debater kinds an entry can name (arena.toml `debater = ...`)."""
from arena.registry import Registry

DEBATERS = Registry("debater", "arena.debaters", {
    "direct": "debaters.direct:DirectDebater",
})
