"""The analysis room: judged matches turned into results rows (tally), and statistics over stored matches (stats)."""
