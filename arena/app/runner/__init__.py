"""Playing the plan: the match engine, runs in one process or workers, their progress, the dry run and its wall time, arena check's probes and the standings the draws pair on."""
