"""Claims with leases: how processes sharing one workspace split its work so that each piece is done once.

A holder (one `arena run` or `arena judge` process) claims a match to play, or a (match, judge) to
judge, and renews its claims with a heartbeat. A claim lapses when its heartbeat is older than the
lease or when its holder's process is gone from this host; a lapsed claim can be taken over.
"""
from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass

from arena.base.errors import ArenaError

LEASE_S = 60.0  # a claim not renewed for this long is free again (holders renew every LEASE_S / 4)
HOST = socket.gethostname()


@dataclass(frozen=True)
class Holder:
    """A process that claims work: an id fresh for each run, and where it runs."""

    id: str
    pid: int
    host: str

    @classmethod
    def here(cls) -> "Holder":
        return cls(uuid.uuid4().hex[:12], os.getpid(), HOST)


class ClaimLost(ArenaError):
    """The claim was taken over (its lease lapsed) before the work was committed; the work is not stored."""


def lapsed(heartbeat_at: float | None, pid: int | None, host: str | None, now: float, lease_s: float) -> bool:
    """Whether a claim is free again: no heartbeat, a heartbeat older than the lease, or a holder gone from here."""
    if heartbeat_at is None or now - heartbeat_at > lease_s:
        return True
    return host == HOST and pid is not None and not alive(pid)


def alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (a zombie, killed but not yet reaped, counts as gone)."""
    if pid == os.getpid():  # this process's own claims: every claim the runner makes passes them, so skip /proc
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc (macOS): os.kill's answer stands
        return True


def clock() -> float:
    """Heartbeats are wall-clock seconds: they are compared across processes."""
    return time.time()
