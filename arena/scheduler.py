"""Draw generators: who debates whom, on which motion, on which side. Pure functions."""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Sequence

from arena.errors import UserError
from arena.records import CATEGORIES, Motion


@dataclass(frozen=True)
class Pairing:
    motion_id: str
    pro: str
    con: str


def balanced_motions(motions: Sequence[Motion], count: int, rng: random.Random) -> list[Motion]:
    """count motions, cycling through the categories so each is used about equally."""
    pools = {c: [m for m in motions if m.category == c] for c in CATEGORIES}
    for pool in pools.values():
        rng.shuffle(pool)
    cycle = [c for c in CATEGORIES if pools[c]]
    if not cycle:
        raise UserError("no motions available: check [motions] sets in arena.toml")
    picked, used = [], {c: 0 for c in cycle}
    for k in range(count):
        category = cycle[k % len(cycle)]
        pool = pools[category]
        picked.append(pool[used[category] % len(pool)])
        used[category] += 1
    return picked


def round_robin(entries: Sequence[str], motions: Sequence[Motion], rounds: int = 1, seed: int = 0) -> list[Pairing]:
    """Every pair meets on `rounds` motions, each motion played twice with sides swapped."""
    if len(entries) < 2:
        raise UserError(f"round-robin needs at least 2 active entries, found {len(entries)}")
    if rounds < 1:
        raise UserError(f"--rounds must be at least 1, got {rounds}")
    rng = random.Random(seed)
    pairs = list(itertools.combinations(sorted(entries), 2))
    rng.shuffle(pairs)
    chosen = balanced_motions(motions, len(pairs) * rounds, rng)
    plan = []
    for k, (motion, (a, b)) in enumerate(zip(chosen, [p for _ in range(rounds) for p in pairs])):
        first, second = (a, b) if k % 2 == 0 else (b, a)
        plan += [Pairing(motion.id, first, second), Pairing(motion.id, second, first)]
    return plan
