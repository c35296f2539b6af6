"""The Elo scale and the rating prior, shared by the rating fit and the scheduler.

Model: P(A beats B) = 1 / (1 + 10^((R_B - R_A) / 400)) = sigmoid((R_A - R_B) / ELO_SCALE),
so a rating R is the logit strength theta = (R - BASE_RATING) / ELO_SCALE; where the MLE does
not exist, theta ~ N(0, 1 / PRIOR_PRECISION).

This module imports nothing but `math`, and must stay that way: it is the one module the arena
kernel may import from leaderboard, which is what keeps numpy (and anything above the kernel)
out of the kernel.
"""

from __future__ import annotations

import math

BASE_RATING = 1000.0  # the mean rating
ELO_SCALE = 400 / math.log(10)  # Elo points per logit: 400 points are odds of 10 to 1
LOGIT_PER_ELO = 1 / ELO_SCALE

# Ridge precision of the N(0, 1/PRIOR_PRECISION) prior on logit strengths, used
# only when the MLE does not exist. A tied game of weight 1 against an opponent
# at the mean has curvature 1/4 at theta = 0, so 0.5 is worth two virtual ties:
# SD sqrt(2) logits (~246 Elo), weak enough that a handful of real games
# dominate it, yet enough to keep a winless or unbeaten entry finite.
PRIOR_PRECISION = 0.5
# The prior's spread in Elo points: the rating SD of an entry with no results.
PRIOR_SD = math.sqrt(1 / PRIOR_PRECISION) / LOGIT_PER_ELO


def expected_score(rating_a: float, rating_b: float) -> float:
    """P(A beats B) = 1 / (1 + 10^((R_B - R_A) / 400)) for Elo ratings R_A, R_B."""
    return 1 / (1 + 10 ** ((rating_b - rating_a) / 400))
