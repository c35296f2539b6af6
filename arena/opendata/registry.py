"""The importer kinds `arena import KIND DIR` can name (arena.opendata.importers)."""
from arena.base.registry import Registry

IMPORTERS = Registry("importer", "arena.importers", {
    "lechmazur": "arena.opendata.lechmazur:LechmazurImporter",
    "arena": "arena.opendata.from_arena:ArenaImporter",
})
