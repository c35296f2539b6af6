"""The workspace room: arena.toml read into typed settings (config), edited as text (registration), and the folder that holds it with arena.db (folder)."""
