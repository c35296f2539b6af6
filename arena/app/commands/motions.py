"""`arena motion list | show | import`: the motions of the workspace's sets, and a motion file added to them."""
from __future__ import annotations

from pathlib import Path

from arena.app.setup.wiring import editing, remember_sets
from arena.app.shapes import records as shapes
from arena.app.shapes.reports import MotionImport
from arena.base.errors import UserError, plural
from arena.domain.records import CATEGORIES
from arena.workspace import registration
from arena.workspace.folder import Workspace
from motions.library import load_motion_file


def motion_list(ws: Workspace, category: str | None = None) -> list[shapes.MotionRow]:
    """The motions of the configured sets, in set order: {id, text, category, language, info_slide, set}."""
    if category is not None and category not in CATEGORIES:
        raise UserError(f"--category {category!r}: unknown category (expected {', '.join(CATEGORIES)})")
    return [shapes.motion_row(m, spec) for m, spec in ws.motions.values() if category in (None, m.category)]


def motion_show(ws: Workspace, motion_id: str) -> shapes.MotionDetail:
    """One motion, from the configured sets or else from the stored matches (set None), with its stored matches."""
    found = ws.motions.get(motion_id)
    motion, spec = found if found else (ws.store.motion(motion_id), None)
    if motion is None:
        raise UserError(f"no motion {motion_id!r} (see 'arena motion list')")
    return {**shapes.motion_row(motion, spec),
            "matches": ws.store.count_matches(motion_id=motion_id)}


def motion_import(ws: Workspace, path: Path) -> MotionImport:
    """Copy a YAML or JSONL motion file into the workspace's motions/ folder and add it to [motions] sets in
    arena.toml (comments kept), so the workspace holds every motion it schedules even if the original
    moves or changes. Returns {set, path, motions, notes}.

    Checked before anything is written: the file (motions.library rules), a free name in motions/, and
    ids new to every configured set.
    """
    path = Path(path)
    motions = load_motion_file(path)  # as load_sets will read the copy: a missing language is "en"
    with editing(ws):
        known = {motion_id: spec for motion_id, (_, spec) in ws.motions.items()}
        ws.config, spec, copy = registration.add_motion_file(ws.config, path, motions, known, ws.store.motion)
        ws.motions = {**ws.motions, **{m.id: (m, spec) for m in motions}}
        ws.store.add_motions(motions)
        remember_sets(ws)
    others = sorted({m.language for m in motions} - {ws.config.arena.language})
    notes = [(f"{plural(sum(m.language in others for m in motions), 'motion')} in {', '.join(others)}, not the "
              f"workspace's language {ws.config.arena.language!r}: schedules leave them out")] if others else []
    return {"set": spec, "path": str(copy), "motions": len(motions), "notes": notes}
