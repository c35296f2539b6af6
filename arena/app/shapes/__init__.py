"""The JSON shapes the commands print: records turned into JSON (records), what a command that does something reports (reports), ratings and statistics (figures)."""
