"""The bounds on what users give the arena: every number, file and structure past one of these is refused
with exit 2 before anything is written, so that no input costs minutes of CPU or gigabytes of memory.
docs/reference/index.md ("Limits") lists them for users; this module imports nothing, so the CLI may read it at once.
"""
from __future__ import annotations

from typing import Any

# --- numbers -------------------------------------------------------------------------------------------------
MAX_SEED = 2**63 - 1  # seeds are stored as SQLite INTEGERs (signed 64-bit), and numpy's SeedSequence takes no negatives
MAX_RUNS = 100  # R per judge (runs, judge_runs, people): the paper's 3 is plenty; R of a billion took 5.8 GB
MAX_CONCURRENCY = 1000  # calls per model, or matches of a run at once: past providers' own limits by far
MAX_WORKERS = 64  # worker processes of one `arena run`: each is a Python process with its own workspace
MAX_RETRIES = 10  # retries double their wait: the tenth already waits 1024 times backoff_s
MAX_BACKOFF_S = 60.0  # the first retry's wait; doubled ten times it is 17 hours
MAX_TIMEOUT_S = 3600.0  # one call's timeout: an hour is longer than any provider keeps a request open
MAX_SCHEMA_RETRIES = 10  # re-asks after an answer that fails its schema: each is a paid call
MAX_STRENGTH = 50.0  # a planted strength (logit scale): sigmoid(50) is 1 in doubles, and exp overflows past 709
MAX_BOOTSTRAP = 10_000  # bootstrap replicates: ten times the default; a billion asked for 29.8 GiB
MAX_PLAN_MATCHES = 100_000  # matches one `arena schedule` plans: 100,000 draw and store in 14 s (a 100k tournament)
MAX_ROUNDS = 100  # --rounds of a round-robin or swiss plan
MAX_TURNS = 40  # turns of a format declared in arena.toml: the built-ins have 6 and 10
MAX_TURN_WORDS = 5_000  # a turn's budget in words (characters: three times that): a long speech is 2,000
MAX_TURN_HOURS = 8_760.0  # a web debater's time for a speech ([people] turn_deadline_h, `arena debaters extend`): a year
MAX_PAGE_ROWS = 10_000  # rows per page of the site's matches list ([site] matches_per_page): ~2.5 MB of HTML

# --- files and structures ------------------------------------------------------------------------------------
MAX_CONFIG_BYTES = 1 << 20  # arena.toml: a workspace of a hundred entries is some 20 KB; tomllib reads 1 MB in 4 s
MAX_MOTION_FILE_BYTES = 8 << 20  # a motion file: 10,000 motions with info slides take about 2 MB
MAX_MOTIONS = 10_000  # motions of one set (file): a set that size reads in about 2 s, when its file changes
MAX_MOTION_CHARS = 4_000  # a motion's text, side texts or info slide: a motion is a sentence, a slide a paragraph
MAX_SOURCE_FILE_BYTES = 16 << 20  # a file an importer reads whole (a transcript, a report): lechmazur's largest is 60 KB
MAX_SOURCE_LINE_BYTES = 1 << 20  # a line of a JSONL source (a judge row): lechmazur's are a few KB
MAX_DATA_FILE_BYTES = 64 << 20  # any other file read whole (benchmarks, ballots and results CSV files)
MAX_EXPORT_TABLE_BYTES = 1 << 30  # a Parquet table of an export `arena import arena` reads: zstd keeps prose to
# about 1/2.3, so this is some 100,000 matches of six 3,000-character speeches (2,000 of the demo's take 2.4 MB)
MAX_DEPTH = 32  # nesting of YAML, JSON and TOML values: our formats need 4; Python's parsers recurse per level
MAX_YAML_NODES = 200_000  # YAML nodes of one file, aliases counted as what they stand for: 10,000 motions with
# every key take 150,001, and an 807-byte alias and merge-key bomb stands for billions

# --- where the arena listens -----------------------------------------------------------------------------------
# Not a bound but a default the CLI reads at once, kept here for that: `arena serve`'s port, which the links
# `arena ballots issue` and `arena debaters issue` print point to. Not 8000 or 8080, where local model servers
# (llama.cpp, vLLM) and dev servers listen by default: serving beside one would fail "address in use".
SERVE_PORT = 8765


def nesting(value: Any) -> int:
    """How deep lists and dicts nest in value (a scalar: 0; counted up to MAX_DEPTH + 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:  # no need to look deeper than the limit to know it is passed
            stack.extend((child, level + 1) for child in children)
    return deepest
