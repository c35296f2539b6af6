"""Atomic writes (issue 24): whoever reads the published site, arena.toml or an imported motion file finds the old
version or the new one, never a mix or a part of one; a kill or a full disk leaves nothing half-written, and the
same command run again finishes the work. Kill tests drive real `arena` processes; full disks are real (a small
tmpfs, mounted as root)."""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.base import files
from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.base.errors import ArenaError
from arena.store import DB_NAME
from tests.support.helpers import entry, invoke, judge, new_workspace, play_round_robin, query, snapshot, workspace_toml

ROOT = Path(__file__).resolve().parents[3]
# The footer of every page but a match's: which publish wrote it (its time to the microsecond, in <time datetime>).
STAMP = re.compile(r'Debate Arena · <time datetime="([^"]+)">generated ')
RATER = re.compile(r"ratings from judge <code>(\w+)</code>")  # the index's header: whose verdicts rate


def arena(*args, **options) -> subprocess.CompletedProcess:
    """`arena <args>` as a process of its own."""
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, **options)


def start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena", *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})


def assert_full_disk(done: subprocess.CompletedProcess, path: Path) -> None:
    """Exit 1 and one line naming path, no traceback."""
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.splitlines()[-1] == (f"error: {path}: no space left on device; free some space and run the "
                                            "command again"), done.stderr
    assert "Traceback" not in done.stderr


def pages(site: Path) -> dict[str, str]:
    """Each page of the site (relative path) → the publish that wrote it ("" for a match page, which shows no
    time: an unchanged match keeps its page from one publish to the next), checking that the page is whole."""
    out = {}
    for page in sorted(site.rglob("*.html")):
        name = page.relative_to(site).as_posix()
        text = page.read_text(encoding="utf-8")
        assert text.rstrip().endswith("</html>"), f"{page} is cut short ({len(text)} characters)"
        stamp = STAMP.search(text)
        assert stamp or name.startswith("matches/"), f"{name} does not say when it was generated"
        out[name] = stamp.group(1) if stamp else ""
    return out


def one_publish(site: Path) -> str:
    """The one publish every page of the site that says when it was generated comes from."""
    stamps = set(pages(site).values()) - {""}
    assert len(stamps) == 1, f"pages of {len(stamps)} publishes side by side"
    return stamps.pop()


def match_pages(site: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (site / "matches").iterdir()}


def written_since(folder: Path, since_ns: int) -> int:
    """Files under folder (the database aside) modified since since_ns."""
    count = 0
    for top, _, names in os.walk(folder):
        for name in names:
            if not name.startswith(DB_NAME):
                try:
                    count += os.stat(os.path.join(top, name)).st_mtime_ns >= since_ns
                except FileNotFoundError:  # renamed or removed while we looked
                    pass
    return count


def kill_after(proc: subprocess.Popen, folder: Path, since_ns: int, count: int) -> int | None:
    """SIGKILL proc once it has written count files under folder; how many it had written (None: it finished)."""
    while proc.poll() is None:
        written = written_since(folder, since_ns)
        if written >= count:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return written
        time.sleep(0.002)
    return None


PLAYED = {"motions": ["builtin:en"], "arena": {"judge_runs": 1},
          "entries": [entry(f"e{k}", strength=k / 4) for k in range(8)], "judges": [judge("j")]}
# Whose verdicts rate: j, or k, which has none. Every page shows it, a match page its score under that judge.
RATED_BY = {"j": PLAYED, "k": {**PLAYED, "judges": [judge("k"), judge("j")]}}


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A played workspace of 56 simulated matches (eight entries, one judge): a publish writes ~140 files."""
    path = new_workspace(tmp_path_factory.mktemp("atomic") / "ws", **PLAYED)
    play_round_robin(path)
    return path


def rate_by(workspace: Path, judge_name: str) -> None:
    """Make judge_name the rating judge (RATED_BY): the next publish rewrites every page."""
    (workspace / "arena.toml").write_text(workspace_toml(**RATED_BY[judge_name]), encoding="utf-8")


@pytest.fixture
def workspace(played, tmp_path) -> Path:
    return Path(shutil.copytree(played, tmp_path / "ws"))


def add_own_files(site: Path) -> dict[str, bytes]:
    """Files of the site's owner that no publish writes, which every publish keeps."""
    (site / "CNAME").write_text("arena.example.org\n")
    (site / "own").mkdir()
    (site / "own" / "notes.txt").write_text("our notes\n")
    return {"CNAME": b"arena.example.org\n", "own/notes.txt": b"our notes\n"}


def assert_kept(site: Path, own: dict[str, bytes]) -> None:
    assert {name: (site / name).read_bytes() for name in own} == own


# --- arena publish ---------------------------------------------------------------------------------------------

class Reader(threading.Thread):
    """Reads pages of the site over and over, as a web server would, noting every page it found cut short."""

    def __init__(self, site: Path, names: list[str]):
        super().__init__(daemon=True)
        self.site, self.names, self.reads, self.bad, self.stop = site, names, 0, [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for name in self.names:
                try:
                    text = (self.site / name).read_text(encoding="utf-8")
                except (FileNotFoundError, UnicodeDecodeError) as exc:
                    self.bad.append(f"{name}: {exc}")
                    continue
                self.reads += 1
                if not text.rstrip().endswith("</html>"):
                    self.bad.append(f"{name}: {len(text)} characters")
            time.sleep(0.002)  # a reader, not a load: leave the publish the CPU


@pytest.mark.slow
def test_a_publish_with_nothing_new_removes_what_a_killed_one_left(workspace):
    assert invoke("publish", "-w", workspace).exit_code == 0
    site = workspace / "site"
    before = one_publish(site)
    left = [workspace / ".site.build-0a1b2c3d", workspace / ".site.aside"]  # a build, and an old site mid-removal
    for folder in left:
        (folder / "matches").mkdir(parents=True)
        (folder / "matches" / "m00001.html").write_text("an old page")
    done = invoke("publish", "-w", workspace)
    assert done.exit_code == 0 and done.output.strip() == str(site / "index.html")
    assert one_publish(site) == before  # nothing new: the site as it was
    assert not any(folder.exists() for folder in left)


def test_a_publish_killed_mid_write_leaves_one_whole_site_and_the_next_publish_cleans_up(workspace, tmp_path):
    """Each publish is made to rewrite every page (the rating judge changes, which every page shows), then killed
    after it wrote some of them: a reader finds the old site or the new one, its match pages those of the
    publish its other pages come from."""
    site = workspace / "site"
    references = {}  # rating judge → the match pages a publish writes
    for name in RATED_BY:
        rate_by(workspace, name)
        assert invoke("publish", "-w", workspace, "--out", tmp_path / name).exit_code == 0
        references[name] = match_pages(tmp_path / name)
    assert invoke("publish", "-w", workspace).exit_code == 0
    own = add_own_files(site)
    first = pages(site)
    stamp = one_publish(site)
    total = sum(p.is_file() for p in site.rglob("*")) - len(own)  # the files a publish writes
    reader = Reader(site, ["index.html", "matches.html", *sorted(n for n in first if n.startswith("matches/"))[:5]])
    reader.start()
    mid_write = 0
    for count in (1, total // 4, total // 2, 3 * total // 4, total - 2):
        rate_by(workspace, "j" if RATER.search((site / "index.html").read_text()).group(1) == "k" else "k")
        since = time.time_ns()
        written = kill_after(start("publish", "-w", workspace), workspace, since, count)
        # What a reader sees now: every page whole, all of one publish (the last one, or this one if the kill
        # came after its swap), the same pages, and the owner's files.
        assert pages(site).keys() == first.keys()
        now = one_publish(site)
        assert now == stamp or written is None or written >= total - 2, (count, written)  # swapped in before the kill
        assert match_pages(site) == references[RATER.search((site / "index.html").read_text()).group(1)]
        stamp = now
        assert_kept(site, own)
        mid_write += written is not None and 0 < written < total
    reader.stop.set()
    reader.join()
    assert mid_write >= 4  # the kills did land while pages were being written
    assert reader.reads > 100 and reader.bad == []

    rate_by(workspace, "j" if RATER.search((site / "index.html").read_text()).group(1) == "k" else "k")
    done = invoke("publish", "-w", workspace)
    assert done.exit_code == 0, done.output
    assert done.output.strip() == str(site / "index.html")
    assert pages(site).keys() == first.keys() and one_publish(site) > stamp
    assert_kept(site, own)
    assert site.is_dir() and not site.is_symlink()  # still a plain folder for git, rsync and web servers
    assert sorted(n for n in os.listdir(workspace) if not n.startswith(DB_NAME)) == ["arena.toml", "site"]


def test_publish_swaps_the_site_whole_and_keeps_what_it_did_not_write(played, tmp_path):
    site = tmp_path / "www" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text("<html>an older site</html>\n")
    own = add_own_files(site)
    (site / "own" / "empty").mkdir()
    os.symlink("own/notes.txt", site / "latest")
    folder = site.stat().st_ino
    done = invoke("publish", "-w", played, "--out", site)
    assert done.exit_code == 0, done.output
    assert site.stat().st_ino != folder and one_publish(site)  # a new folder, written whole
    assert_kept(site, own)
    assert (site / "own" / "empty").is_dir() and os.readlink(site / "latest") == "own/notes.txt"
    assert os.listdir(site.parent) == ["site"]  # no build folder left beside it


def test_a_symlinked_site_folder_stays_a_link_to_the_folder_it_names(played, tmp_path):
    served = tmp_path / "var" / "www"
    served.mkdir(parents=True)
    (served / "CNAME").write_text("x\n")
    (tmp_path / "site").symlink_to(served)
    assert invoke("publish", "-w", played, "--out", tmp_path / "site").exit_code == 0
    assert (tmp_path / "site").is_symlink() and (tmp_path / "site").resolve() == served
    assert one_publish(served) and (served / "CNAME").read_text() == "x\n"


def test_publish_refuses_an_out_folder_that_holds_the_workspace(played):
    before = snapshot(played)
    for out in (played, played.parent):
        done = invoke("publish", "-w", played, "--out", out)
        assert done.exit_code == 2 and f"--out {out}: holds the workspace" in done.output
    assert snapshot(played) == before


def test_a_fresh_publish_keeps_nothing_of_the_old_site(played, tmp_path):
    """keep_others=False, as `arena demo` publishes (it used to delete the site folder first)."""
    site = tmp_path / "site"
    site.mkdir()
    add_own_files(site)
    ws = open_workspace(played)
    try:
        assert app.publish(ws, site, keep_others=False) == site / "index.html"
    finally:
        ws.close()
    assert not (site / "CNAME").exists() and not (site / "own").exists() and one_publish(site)


# --- arena.base.files.replace_folder: leftovers, the fallback without an exchange, failures -------------------------

def build_pages(stamp: str, names=("index.html", "matches/m1.html")):
    def build(folder: Path) -> str:
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(f'<footer>Debate Arena · <time datetime="{stamp}">generated {stamp}</time></footer></html>\n')
        return stamp
    return build


def test_the_next_replace_removes_what_a_killed_one_left(tmp_path):
    site = tmp_path / "site"
    files.replace_folder(site, build_pages("1"))
    (tmp_path / ".site.build-0badc0de" / "matches").mkdir(parents=True)  # a build killed halfway
    (tmp_path / ".site.build-0badc0de" / "matches" / "m1.html").write_text("<foot")
    (tmp_path / ".site.aside").mkdir()  # an old site put aside, then the new one renamed in, before the kill
    (tmp_path / ".other").mkdir()  # not ours: left alone
    assert files.replace_folder(site, build_pages("2")) == "2"
    assert one_publish(site) == "2"
    assert sorted(os.listdir(tmp_path)) == [".other", "site"]


def test_without_an_exchange_the_old_folder_goes_aside_and_a_kill_between_is_undone(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_exchange", lambda a, b: False)  # macOS, NFS: no renameat2(RENAME_EXCHANGE)
    site = tmp_path / "site"
    files.replace_folder(site, build_pages("1"))
    own = add_own_files(site)
    files.replace_folder(site, build_pages("2"))
    assert one_publish(site) == "2" and sorted(os.listdir(tmp_path)) == ["site"]
    assert_kept(site, own)
    os.rename(site, tmp_path / ".site.aside")  # killed between its two renames: the site is missing
    files.replace_folder(site, build_pages("3"))
    assert one_publish(site) == "3"
    assert_kept(site, own)  # the site put aside came back, with the owner's files, before the swap
    assert sorted(os.listdir(tmp_path)) == ["site"]


def test_a_failed_build_leaves_the_old_folder_as_it_was_and_nothing_of_itself(tmp_path):
    site = tmp_path / "site"
    files.replace_folder(site, build_pages("1"))
    before = snapshot(site)

    def failing(folder: Path) -> None:
        build_pages("2")(folder)
        raise RuntimeError("the renderer broke")

    with pytest.raises(RuntimeError):
        files.replace_folder(site, failing)
    assert snapshot(site) == before and os.listdir(tmp_path) == ["site"]


def test_a_parent_folder_it_cannot_write_is_one_line_naming_it(tmp_path, monkeypatch):
    """As a user who may write the served folder but not the one holding it (we run as root: the refusal is
    played by os.mkdir)."""
    site = tmp_path / "site"
    files.replace_folder(site, build_pages("1"))
    mkdir = os.mkdir

    def refused(path, *args):
        if Path(path).name.startswith(".site.build-"):
            raise PermissionError(13, "Permission denied", str(path))
        return mkdir(path, *args)

    monkeypatch.setattr(os, "mkdir", refused)
    with pytest.raises(ArenaError, match=f"^{tmp_path}: cannot write here: the new site is built beside the old"):
        files.replace_folder(site, build_pages("2"))
    assert one_publish(site) == "1"


def test_the_new_folder_has_the_old_ones_mode(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    site.chmod(0o751)
    files.replace_folder(site, build_pages("1"))
    assert site.stat().st_mode & 0o777 == 0o751


# --- arena.toml and motion files -------------------------------------------------------------------------------

def test_atomic_write_replaces_a_symlinks_target_and_keeps_the_mode(tmp_path):
    real = tmp_path / "dotfiles" / "arena.toml"
    real.parent.mkdir()
    real.write_text("old\n")
    real.chmod(0o640)
    (tmp_path / "arena.toml").symlink_to(real)
    files.atomic_write_text(tmp_path / "arena.toml", "new\n")
    assert (tmp_path / "arena.toml").is_symlink() and real.read_text() == "new\n"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(real.parent)) == ["arena.toml"]  # no temporary file left


def test_entry_add_keeps_a_symlinked_arena_toml_a_link(tmp_path):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=[entry("a"), entry("b")])
    real = tmp_path / "config" / "arena.toml"
    real.parent.mkdir()
    shutil.move(path / "arena.toml", real)
    (path / "arena.toml").symlink_to(real)
    done = invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", path)
    assert done.exit_code == 0, done.output
    assert (path / "arena.toml").is_symlink() and 'name = "c"' in real.read_text()


# A wrapper of the command line that SIGKILLs itself just after it creates a file in a folder (argv[1]) for writing:
# a kill mid-copy, at the moment the issue met (a 0-byte file).
KILLED_ONCE_CREATED = """
import os, signal, sys, threading
folder = sys.argv.pop(1)

def kill_once_there(path):
    while not os.path.exists(path):
        pass
    os.kill(os.getpid(), signal.SIGKILL)

def hook(event, args):
    if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    writing = (args[1] and set(args[1]) & set("wxa+")) or (args[2] and args[2] & (os.O_WRONLY | os.O_RDWR))
    if writing and os.path.dirname(path) == folder:
        threading.Thread(target=kill_once_there, args=(path,), daemon=True).start()

sys.addaudithook(hook)
from arena.app.cli import main
main()
"""


def motion_file(path: Path, count: int, words: int = 8) -> Path:
    lines = "".join(f'  - {{id: big{k:05d}, text: "{" ".join(["motion"] * words)} {k}", category: policy}}\n'
                    for k in range(count))
    path.write_text(f"motions:\n{lines}", encoding="utf-8")
    return path


def test_a_motion_import_killed_mid_copy_can_be_run_again(tmp_path):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=[entry("a"), entry("b")], opened=True)
    (path / "motions").mkdir()
    source = motion_file(tmp_path / "mine.yaml", 200)
    config = (path / "arena.toml").read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILLED_ONCE_CREATED, str(path / "motions"), "motion", "import",
                             str(source), "-w", str(path)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    copy = path / "motions" / "mine.yaml"
    assert not copy.exists() or copy.read_bytes() == source.read_bytes()  # never part of the file
    assert (path / "arena.toml").read_bytes() == config
    again = invoke("motion", "import", source, "-w", path)
    assert again.exit_code == 0, again.output
    assert copy.read_bytes() == source.read_bytes()
    assert query(path, "SELECT COUNT(*) FROM motions WHERE id LIKE 'big%'") == [(200,)]


# --- a full disk -----------------------------------------------------------------------------------------------

@contextmanager
def small_disk(path: Path, size: str):
    """A tmpfs of size mounted at path: a disk that fills for real."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def fill(disk: Path, leave: int = 0) -> Path:
    """A file taking every byte of the disk but `leave`; delete it to make room."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while out.write(b"\0" * 4096):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


@contextmanager
def held_open(path: Path):
    """The workspace's database open in this process, as `arena serve` holds it: the WAL's shared memory is there
    already, so the next command can open the workspace on a full disk and meet it where it writes."""
    db = sqlite3.connect(path / DB_NAME)
    db.execute("SELECT COUNT(*) FROM motions").fetchall()
    try:
        yield
    finally:
        db.close()


@pytest.mark.slow
def test_publish_to_a_full_disk_keeps_the_old_site_and_finishes_once_there_is_room(workspace, tmp_path):
    with small_disk(tmp_path / "disk", "16m") as disk:
        site = disk / "site"
        assert invoke("publish", "-w", workspace, "--out", site).exit_code == 0
        own = add_own_files(site)
        before, stamp = pages(site), one_publish(site)
        play_round_robin(workspace)  # another 56 matches: the next site has more pages than the disk has room
        filler = fill(disk, leave=64 * 1024)
        done = arena("publish", "-w", workspace, "--out", site)
        assert_full_disk(done, site)
        assert pages(site) == before and one_publish(site) == stamp  # the old site, whole
        assert sorted(os.listdir(disk)) == ["filler", "site"]  # nothing of the failed build is left
        filler.unlink()
        again = arena("publish", "-w", workspace, "--out", site)
        assert again.returncode == 0, again.stderr
        assert pages(site).keys() > before.keys() and one_publish(site) > stamp
        assert_kept(site, own)
        assert sorted(os.listdir(disk)) == ["site"]


@pytest.mark.slow
def test_arena_toml_edits_on_a_full_disk_change_nothing_and_finish_once_there_is_room(tmp_path):
    with small_disk(tmp_path / "disk", "1m") as disk:
        path = new_workspace(disk / "ws", motions=["builtin:en"], entries=[entry("a"), entry("b")], opened=True)
        with held_open(path):
            config = (path / "arena.toml").read_bytes()
            filler = fill(disk)
            add = ("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", path)
            assert_full_disk(arena(*add), path / "arena.toml")
            retire = ("entry", "retire", "a", "-w", path)
            assert_full_disk(arena(*retire), path / "arena.toml")
            assert (path / "arena.toml").read_bytes() == config
            assert not [n for n in os.listdir(path) if n.endswith(".tmp")]  # no temporary file left
            filler.unlink()
            assert arena(*add).returncode == 0 and arena(*retire).returncode == 0
        listed = invoke("entry", "list", "--format", "json", "-w", path)
        assert [(e["name"], e.get("retired", False)) for e in json.loads(listed.output)] == \
            [("a", True), ("b", False), ("c", False)]


@pytest.mark.slow
def test_a_motion_import_on_a_full_disk_writes_nothing_and_finishes_once_there_is_room(tmp_path):
    source = motion_file(tmp_path / "mine.yaml", 2000)  # ~200 kB: more than the disk has left
    with small_disk(tmp_path / "disk", "1m") as disk:
        path = new_workspace(disk / "ws", motions=["builtin:en"], entries=[entry("a"), entry("b")], opened=True)
        (path / "motions").mkdir()
        with held_open(path):
            config = (path / "arena.toml").read_bytes()
            filler = fill(disk, leave=16 * 1024)
            done = arena("motion", "import", source, "-w", path)
            assert_full_disk(done, path / "motions" / "mine.yaml")
            assert os.listdir(path / "motions") == []  # neither the copy nor a part of it
            assert (path / "arena.toml").read_bytes() == config
            filler.unlink()
            again = arena("motion", "import", source, "-w", path)
            assert again.returncode == 0, again.stderr
        assert (path / "motions" / "mine.yaml").read_bytes() == source.read_bytes()
        assert query(path, "SELECT COUNT(*) FROM motions WHERE id LIKE 'big%'") == [(2000,)]


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])  # in worker processes the full disk is the run's error all the same
def test_a_run_on_a_full_disk_stops_with_one_line_and_resumes_every_match_once_there_is_room(tmp_path, workers):
    with small_disk(tmp_path / "disk", "1m") as disk:
        path = new_workspace(disk / "ws", motions=["builtin:en"], arena={"judge_runs": 1},
                             entries=[entry(f"e{k}", strength=k / 4) for k in range(4)], judges=[judge("j")])
        assert arena("schedule", "--format", "round-robin", "--rounds", "2", "-w", path).returncode == 0
        done = arena("run", "--concurrency", "2", "--workers", workers, "-w", path)
        assert_full_disk(done, path / DB_NAME)
        statuses = dict(query(path, "SELECT status, COUNT(*) FROM matches GROUP BY status"))
        assert "failed" not in statuses and statuses.get("scheduled", 0) > 0  # stopped: nothing blamed on a match
        assert query(path, "PRAGMA integrity_check") == [("ok",)]
        subprocess.run(["mount", "-o", "remount,size=32m", str(disk)], check=True)
        again = arena("run", "--concurrency", "2", "-w", path)
        assert again.returncode == 0, again.stderr
        assert query(path, "SELECT status, COUNT(*) FROM matches GROUP BY status") == [("done", 24)]
        assert query(path, "SELECT COUNT(*) FROM speeches") == [(6 * 24,)]
        assert query(path, "SELECT COUNT(*) FROM verdicts") == [(24,)]


@pytest.mark.slow
def test_init_on_a_full_disk_says_so_and_runs_again_once_there_is_room(tmp_path):
    with small_disk(tmp_path / "disk", "512k") as disk:
        filler = fill(disk)
        done = arena("init", disk / "ws")
        assert_full_disk(done, disk / "ws" / DB_NAME)
        assert not (disk / "ws" / "arena.toml").exists()
        filler.unlink()
        again = arena("init", disk / "ws")
        assert again.returncode == 0, again.stderr
        assert (disk / "ws" / "arena.toml").read_text().startswith("# Debate Arena workspace")
        assert invoke("motion", "list", "-w", disk / "ws").exit_code == 0


def test_no_space_knows_a_full_disk_when_it_sees_one():
    assert files.no_space(OSError(errno.ENOSPC, "No space left on device"))
    assert files.no_space(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not files.no_space(OSError(errno.EACCES, "Permission denied"))
    assert files.no_space(sqlite3.OperationalError("database or disk is full"))
    assert not files.no_space(sqlite3.OperationalError("database is locked"))
    assert files.no_space_message(OSError(errno.EDQUOT, "x", "/srv/site")) == \
        "/srv/site: disk quota exceeded; free some space and run the command again"
