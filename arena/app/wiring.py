"""Wiring a workspace: arena.toml's entries and judges built from the kind registries, its motion sets loaded
from the motion library, its database brought up to date. Everything else in the app opens workspaces here.

The bottom of the app layer: it imports no other module of arena.app.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.config import Config, load_config
from arena.errors import UserError
from arena.workspace import TEMPLATE, Workspace, build_kinds, init_workspace, open_store
from debaters.registry import DEBATERS
from judges.registry import JUDGES
from motions.library import load_set_map


def open_workspace(path: Path) -> Workspace:
    """Open a workspace: arena.toml checked whole (kinds built, motion sets loaded) before the database is touched."""
    path = Path(path)
    config = load_config(path)
    debaters, judges = kinds_of(config)
    motions = motion_sets(config, path)
    store = open_store(path, config, (motion for motion, _ in motions.values()))
    return Workspace(path, config, store, motions, debaters, judges)


def motion_sets(config: Config, path: Path) -> dict:
    """Each motion of config's [motions] sets by id, with its set; a set that does not load names the key."""
    try:
        return load_set_map(list(config.motions.sets), path)
    except UserError as exc:
        raise UserError(f"{config.where('motions.sets')}: {exc}") from None


def init(path: Path, config_text: str = TEMPLATE) -> Path:
    """`arena init`: create path/arena.toml and path/arena.db, the database stored as the first open would
    store it (entries, the motions of the configured sets), so a command refused right after init leaves
    arena.db byte-identical. Returns the path of arena.toml.

    Motion sets that do not load refuse init before anything is written. Kinds are not built here: they
    come from the installation (plug-ins), not the workspace, and opening checks them every time.
    """
    path = Path(path)
    return init_workspace(path, config_text,
                          lambda config: [motion for motion, _ in motion_sets(config, path).values()])


def kinds_of(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """The built kind of each entry and judge of config, by name (arena.workspace.build_kinds)."""
    return build_kinds(config, DEBATERS, JUDGES)


def reload(ws: Workspace, config: Config) -> None:
    """Carry an edit of arena.toml into the open workspace and the database at once, as opening would."""
    ws.config = config
    ws.debaters, ws.judges = kinds_of(config)
    ws.store.sync_entries(config.entries)
