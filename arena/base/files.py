"""Files people and servers read, replaced whole: a reader finds the old version or the new one, never a mix or a
part of one, and a full disk is an OSError naming the path, with nothing half-written.

A file is written beside itself under a temporary name, flushed to disk, then renamed over the old one (rename is
atomic). A folder (the published site) is built beside itself, then swapped for the old one in one step: Linux's
renameat2(RENAME_EXCHANGE) trades the two folders' names, so the path stays a plain folder (git, rsync and web
servers see nothing unusual) and is never missing. Where the system or filesystem cannot exchange (macOS, NFS), the
old folder is renamed aside and the new one renamed in: for that instant the path is missing, never mixed.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import sqlite3
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, TypeVar

from arena.base.errors import ArenaError

T = TypeVar("T")
# What a full disk is called where it shows: the errno of a write, and SQLite's codes for the same.
NO_SPACE: dict[int | None, str]  # by errno; looked up with None too (an error without one)
NO_SPACE = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
            errno.EFBIG: "file too large for the filesystem"}
_SQLITE_FULL = {13, 4874}  # SQLITE_FULL; SQLITE_IOERR_SHMSIZE: no room for the WAL's shared memory at open
_RENAME_EXCHANGE = 2  # renameat2(2)
_AT_FDCWD = -100


def no_space(exc: BaseException) -> bool:
    """Whether exc is a full disk: an OSError of NO_SPACE, or SQLite's 'database or disk is full'."""
    if isinstance(exc, OSError):
        return exc.errno in NO_SPACE
    return isinstance(exc, sqlite3.OperationalError) and (
        getattr(exc, "sqlite_errorcode", None) in _SQLITE_FULL or "database or disk is full" in str(exc))


def no_space_error(exc: BaseException, path: Path | str) -> OSError:
    """A full disk as an OSError naming path (the file or folder the person knows), whatever raised it."""
    number = exc.errno if isinstance(exc, OSError) and exc.errno in NO_SPACE else errno.ENOSPC
    return OSError(number, NO_SPACE[number], str(path))


def no_space_message(exc: BaseException) -> str:
    """The one line the command line prints for a full disk (no_space(exc)): the path, and what to do."""
    reason = NO_SPACE.get(getattr(exc, "errno", None), "no space left on device")
    where = getattr(exc, "filename", None) or ("" if isinstance(exc, OSError) else "the workspace database")
    return f"{where + ': ' if where else ''}{reason}; free some space and run the command again"


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Replace the file at path (a symlink's target) with data in one step: readers see the old bytes or the new."""
    with _replacing(path) as out:
        out.write(data)


def atomic_write_text(path: Path | str, text: str) -> None:
    """atomic_write_bytes of text in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def create_new(path: Path | str, data: bytes) -> bool:
    """Write a file at path with data in one step, only if there is none: whether it was written (False: a file
    was there, perhaps made a moment ago by another process, and is left as it is)."""
    target = Path(path)
    tmp, handle = _new_file(target)
    try:
        _write_synced(handle, data)
        try:
            os.link(tmp, target)  # fails if target exists: the check and the creation are one step
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            # A file system without hard links: created exclusively, then written (not in one step).
            _write_synced(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), data)
    except FileExistsError:
        return False
    except BaseException as exc:
        if no_space(exc):
            raise no_space_error(exc, path) from None
        raise
    finally:
        tmp.unlink(missing_ok=True)
    _sync(target.parent)
    return True


def _write_synced(handle: int, data: bytes) -> None:
    """Write data to the open file handle, flush it to disk and close it."""
    with os.fdopen(handle, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def atomic_copy(source: Path | str, path: Path | str) -> None:
    """Copy the file source to path in one step: a copy killed or out of space leaves no part of itself."""
    with open(source, "rb") as src, _replacing(path) as out:
        shutil.copyfileobj(src, out)


@contextmanager
def _replacing(path: Path | str) -> Iterator[BinaryIO]:
    """A new file beside path to write; once written, flushed to disk and renamed over path (its mode kept)."""
    target = Path(os.path.realpath(path))  # a symlinked file stays a symlink: its target is what gets replaced
    tmp, handle = _new_file(target)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if target.exists():
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if no_space(exc):
            raise no_space_error(exc, path) from None
        raise
    _sync(target.parent)


def _new_file(target: Path) -> tuple[Path, int]:
    """A hidden file of a fresh name beside target, opened for writing, with the mode a new file gets (umask)."""
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            if no_space(exc):
                raise no_space_error(exc, target) from None
            raise


def _sync(path: Path | str) -> None:
    """Flush a file's bytes, or a folder's entries (a rename), to disk."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


# --- folders ---------------------------------------------------------------------------------------------------

def replace_folder(path: Path | str, build: Callable[[Path], T], *,
                   keep: Callable[[str], bool] = lambda name: True) -> T:
    """Build a new folder beside path with build(folder), then put it at path in one step; build's result.

    The old folder's files that build did not write (someone's own, or pages of earlier builds) are kept,
    hard-linked into the new folder, but those keep(name) refuses (name relative, '/'-separated). Builds beside
    one path wait for each other (a lock on the parent folder); what a killed one left is removed by the next.
    A failed build (a full disk) leaves the old folder as it was and nothing of itself.
    """
    path = Path(os.path.realpath(path))  # a symlinked folder (site -> /var/www/html): its target is replaced
    if not path.name or os.path.ismount(path):
        raise ArenaError(f"{path}: a mount point cannot be replaced; publish to a folder inside it")
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(path.parent):
        _tidy(path)
        others = [name for name in _other_files(path) if keep(name)] if path.is_dir() else []
        new = _new_folder(path)
        try:
            result = build(new)
            _carry(path, new, others)
            _sync_tree(new)
            old = _swap(new, path)
        except BaseException as exc:
            shutil.rmtree(new, ignore_errors=True)
            if no_space(exc):
                raise no_space_error(exc, path) from None
            raise
        _sync(path.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return result


def tidy_beside(path: Path | str) -> None:
    """Remove what killed replace_folder builds of path left beside it, waiting for a build under way (the lock
    builds take): for a caller that finds nothing to build, so leftovers never wait for the next build."""
    path = Path(os.path.realpath(path))
    if path.name and path.parent.is_dir() and not os.path.ismount(path):
        with exclusive(path.parent):
            _tidy(path)


def _build_prefix(path: Path) -> str:
    return f".{path.name}.build-"


def _aside(path: Path) -> Path:
    """Where the old folder waits while the new one is renamed in, where the system cannot exchange them."""
    return path.with_name(f".{path.name}.aside")


@contextmanager
def exclusive(path: Path | str) -> Iterator[None]:
    """Hold an exclusive advisory lock (flock) on an existing file or folder for the with block: one holder at a
    time, the others wait; released when the process ends, however it ends. Not re-entrant: a second hold of
    the same path in one process waits for ever."""
    handle = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def _tidy(path: Path) -> None:
    """Remove what killed builds left beside path; a folder a kill left aside, with path missing, goes back."""
    aside = _aside(path)
    if aside.is_dir() and not path.exists():
        os.rename(aside, path)
    shutil.rmtree(aside, ignore_errors=True)
    for leftover in path.parent.iterdir():
        if leftover.name.startswith(_build_prefix(path)) and leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)


def _other_files(path: Path) -> list[str]:
    """Every file, link and empty folder under the folder path, relative; refused across a mount point, whose
    contents a hard link cannot carry."""
    found = []
    for top, folders, files in os.walk(path):
        for name in folders:
            if os.path.ismount(os.path.join(top, name)):
                raise ArenaError(f"{path}: {os.path.join(top, name)} is a mount point; publish to a folder of its own")
        found += [os.path.relpath(os.path.join(top, name), path) for name in files]
        found += [os.path.relpath(os.path.join(top, name), path) for name in folders
                  if os.path.islink(os.path.join(top, name))]
        if not files and not folders and top != str(path):
            found.append(os.path.relpath(top, path))
    return found


def _carry(old: Path, new: Path, names: list[str]) -> None:
    """Link the old folder's files into the new one where the new has nothing of that name."""
    for name in names:
        source, target = old / name, new / name
        if os.path.lexists(target) or any(p.is_file() for p in target.parents if p != new and new in p.parents):
            continue  # written anew, or a page now stands where the old folder had a folder of that name
        if source.is_dir() and not source.is_symlink():  # an empty folder
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target, follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed meanwhile by its owner
        except OSError:  # a filesystem or a file that takes no hard link: a copy
            shutil.copy2(source, target, follow_symlinks=False)


def _new_folder(path: Path) -> Path:
    """A fresh hidden folder beside path, with path's mode (or a new folder's, by the umask)."""
    while True:
        new = path.with_name(_build_prefix(path) + secrets.token_hex(4))
        try:
            os.mkdir(new, 0o777)
        except FileExistsError:
            continue
        except PermissionError:
            raise ArenaError(f"{path.parent}: cannot write here: the new {path.name} is built beside the old one "
                             "and swapped in, which needs write access to this folder") from None
        if path.is_dir():
            os.chmod(new, stat.S_IMODE(path.stat().st_mode))
        return new


def _sync_tree(folder: Path) -> None:
    """Flush every file and folder under folder to disk, so the swap never shows a folder of empty pages after
    a power cut: in one syncfs(2) of its filesystem where Linux has it (10,000 pages: 0.6 s, where an fsync per
    page, each a journal commit, took 6 s), else file by file."""
    if _syncfs(folder):
        return
    for top, _, files in os.walk(folder):
        for name in files:
            _sync(os.path.join(top, name))
        _sync(top)


def _syncfs(folder: Path) -> bool:
    """Flush the whole filesystem that holds folder (Linux syncfs); False where the system or its C library has
    no syncfs. A write-back error (Linux 5.8 on reports them) is an OSError naming folder."""
    syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None) if sys.platform.startswith("linux") else None
    if syncfs is None:
        return False
    handle = os.open(folder, os.O_RDONLY)
    try:
        if syncfs(handle) != 0:
            number = ctypes.get_errno()
            if number == errno.ENOSYS:  # a kernel or sandbox without the call
                return False
            raise OSError(number, os.strerror(number), str(folder))
    finally:
        os.close(handle)
    return True


def _swap(new: Path, path: Path) -> Path | None:
    """Put the folder new at path; where the old folder now is (to remove), or None if there was none."""
    if not os.path.lexists(path):
        os.rename(new, path)
        return None
    if _exchange(new, path):
        return new
    aside = _aside(path)
    os.rename(path, aside)  # from here to the next rename path is missing: never a mix of old and new
    os.rename(new, path)
    return aside


def _exchange(a: Path, b: Path) -> bool:
    """Trade the names of a and b in one step (Linux renameat2 RENAME_EXCHANGE); False where the system, its C
    library or the filesystem cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)  # glibc 2.28+, musl 1.2.2+
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    number = ctypes.get_errno()
    if number in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(number, os.strerror(number), str(b))
