"""Ballot ids: what naming matches by per-person ids costs a ballot page of `arena serve`, beside the public-id lookup.

A person's link names a match by an HMAC of judge, person and match (arena.domain.ballots.ballot_id); the app keeps no
mapping, so each ballot page works the ids of the person's done matches out again to find the one named. Per
workspace of N done matches (one short speech each): the time of a ballot page (GET, through Starlette's test
client, median of R requests) and of that scan alone, beside the reference: the lookup by public id the pages
used before (Store.match), and a queue page, which lists all N.

Run: .venv/bin/python benchmarks/ballot_ids.py [--sizes 100 1000 10000] [--requests 30]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.domain.ballots import ballot_id, new_token, token_hash  # noqa: E402
from arena.domain.records import Motion, Speech  # noqa: E402
from arena.store import DB_NAME, Store  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.helpers import entry, people, workspace_toml  # noqa: E402

TOML = workspace_toml(entries=[entry("a"), entry("b")], judges=[people("experts", "ann")])


def workspace(root: Path, n: int) -> tuple[Path, str, str]:
    """A workspace with n done matches and a link for ann: (path, ann's token, the last match's id)."""
    path = root / f"ws{n}"
    init_workspace(path, TOML)
    store = Store(path / DB_NAME)
    store.add_motions([Motion("bench-001", "A motion to judge", "fact")])
    ids = store.add_tournament("bench", 0, {}, [("bench-001", "a", "b")] * n)
    speech = Speech("constructive", "pro", "A short speech.", (), "t", "t")
    for match_id in ids:
        store.commit_match(match_id, [speech], [], [], simulated=True)
    token = new_token()
    store.issue_links("experts", {"ann": token_hash(token)})
    store.close()
    return path, token, ids[-1]


def median_ms(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    print(f"{'done matches':>12}  {'ballot page':>12}  {'id scan':>8}  |  {'reference: lookup by public id':>30}  "
          f"{'queue page':>10}   (ms, median of {args.requests})")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path, token, last = workspace(Path(tmp), n)
            store = Store(path / DB_NAME)
            key = store.ballot_secret()
            wanted = ballot_id(key, "experts", "ann", last)
            scan = median_ms(lambda: next(m for m in store.debated_match_ids()
                                          if ballot_id(key, "experts", "ann", m) == wanted), args.requests)
            lookup = median_ms(lambda: store.match(last), args.requests)
            store.close()
            with TestClient(create_app(path)) as client:
                assert client.get(f"/b/{token}/{wanted}").status_code == 200
                page = median_ms(lambda: client.get(f"/b/{token}/{wanted}"), args.requests)
                queue = median_ms(lambda: client.get(f"/b/{token}"), max(3, args.requests // 10))
            print(f"{n:>12,}  {page:>12.2f}  {scan:>8.2f}  |  {lookup:>30.2f}  {queue:>10.2f}")


if __name__ == "__main__":
    main()
