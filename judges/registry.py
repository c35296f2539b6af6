"""The judge kinds a judge can name (arena.toml `kind = ...`)."""
from arena.base.registry import Registry

JUDGES = Registry("judge", "arena.judges", {
    "single": "judges.single:SingleJudge",
    "devils_advocate": "judges.devils_advocate:DevilsAdvocateJudge",
    "debatrix": "judges.debatrix:DebatrixJudge",
    "panel": "judges.panel:PanelJudge",
    "jury": "judges.jury:JuryJudge",
    "human": "judges.human:HumanJudge",
    "imported": "judges.imported:ImportedJudge",
})
