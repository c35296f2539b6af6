"""Broken workspaces named (issue 49): a database that is not SQLite, an empty file where it should be, and a
workspace this user cannot write are refused with exit 2 (the CLI) and UserError (arena.open), naming the file
and what is wrong, with nothing written over them (arena/store/connection.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

import arena
from arena.base.errors import UserError
from tests.support.helpers import assert_user_error, entry, invoke, new_workspace, snapshot


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """The paths (files or folders) unwritable for the block, whoever runs the tests: without write permission,
    or, for root, whom permissions do not stop, with the immutable attribute (chattr +i), which stops root too."""
    root = os.geteuid() == 0
    modes = {path: path.stat().st_mode for path in paths}
    if root:
        if shutil.which("chattr") is None:
            pytest.fail("running as root, a read-only file needs chattr +i (e2fsprogs), which is not installed")
        made = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, text=True)
        if made.returncode:
            pytest.fail(f"running as root, a read-only file needs chattr +i, which failed here: {made.stderr}")
    else:
        for path in paths:
            path.chmod(modes[path] & ~0o222)
    try:
        yield
    finally:
        if root:
            subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
        for path, mode in modes.items():
            path.chmod(mode)


@pytest.fixture
def workspace(tmp_path) -> Path:
    return new_workspace(tmp_path / "ws", entries=[entry("sim-a"), entry("sim-b")], opened=True)


def refused(path: Path, *fragments: str) -> None:
    """`arena entry list` and arena.open on the workspace at path: exit 2 and UserError naming each fragment,
    with every file of the workspace as it was (no -wal, -shm or fresh database beside it)."""
    before = snapshot(path)
    assert_user_error(invoke("entry", "list", "-w", path), *fragments)
    with pytest.raises(UserError) as raised:
        arena.open(path)
    assert all(fragment in str(raised.value) for fragment in fragments), raised.value
    assert snapshot(path) == before


@pytest.mark.parametrize("content, problem", [
    (b"hello, I am not a database\n", "not an SQLite database (it begins b'hello, I am '), so not the "
                                      "workspace's database; nothing was written to it"),
    (b"", "an empty file (0 bytes) where the workspace's database should be"),
    # a good header over garbage: SQLite's own refusal, named
    (b"SQLite format 3\x00" + bytes(range(256)) * 20, "damaged, or not an SQLite database"),
])
def test_a_database_that_is_not_one_is_named(workspace, content, problem):
    (workspace / "arena.db").write_bytes(content)
    refused(workspace, f"{workspace / 'arena.db'}: {problem}")


def test_init_over_an_empty_database_writes_nothing(tmp_path):
    (tmp_path / "arena.db").write_bytes(b"")
    assert_user_error(invoke("init", tmp_path), f"{tmp_path / 'arena.db'}: an empty file (0 bytes)")
    assert sorted(os.listdir(tmp_path)) == ["arena.db"] and (tmp_path / "arena.db").read_bytes() == b""


def test_a_read_only_database_is_named(workspace):
    with read_only(workspace / "arena.db"):
        refused(workspace, f"{workspace / 'arena.db'}: cannot be written by this user (read-only)")


@pytest.mark.parametrize("database", [True, False])
def test_a_read_only_workspace_folder_is_named(workspace, database):
    if not database:  # a workspace whose first command would create arena.db
        (workspace / "arena.db").unlink()
    with read_only(workspace):
        refused(workspace, f"{workspace}: the workspace's folder cannot be written by this user (read-only)")
    assert (workspace / "arena.db").exists() == database
