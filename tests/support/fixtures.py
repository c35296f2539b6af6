"""Build once, copy cheaply: workspaces (a played tournament, the demo and its site, an `arena init`'d folder) built
once per test process and handed to each test as a private copy, so that no test sees another's writes.

The session fixture `builds` (imported into tests/conftest.py) keeps the built folders of one test process by key;
under pytest-xdist each worker builds its own on first use. A test module names what it needs with a builder:

    def build_played(path: Path) -> None:          # builds a workspace in path, and closes it
        new_workspace(path, ...); play_round_robin(path)

    @pytest.fixture
    def played(builds, tmp_path) -> Path:
        return builds.copy("ballots:played", build_played, tmp_path / "ws").path   # a private copy

    @pytest.fixture(scope="module")
    def site(builds) -> Path:
        return builds.get("demo:en", demo_workspace).path / "site"                 # shared: read it only

A build is checked once, when it is made: its SQLite databases are whole in their own file (the builder closed
every connection: no -wal file is left to copy), and no file holds the folder's absolute path, so a copy is the
same workspace in another place. A build is checked before each use, and once more at the end of the session, to be
as built (the size and mtime of every file): a test that writes into a shared one fails the next test's setup (or
the session's teardown), naming the key.
"""
from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

Builder = Callable[[Path], Any]  # builds a workspace in the folder given (which does not exist yet); may return a value


@dataclass(frozen=True)
class Built:
    path: Path  # the built folder, or a test's private copy of it
    value: Any  # what the builder returned (match ids, ...): the same for every copy


def private_copy(source: Path, dest: Path) -> Path:
    """A copy of the folder source at dest (which must not exist yet): every file, with its bytes and mtime."""
    shutil.copytree(source, dest, symlinks=True)
    return dest


def _fingerprint(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _settle_databases(folder: Path, key: str) -> None:
    """Every SQLite database of the folder whole in its own file: a -wal file left by a connection still open is a
    builder's mistake (a copy would take a database in the middle of its journal); an empty one is removed."""
    for wal in folder.rglob("*-wal"):
        db = wal.with_name(wal.name[:-len("-wal")])
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()  # the last connection closed: SQLite removes the -wal and -shm files
        if wal.exists():
            raise AssertionError(f"build {key!r}: {db.name} is still open (its {wal.name} remains): close every "
                                 "workspace and connection the builder opened")


def _check_no_absolute_path(folder: Path, key: str) -> None:
    """No file of the build holds its folder's absolute path (a copy elsewhere would point back at the build)."""
    needles = {str(folder).encode(), str(folder.resolve()).encode()}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for needle in needles:
                if needle in data:
                    raise AssertionError(f"build {key!r}: {path.relative_to(folder)} holds the build's absolute "
                                         f"path {needle.decode()}: a copy of it would not be a workspace of its own")


@dataclass(frozen=True)
class Recording:
    """What a fake server received while a build was made (its requests, in arrival order), for the tests of the
    build's copies to read as they read a fake server's record (`.requests`, `.bodies`)."""
    requests: tuple

    @property
    def bodies(self) -> list[dict]:
        return [r.body for r in self.requests]

    @classmethod
    def of(cls, server) -> "Recording":
        return cls(tuple(server.requests))


class Builds:
    """Built folders of one test process, by key (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[str, Built] = {}
        self._failed: dict[str, BaseException] = {}
        self._fingerprints: dict[str, dict[str, tuple[int, int]]] = {}

    def _build(self, key: str, build: Builder, name: str) -> Built:
        """The build of key, made on first use and checked to be as it was made; a build that failed fails every
        test that asks for it, as a module fixture's error does, without being tried again."""
        if key in self._failed:
            raise self._failed[key]
        built = self._built.get(key)
        if built is None:
            folder = self.root / key.replace("/", "_").replace(":", "-") / name
            folder.parent.mkdir(parents=True)
            try:
                value = build(folder)
                _settle_databases(folder, key)
                _check_no_absolute_path(folder, key)
            except BaseException as exc:
                self._failed[key] = exc
                raise
            built = self._built[key] = Built(folder, value)
            self._fingerprints[key] = _fingerprint(folder)
        self.check(key)
        return built

    def check(self, key: str) -> None:
        """The build of key is as it was made (the size and mtime of every file)."""
        built = self._built[key]
        if _fingerprint(built.path) != self._fingerprints[key]:
            raise AssertionError(f"build {key!r} ({built.path}) was written by a test: a test that writes takes a "
                                 "private copy (builds.copy), not the shared build (builds.get)")

    def get(self, key: str, build: Builder, name: str = "ws") -> Built:
        """The build of key, shared by every test of the process that asks for it: read it, never write into it
        (checked on each use and at the end of the session). build(folder) makes it on first use, in a folder
        called name."""
        return self._build(key, build, name)

    def copy(self, key: str, build: Builder, dest: Path, name: str = "ws") -> Built:
        """A private copy at dest of the build of key (made on first use by build(folder), in a folder called name)."""
        built = self._build(key, build, name)
        return Built(private_copy(built.path, Path(dest)), built.value)


@pytest.fixture(scope="session")
def builds(tmp_path_factory) -> Iterator[Builds]:
    """The built workspaces of this test process (tests/support/fixtures.py): builds.copy(key, builder, dest) for a test's
    private copy, builds.get(key, builder) for a shared one that tests only read."""
    built = Builds(tmp_path_factory.mktemp("built"))
    yield built
    for key in built._built:  # the last test to use a shared build wrote nothing into it either
        built.check(key)
