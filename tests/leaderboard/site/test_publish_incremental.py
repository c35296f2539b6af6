"""Publishing big tournaments (issue 26): the matches list in static pages linked to each other; a publish that
rewrites only what changed (an unchanged match's page is the old site's file, hard-linked), and nothing at all
when nothing changed, yet gives the bytes a publish from scratch gives; the [site] settings of the fits and the
list, checked and followed."""
from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app import site_data as site_data_module
from arena.app.commands import open_workspace
from arena.domain.records import Verdict
from leaderboard.site import published
from leaderboard.site.render import list_page, page_name, publish
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace, play_round_robin, snapshot
from tests.support.sites import HOSTILE, check_site, hostile_data

SETTINGS = {"motions": ["builtin:en"], "arena": {"judge_runs": 1},
            "entries": [entry(f"e{k}", strength=k / 3) for k in range(4)], "judges": [judge("j")]}
FROZEN = "2026-01-02T03:04:05.000006+00:00"


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """Four offline entries, a round-robin of 12 matches judged once each by j."""
    path = new_workspace(tmp_path_factory.mktemp("incremental") / "ws", **SETTINGS)
    play_round_robin(path)
    return path


@pytest.fixture
def workspace(played, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(played, tmp_path / "ws"))


@pytest.fixture
def frozen(monkeypatch):
    """Every publish of the test generated at one time, so that two publishes can give the same bytes."""
    monkeypatch.setattr(site_data_module, "now", lambda: FROZEN)


def identities(site: Path) -> dict[str, tuple[int, int, int]]:
    """Each file of the site → (inode, size, mtime): a file rewritten, even with the same bytes, changes."""
    return {name: identity(site / name) for name in snapshot(site)}


def identity(path: Path) -> tuple[int, int, int]:
    st = os.stat(path, follow_symlinks=False)
    return st.st_ino, st.st_size, st.st_mtime_ns


def pages_of(site: Path) -> dict[str, bytes]:
    """The site's bytes, but its manifest (which names inodes, so differs between two folders of equal pages)."""
    return {name: data for name, data in snapshot(site).items() if name != published.MANIFEST}


def publish_to(path: Path, out: Path | None = None, **options) -> Path:
    ws = open_workspace(path)
    try:
        return app.publish(ws, out, **options)
    finally:
        ws.close()


def write_site(path: Path, **settings) -> None:
    """arena.toml of SETTINGS with the [site] table given."""
    from tests.support.helpers import workspace_toml

    (path / "arena.toml").write_text(workspace_toml(**SETTINGS, site=settings), encoding="utf-8")


# --- the matches list, page by page ------------------------------------------------------------------------------

def test_the_matches_list_is_static_pages_linked_in_order_with_every_text_escaped(tmp_path):
    one = hostile_data()
    base = one.matches[0]
    matches = [replace(base, id=f"{base.id}-{k}{HOSTILE}") for k in range(23)]
    data = replace(one, matches=matches, scores={m.id: one.scores[base.id] for m in matches}, matches_per_page=10)
    site = tmp_path / "site"
    publish(site, data)

    names = [list_page(k) for k in (1, 2, 3)]
    assert names == ["matches.html", "matches-2.html", "matches-3.html"] and not (site / list_page(4)).exists()
    rows = {name: re.findall(r'<tr><td><a href="(matches/[^"]+)">', (site / name).read_text()) for name in names}
    assert [len(r) for r in rows.values()] == [10, 10, 3]
    assert sum(rows.values(), []) == [page_name("matches", m.id) for m in matches]  # schedule order, each once
    for k, name in enumerate(names, start=1):
        html = (site / name).read_text()
        assert "<script>alert" not in html and "&lt;script&gt;" in html  # ids, motions and names escaped
        nav = re.findall(r'<nav class="pages"[^>]*>(.*?)</nav>', html, re.S)
        assert len(nav) == 2 and nav[0] == nav[1]  # above and below the table
        links = re.findall(r'<a href="([^"]+)"( rel="(prev|next)")?>', nav[0])
        assert [href for href, _, rel in links if not rel] == [n for n in names if n != name]
        assert f'<strong aria-current="page">{k}</strong>' in nav[0]
        assert [(href, rel) for href, _, rel in links if rel] == (
            ([(names[k - 2], "prev")] if k > 1 else []) + ([(names[k], "next")] if k < 3 else []))
        assert f"Matches {10 * (k - 1) + 1}–{min(10 * k, 23)} of 23" in html
    assert 'href="matches.html"' in (site / "index.html").read_text()  # the site's menu opens the first page
    assert check_site(site) == []


def test_a_list_of_one_page_has_no_pager(tmp_path):
    publish(tmp_path / "site", hostile_data())
    html = (tmp_path / "site" / "matches.html").read_text()
    assert 'class="pages"' not in html and html.count("<tr><td><a href=") == 1


# --- incremental publishing --------------------------------------------------------------------------------------

def test_a_second_publish_with_nothing_new_rewrites_nothing(workspace):
    site = workspace / "site"
    done = invoke("publish", "-w", workspace)
    assert done.exit_code == 0, done.output
    before = identities(site)
    assert len([n for n in before if n.startswith("matches/")]) == 12
    again = invoke("publish", "-w", workspace)
    assert again.exit_code == 0 and again.output.strip() == str(site / "index.html")
    assert identities(site) == before  # not one file written, the index included


def test_a_new_match_writes_its_page_and_links_the_others_and_the_site_is_a_fresh_publish(workspace, tmp_path,
                                                                                        frozen):
    site = workspace / "site"
    publish_to(workspace)
    before = identities(site)
    manifest = published.read(site)
    assert manifest["state"] and all(published.seen(manifest, n)[0] for n in before if n.startswith("matches/"))
    assert "m00001" not in (site / published.MANIFEST).read_text()  # files named by digests only

    assert invoke("schedule", "--format", "random", "--matches", "1", "-w", workspace).exit_code == 0
    assert invoke("run", "-w", workspace).exit_code == 0
    ws = open_workspace(workspace)
    try:  # and one match re-judged: its page shows the new verdict
        rejudged = ws.store.debated_match_ids()[0]
        ws.store.replace_verdicts(rejudged, "j", [Verdict("j", 0, "tie", {}, "A tie on a second reading.")], True)
    finally:
        ws.close()
    publish_to(workspace)
    after = identities(site)
    new = sorted(set(after) - set(before))
    assert [n for n in new if not n.startswith("motions/")] == ["matches/m00013.html"]  # and its motion's, if new
    kept = [n for n in before if n.startswith("matches/") and n != page_name("matches", rejudged)]
    assert len(kept) == 11 and all(after[n] == before[n] for n in kept)  # the old files themselves, linked
    assert after[page_name("matches", rejudged)] != before[page_name("matches", rejudged)]
    assert "A tie on a second reading." in (site / page_name("matches", rejudged)).read_text()
    assert all(after[n] != before[n] for n in ("index.html", "matches.html", published.MANIFEST))

    fresh = tmp_path / "fresh"
    publish_to(workspace, fresh)
    assert pages_of(site) == pages_of(fresh)  # what an incremental publish gives is what a publish from scratch does
    assert check_site(site) == []


def test_a_page_edited_by_hand_is_written_again_not_linked(workspace, tmp_path, frozen):
    site = workspace / "site"
    publish_to(workspace)
    edited = site / page_name("matches", "m00002")
    original = edited.read_bytes()
    with open(edited, "ab") as page:  # in place: the same inode
        page.write(b"<!-- edited -->")
    (site / "matrix.html").unlink()
    publish_to(workspace)  # nothing new in the workspace, but the site is not as its last publish left it
    assert edited.read_bytes() == original and (site / "matrix.html").is_file()
    publish_to(workspace, tmp_path / "fresh")
    assert pages_of(site) == pages_of(tmp_path / "fresh")


def test_a_fresh_publish_with_nothing_new_still_drops_what_it_did_not_write(workspace):
    """keep_others=False (`arena demo`): a file someone added is gone after the next publish, new or not."""
    site = workspace / "site"
    publish_to(workspace, keep_others=False)
    (site / "CNAME").write_text("x\n")
    before = identities(site)
    publish_to(workspace, keep_others=False)
    assert not (site / "CNAME").exists()
    assert identities(site)[page_name("matches", "m00001")] == before[page_name("matches", "m00001")]
    publish_to(workspace)
    (site / "CNAME").write_text("x\n")
    publish_to(workspace)  # keep_others (arena publish): kept
    assert (site / "CNAME").read_text() == "x\n"


def test_a_new_renderer_renders_every_page_anew(workspace, monkeypatch):
    """The key of a page covers the renderer (its code and templates): another version links nothing."""
    import leaderboard.site.render as renderer

    site = workspace / "site"
    publish_to(workspace)
    before = identities(site)
    monkeypatch.setattr(renderer, "_renderer_digest", lambda: "another renderer")
    monkeypatch.setattr(site_data_module, "_code_digest", lambda: "another version")
    publish_to(workspace)
    after = identities(site)
    assert all(after[n] != before[n] for n in before)


def test_a_manifest_that_does_not_describe_the_site_is_never_trusted(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_text("a")
    published.write(site, {"a.html": "k"}, "s1")
    assert published.unchanged(site, "s1") and not published.unchanged(site, "s2") and not published.unchanged(site, "")
    (site / "b.txt").write_text("mine")
    assert published.unchanged(site, "s1") and not published.unchanged(site, "s1", others=False)
    (site / "matches").mkdir()
    (site / "matches" / "gone.html").write_text("back")  # a page the publish withdraws, back
    assert published.unchanged(site, "s1") and not published.unchanged(site, "s1", withdrawn=["matches/gone.html"])
    (site / "matches" / "gone.html").unlink()
    os.utime(site / "a.html", ns=(0, 0))  # touched: the same bytes, which are what a publish would write
    assert published.unchanged(site, "s1")
    defaced(site / "a.html", b"b")
    assert not published.unchanged(site, "s1")
    for other in ("{not json", '{"version": 1, "state": "s1", "files": {"x": 3}}', '[1]'):  # not a manifest of ours
        (site / published.MANIFEST).write_text(other)
        assert published.read(site)["files"] == {} and not published.unchanged(site, "s1")


def defaced(path: Path, data: bytes) -> None:
    """path's bytes replaced in place by as many others, its inode and times kept: an edit only its bytes tell."""
    st = path.stat()
    assert len(data) == st.st_size
    with open(path, "r+b") as file:
        file.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert identity(path) == (st.st_ino, st.st_size, st.st_mtime_ns)


def test_a_page_defaced_in_place_with_its_times_put_back_is_written_again(workspace):
    site = workspace / "site"
    publish_to(workspace)
    page = site / page_name("matches", "m00001")
    good = page.read_bytes()
    defaced(page, good.replace(b"<h1", b"<h2", 1))
    publish_to(workspace)  # nothing new in the workspace: only the page's bytes tell it changed
    assert (site / page_name("matches", "m00001")).read_bytes() == good


def test_a_manifest_that_is_no_regular_file_is_not_read(workspace):
    site = workspace / "site"
    publish_to(workspace)
    (site / published.MANIFEST).unlink()
    os.mkfifo(site / published.MANIFEST)  # reading a FIFO waits for a writer that never comes
    assert published.read(site) == {"state": "", "files": {}}
    assert publish_to(workspace).is_file()  # the site written whole, its manifest a file again
    assert published.read(site)["state"]


# --- [site] settings ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, problem", [
    ("intervals", "jackknife", "site.intervals: expected 'bootstrap' or 'sandwich', got 'jackknife'"),
    ("view_intervals", 1, "site.view_intervals: expected a string, got 1"),
    ("replicates", 0, "site.replicates: expected a whole number of at least 1 and at most 10000, got 0"),
    ("replicates", True, "site.replicates: expected a whole number, got True"),
    ("matches_per_page", 5, "site.matches_per_page: expected a whole number of at least 10 and at most 10000, got 5"),
    ("colour", "red", "site.colour: unknown key (expected one of intervals, view_intervals, replicates, "
                      "matches_per_page)"),
])
def test_a_bad_site_setting_exits_2_naming_the_key_and_publishes_nothing(workspace, key, value, problem):
    write_site(workspace, **{key: value})
    line = (workspace / "arena.toml").read_text().splitlines().index("[site]") + 2
    before = snapshot(workspace)
    done = invoke("publish", "-w", workspace)
    assert_user_error(done, f"arena.toml:{line}: {problem}")
    assert snapshot(workspace) == before and not (workspace / "site").exists()


def test_the_site_settings_choose_the_intervals_the_replicates_and_the_pages(workspace):
    write_site(workspace, intervals="sandwich", view_intervals="bootstrap", replicates=40, matches_per_page=10)
    assert invoke("publish", "-w", workspace).exit_code == 0
    site = workspace / "site"
    views = json.loads((site / "leaderboard.json").read_text())["views"]
    assert views["overall"]["meta"]["ci"] == "sandwich"
    assert {(v["meta"]["ci"], v["meta"]["bootstrap"]) for name, v in views.items() if name != "overall"} == {
        ("bootstrap", 40)}
    methodology = (site / "methodology.html").read_text()
    said = re.sub(r"\s+", " ", methodology)
    assert ("the overall ratings' are robust (sandwich) normal intervals clustered by match; the category and "
            "dimension tabs' are the 2.5th and 97.5th percentiles of 40 bootstrap replicates") in said
    index = re.sub(r"\s+", " ", (site / "index.html").read_text())
    assert "robust (sandwich) normal intervals clustered by match" in index
    assert [list_page(k) in os.listdir(site) for k in (1, 2, 3)] == [True, True, False]  # 12 matches, 10 a page

    write_site(workspace)  # the defaults: bootstrap overall, sandwich tabs, 1000 replicates, 500 a page
    assert invoke("publish", "-w", workspace).exit_code == 0
    views = json.loads((site / "leaderboard.json").read_text())["views"]
    assert (views["overall"]["meta"]["ci"], views["overall"]["meta"]["bootstrap"]) == ("bootstrap", 1000)
    assert {v["meta"]["ci"] for name, v in views.items() if name != "overall"} == {"sandwich"}
    said = re.sub(r"\s+", " ", (site / "methodology.html").read_text())
    assert ("the overall ratings' are the 2.5th and 97.5th percentiles of 1000 bootstrap replicates; the category "
            "and dimension tabs' are robust (sandwich) normal intervals clustered by match") in said
    first = (site / "matches.html").read_text()
    assert first.count("<tr><td><a href=") == 12 and 'class="pages"' not in first


# --- flushing the new site to disk ---------------------------------------------------------------------------------

def test_a_new_site_is_flushed_in_one_syncfs_else_file_by_file(tmp_path, monkeypatch):
    """Linux: one syncfs of the filesystem rather than an fsync per page (each a journal commit); elsewhere, or
    where the call is missing, every file and folder in turn."""
    from arena.base import files

    def build(folder: Path) -> None:
        for k in range(40):
            (folder / f"p{k}.html").write_text("<html></html>\n")

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    files.replace_folder(tmp_path / "site", build)
    assert len(synced) <= 2  # the folders around the swap only
    synced.clear()
    monkeypatch.setattr(files, "_syncfs", lambda folder: False)
    files.replace_folder(tmp_path / "site", build)
    assert len(synced) >= 40
    assert sorted(os.listdir(tmp_path / "site")) == sorted(f"p{k}.html" for k in range(40))
