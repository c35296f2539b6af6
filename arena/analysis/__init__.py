"""The analysis room: judged matches turned into results rows (tally), and statistics over stored matches (stats, which
re-exports outcomes, the agreement of raters; paper, the Agent4Debate paper's tables; bias, the judges' biases)."""
