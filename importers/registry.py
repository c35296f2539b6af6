"""The importer kinds `arena import KIND DIR` can name (importers.base)."""
from arena.registry import Registry

IMPORTERS = Registry("importer", "arena.importers", {
    "lechmazur": "importers.lechmazur:LechmazurImporter",
    "arena": "importers.arena:ArenaImporter",
})
