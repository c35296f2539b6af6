"""A notebook as a script: the demo tournament's ratings, overall and by category, the side and length bias of its
judges, and how far its LLM judges agree with its people, as plain tables (Python API: docs/reference/api.md).

    python docs/examples/notebook.py [DIR]      DIR: a workspace (default ./arena-demo, made by `arena demo`'s
                                                function when it does not exist yet: under a minute, offline)

Each `# %%` starts a cell: VS Code, Spyder and Jupytext run them one at a time, as a notebook would.
"""
# %%
import sys
from pathlib import Path

import arena

WORKSPACE = Path(sys.argv[1] if len(sys.argv) > 1 else "arena-demo")
if not (WORKSPACE / "arena.toml").exists():
    from arena.app.commands import demo

    demo(WORKSPACE, progress=lambda line: None)  # the simulated tournament `arena demo` plays
ws = arena.open(WORKSPACE)

# %% The leaderboard: the top entries, each rating with its 95% interval
ratings = ws.ratings(seed=0)
top = ratings.sort_values("rating", ascending=False).head(5)
print(top[["entry", "rating", "ci_low", "ci_high", "matches", "rank_ub"]].to_string(index=False))
if ratings["simulated"].any():  # the offline simulator played: say so beside every figure shown
    print(f"simulated: {', '.join(ratings.loc[ratings['simulated'], 'entry'])}")

# %% By category: one fit per motion category, side by side
by_category = ws.ratings(by="category", seed=0).pivot(index="entry", columns="category", values="rating")
print(by_category.round(0).to_string())

# %% Side: does Pro win more than half the points, and does any judge lean to Pro or to the longer side?
sides = ws.stats_sides()
print(f"Pro's share of the points: {sides.overall['pro_share']:.2f} over {sides.overall['matches']} matches "
      f"(p = {sides.overall['p_value']:.2f}, judge {sides.judge})")
bias = ws.stats_bias()
print(bias[["judge", "votes", "pro_share", "pro_ci_low", "pro_ci_high", "longer_share"]].to_string(index=False))

# %% LLM judges against people: agreement and Cohen's kappa on the matches both decided
judges = ws.stats_judges()
people = set(judges.people_vs_judges["judge"])  # the judges of people
agreement = judges.pairs[judges.pairs["a"].isin(people) | judges.pairs["b"].isin(people)]
if agreement.empty:
    print("no judge of people has voted here")
else:
    print(agreement[["a", "b", "matches", "agreement", "kappa"]].to_string(index=False))

# %% The matches, each with its result by the first judge (winner, score_pro, score_con) and its simulated flag
matches = ws.matches()
wins = matches["winner"].value_counts()
print(f"{len(matches)} matches: Pro won {wins.get('pro', 0)}, Con won {wins.get('con', 0)}, tied {wins.get('tie', 0)}"
      + (" (simulated)" if matches["simulated"].all() else ""))

# %%
ws.close()
