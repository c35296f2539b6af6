"""The judge contract, re-exported for plug-in authors: it lives in the kernel, arena.judging."""
from arena.judging import (COMMON_OPTIONS, SWAP, BaseJudge, Decision, JudgeView, Seat, Sitting, Unseated,
                            paper_temperature, run_judge, verdict_schema)

__all__ = ["COMMON_OPTIONS", "SWAP", "BaseJudge", "Decision", "JudgeView", "Seat", "Sitting", "Unseated",
           "paper_temperature", "run_judge", "verdict_schema"]
