"""The manifest of a published site: what each file of the last publish showed (its key) and a digest of its bytes,
so that the next publish links what has not changed rather than writing it again, and a publish with nothing new
leaves the site as it is. Standard library only: checking that nothing changed costs no import of the renderer or
the rating code.

A file whose bytes differ from the manifest's digest (edited, even in place with its times put back; replaced;
removed) is never taken for unchanged. The manifest is served with the site, so it names each file by a digest of
its name: it says nothing the pages do not. It is read only when it is a regular file within MAX_MANIFEST_BYTES.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Mapping, NotRequired, Sequence, TypedDict

MANIFEST = ".arena-publish.json"  # in the site folder, written last by each publish, swapped in with its pages
VERSION = 2  # 1 named each file by inode, size and time, which an edit in place can keep: read as no manifest
MAX_MANIFEST_BYTES = 64 << 20  # about 500,000 files

# What the manifest records of a file: [its key, a digest of its bytes (None: it was no regular file)], a list as
# JSON gives it back.
Record = list[str | None]


class Manifest(TypedDict):
    """The manifest: the version of its shape (none in the empty one read where there is none), the state the site
    was made from, and each file's record by the digest of its name."""

    version: NotRequired[int]
    state: str
    files: dict[str, Record]


@functools.lru_cache(maxsize=None)
def page_name(folder: str, key: str) -> str:
    """folder/<key>.html with key made safe for a file name; a changed key gets a hash so keys never collide."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key).lstrip(".") or "_"
    if safe != key:
        safe = f"{safe[:60]}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    return f"{folder}/{safe}.html"


def unchanged(site: Path, state: str, *, others: bool = True, withdrawn: Sequence[str] = ()) -> bool:
    """Whether the site is what a publish of state would write (the time it was generated aside): its manifest
    records state, every file it lists is there as that publish left it, no page of withdrawn (those a publish
    of state removes, the embargoed matches', which the manifest does not list) is there, and (others False) no
    file it did not write either."""
    site = Path(site)
    manifest = read(site)
    if not state or manifest["state"] != state or any(os.path.lexists(site / name) for name in withdrawn):
        return False
    listed = manifest["files"]
    found = 0
    for name, path in _files(site):
        record = listed.get(name_digest(name))
        if record is not None:
            if digest(path) != record[1]:
                return False
            found += 1
        elif not others and name != MANIFEST:
            return False
    return found == len(listed)


def seen(manifest: Manifest, name: str) -> Record | None:
    """What the manifest says of the file name: [key, digest of its bytes], or None."""
    return manifest["files"].get(name_digest(name))


def name_digest(name: str) -> str:
    """How the manifest names a file."""
    return hashlib.blake2b(name.encode(), digest_size=12).hexdigest()


def link(source: Path, target: Path, record: Sequence[str | None]) -> bool:
    """Hard-link source to target if source holds the bytes the manifest saw (record: its key, then digest);
    whether it did."""
    if digest(source) != record[1]:
        return False
    try:
        os.link(source, target)
    except OSError:  # a filesystem without hard links, or the file's link limit: the caller writes it instead
        return False
    return True


def digest(path: Path | str) -> str | None:
    """A digest of a regular file's bytes, which any edit changes whatever its times say; None for a file missing
    or not regular (a link, a FIFO: opened without waiting, never read)."""
    handle = _open_regular(path)
    if handle is None:
        return None
    hashed = hashlib.blake2b(digest_size=16)
    with os.fdopen(handle, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            hashed.update(chunk)
    return hashed.hexdigest()


def _open_regular(path: Path | str, most: int | None = None) -> int | None:
    """A descriptor of path opened for reading if it is a regular file (of at most `most` bytes), else None."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    st = os.fstat(handle)
    if not stat.S_ISREG(st.st_mode) or (most is not None and st.st_size > most):
        os.close(handle)
        return None
    return handle


def write(site: Path, keys: Mapping[str, str], state: str) -> None:
    """Write the manifest of the files just written under site (keys: name → key, "" for a file written every
    time), with the state they were made from."""
    files = sorted((name_digest(name), [key, digest(site / name)]) for name, key in keys.items())
    manifest: Manifest = {"version": VERSION, "state": state, "files": dict(files)}
    (site / MANIFEST).write_text(json.dumps(manifest, separators=(",", ":")), encoding="utf-8")


def read(site: Path) -> Manifest:
    """The manifest of the site; an empty one where there is none this version wrote (a file of another shape is
    someone else's, and one that is no regular file or past MAX_MANIFEST_BYTES is not read)."""
    empty: Manifest = {"state": "", "files": {}}
    handle = _open_regular(Path(site) / MANIFEST, MAX_MANIFEST_BYTES)
    if handle is None:
        return empty
    try:
        with os.fdopen(handle, "rb") as file:
            manifest = json.loads(file.read().decode("utf-8"))
    except (OSError, ValueError):
        return empty
    if not (isinstance(manifest, dict) and manifest.get("version") == VERSION and isinstance(manifest.get("state"), str)
            and isinstance(manifest.get("files"), dict)
            and all(isinstance(r, list) and len(r) == 2 for r in manifest["files"].values())):
        return empty
    return {"version": manifest["version"], "state": manifest["state"], "files": manifest["files"]}  # all it reads


def _files(site: Path) -> list[tuple[str, str]]:
    """(name relative and '/'-separated, path) of every file and link under site."""
    out, folders = [], [("", str(site))]
    while folders:
        prefix, folder = folders.pop()
        try:
            found = list(os.scandir(folder))
        except FileNotFoundError:  # removed meanwhile (another publish's swap): not the site its manifest lists
            continue
        for item in found:
            if item.is_dir(follow_symlinks=False):
                folders.append((f"{prefix}{item.name}/", item.path))
            else:
                out.append((prefix + item.name, item.path))
    return out
