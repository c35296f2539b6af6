"""The match room: the protocol (who speaks when, and what each speaker may see), the judge contract, people's turns on the web and the claims that let many processes share one plan."""
