"""The rating math: weighted Bradley-Terry ratings on the Elo scale (bt), their intervals (bootstrap), controlled
fits (control), tables and histories (ratings, history, results; their shapes in tables), and the published site
(site/). It takes plain arrays and data frames and imports nothing of arena."""
