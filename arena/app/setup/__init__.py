"""Setting a workspace up: wiring (arena.toml's kinds built and the database synced), presets, the demo's workspace and imports of debates held elsewhere."""
