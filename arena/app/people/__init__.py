"""People in the arena: ballot links (ballot_links), debaters' links (debater_links) and the web app they use (web, arena serve)."""
