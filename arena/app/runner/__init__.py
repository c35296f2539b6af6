"""Playing the plan: the match engine, runs in one process or workers, their progress, the dry run, arena check's probes and the standings the draws pair on."""
