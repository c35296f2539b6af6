"""Wiring a workspace: arena.toml's entries and judges built from the kind registries, its motion sets loaded
from the motion library (when their files changed), its database brought up to date. Everything else in the app
opens workspaces here.

The bottom of the app layer: it imports no other module of arena.app.
"""
from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from arena.workspace.config import Config, load_config
from arena.base.errors import UserError
from arena.base.files import exclusive
from arena.domain.records import Motion
from arena.store import DB_NAME, Store
from arena.workspace.folder import Workspace, build_kinds, init_workspace, open_store, template
from debaters.registry import DEBATERS
from judges.registry import JUDGES
from motions.library import load_set_map, set_digests

T = TypeVar("T")
Sets = dict[str, tuple[Motion, str]]  # each motion by id, with the spec of its set


class MotionSets(Mapping[str, tuple[Motion, str]]):
    """The motions of config's [motions] sets by id, each with its set's spec, in set order.

    The files are read only when one of them changed since the database last stored their motions (a digest of
    each file's bytes tells): otherwise the motions come from the database, and only once a command looks at
    them, so that opening a workspace stays fast however large its sets are.
    """

    def __init__(self, config: Config, path: Path) -> None:
        self._config, self._path = config, path
        self.digests = _naming_sets(config, lambda: set_digests(list(config.motions.sets), path))
        self._read: Sets | None = None  # the motions as read from the files, once they are
        self._motions: Sets | None = None  # as read from the files, or else from the database
        # the database and what it remembers of each set (its stored JSON), once unstored() has looked
        self._stored: tuple[Store | None, dict[str, Any]] | None = None

    @property
    def read_now(self) -> bool:
        """Whether the files were read (and what the database remembers is to be updated)."""
        return self._read is not None

    def unstored(self, store: Store | None) -> list[Motion]:
        """The motions store (None: a database still to be made) may lack: none while it holds every set as its
        file is now, else every one, read from the files at once (a set that does not load refuses before
        anything is written)."""
        if self._read is None:
            known = store.motion_sets() if store is not None else {}
            self._stored = store, known
            if store is not None and all(known.get(spec, {}).get("digest") == digest
                                         for spec, digest in self.digests.items()):
                return []
            self._read = self._motions = motion_sets(self._config, self._path)
        return [motion for motion, _ in self._read.values()]

    def record(self) -> dict[str, Any]:
        """What the database is to remember of the sets, once read (see _record)."""
        return _record(self.digests, self._looked()[1], self._all())

    def _looked(self) -> tuple[Store | None, dict[str, Any]]:
        """The database unstored() looked in, and what it remembers of each set."""
        if self._stored is None:
            raise RuntimeError("MotionSets: unstored() tells first whether the sets are to be read")
        return self._stored

    def _all(self) -> Sets:
        if self._motions is None:
            store, known = self._looked()
            if store is None:  # unstored(None) reads the files, which sets _motions
                raise RuntimeError("MotionSets: no database to read the motions from")
            motions = store.motions()
            self._motions = {motion_id: (motions[motion_id], spec) for spec in self.digests
                             for motion_id in known[spec]["ids"]}
        return self._motions

    def __getitem__(self, motion_id: str) -> tuple[Motion, str]:
        return self._all()[motion_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def open_workspace(path: Path) -> Workspace:
    """Open a workspace: arena.toml checked whole (kinds built, motion sets found and, where their files changed,
    read) before the database is touched."""
    path = Path(path)
    config = load_config(path)
    debaters, judges = kinds_of(config)
    motions = MotionSets(config, path)
    if not (path / DB_NAME).exists():
        motions.unstored(None)  # the first open stores them all: read before the database is even created
    store = open_store(path, config, motions.unstored)
    try:
        if motions.read_now:
            store.remember_motion_sets(motions.record())
    except BaseException:
        store.close()
        raise
    return Workspace(path, config, store, motions, debaters, judges)


def remember_sets(ws: Workspace) -> None:
    """After a set is added to arena.toml (and its motions to the database): the database remembers the sets
    as they now are, so the next open reads no file."""
    ws.store.remember_motion_sets(_record(MotionSets(ws.config, ws.path).digests, ws.store.motion_sets(), ws.motions))


def _record(digests: dict[str, str], known: dict[str, Any],
            motions: Mapping[str, tuple[Motion, str]]) -> dict[str, Any]:
    """What the database remembers of every set whose motions it stored, by spec: its file's digest then, and
    its motion ids in order; known, updated with the sets of digests as they are now."""
    ids: dict[str, list[str]] = {spec: [] for spec in digests}
    for motion_id, (_, spec) in motions.items():
        ids[spec].append(motion_id)
    return {**known, **{spec: {"digest": digest, "ids": ids[spec]} for spec, digest in digests.items()}}


def motion_sets(config: Config, path: Path) -> Sets:
    """Each motion of config's [motions] sets by id, with its set; a set that does not load names the key."""
    return _naming_sets(config, lambda: load_set_map(list(config.motions.sets), path))


def _naming_sets(config: Config, read: Callable[[], T]) -> T:
    """read(), its UserError led by where arena.toml names the sets."""
    try:
        return read()
    except UserError as exc:
        raise UserError(f"{config.where('motions.sets')}: {exc}") from None


def init(path: Path, config_text: str | None = None) -> Path:
    """`arena init`: create path/arena.toml and path/arena.db, the database stored as the first open would
    store it (entries, the motions of the configured sets and what it remembers of them), so a command refused
    right after init leaves arena.db byte-identical. Returns the path of arena.toml. config_text: by default
    the commented template, naming the debater and judge kinds installed now (plug-ins too).

    Motion sets that do not load refuse init before anything is written. Kinds are not built here: they
    come from the installation (plug-ins), not the workspace, and opening checks them every time.
    """
    path = Path(path)
    read: list[MotionSets] = []

    def load(config: Config) -> list[Motion]:
        read.append(MotionSets(config, path))
        return read[0].unstored(None)

    if config_text is None:
        config_text = template(DEBATERS.names(), JUDGES.names())
    created = init_workspace(path, config_text, load)
    store = Store(path / DB_NAME)
    try:
        store.remember_motion_sets(read[0].record())
    finally:
        store.close()
    return created


def kinds_of(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """The built kind of each entry and judge of config, by name (arena.workspace.folder.build_kinds). A debater that
    writes on the web needs the LLM cache: a parked match is replayed from it, so that the other side says again,
    unpaid, what the person was shown (UserError otherwise)."""
    debaters, judges = build_kinds(config, DEBATERS, JUDGES)
    web = [e.name for e in config.entries if e.on_the_web]
    if web and not config.llm.cache:
        raise UserError(f"{config.path.name}: [llm] cache = false, and entry {web[0]!r} writes on the web "
                        '(via = "web"): a match waiting for a person is continued by replaying it from the cache, '
                        "so that the other side says again what the person was shown; turn the cache on")
    return debaters, judges


_editing: set[Path] = set()  # the workspaces this process holds the edit lock of (editing is re-entrant)


@contextmanager
def editing(ws: Workspace) -> Iterator[None]:
    """One command at a time edits arena.toml, or decides against it what a concurrent edit could undo (removing
    an entry while a schedule names it): the block holds the workspace's edit lock and starts from arena.toml as
    it is now, read again under the lock, so that no edit is made on, or restores, bytes another has replaced.

    The lock is a flock on arena.db, which every edit's workspace has (SQLite's own locks are POSIX record locks,
    which flock leaves alone); a command waits for the one before it, and a killed holder's lock is released."""
    key = ws.path.resolve()
    if key in _editing:
        yield
        return
    with exclusive(ws.path / DB_NAME):
        _editing.add(key)
        try:
            fresh = load_config(ws.path)
            if fresh != ws.config:
                _refresh(ws, fresh)
            yield
        finally:
            _editing.discard(key)


def _refresh(ws: Workspace, config: Config) -> None:
    """ws as opening it now would make it: another command edited arena.toml since this one opened it."""
    sets_changed = config.motions != ws.config.motions
    reload(ws, config)
    if sets_changed:
        motions = MotionSets(config, ws.path)
        ws.store.add_motions(motions.unstored(ws.store))
        if motions.read_now:
            ws.store.remember_motion_sets(motions.record())
        ws.motions = motions


def reload(ws: Workspace, config: Config) -> None:
    """Carry an edit of arena.toml into the open workspace and the database at once, as opening would."""
    ws.config = config
    ws.debaters, ws.judges = kinds_of(config)
    ws.store.sync_entries(config.entries)
