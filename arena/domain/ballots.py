"""People's ballots: private links, each person's queue, and the one check every ballot passes (web form or CSV).

A link is a random token (192 bits) that only its person holds: the store keeps its SHA-256, so a copy of
arena.db opens no queue. A link names each match by a ballot id of that person's (ballot_id), never by its
public id, so a person cannot look their debates up on the published site. A ballot is the overall outcome
and one per dimension (pro, con or tie) and a rationale, checked by `check_ballot` wherever it comes from.
"""
from __future__ import annotations

import csv
import hashlib
import hmac
import io
import random
import secrets
from pathlib import Path
from typing import Collection, Iterable, Iterator, Mapping

from arena.base.errors import UserError, read_user_text
from arena.base.limits import SERVE_PORT
from arena.domain.records import DIMENSIONS, Ballot, JudgeSpec, Outcome

OUTCOMES: tuple[Outcome, ...] = ("pro", "con", "tie")
_OUTCOME: dict[str, Outcome] = {o: o for o in OUTCOMES}  # a field's text → the outcome it names
RATIONALE_MAX = 20_000  # characters: a page of reasons, not a dump
IMPORT_COLUMNS = ("match_id", "person", "overall", *DIMENSIONS, "rationale")
IMPORT_HEADER = "match_id,person,overall[,argument][,source][,language][,rationale]"


class BallotError(UserError):
    """A ballot field that is not acceptable: field names it, problem says why. problem is message (a literal, which
    the web app's pages translate: leaderboard.site.labels) with values filled in."""

    def __init__(self, field: str, message: str, **values: object):
        self.field, self.message, self.values = field, message, values
        self.problem = message.format(**values)
        super().__init__(f"{field}: {self.problem}")


DEFAULT_BASE_URL = f"http://127.0.0.1:{SERVE_PORT}"  # where `arena serve` listens by default


def link_base(base_url: str) -> str:
    """The base of private links (ballots' and web debaters'): base_url without a trailing '/'; a UserError naming
    --base-url unless it is an http(s) URL."""
    if not base_url.startswith(("http://", "https://")):
        raise UserError(f"--base-url: expected an http(s) URL such as {DEFAULT_BASE_URL}, got {base_url!r}")
    return base_url.rstrip("/")


def new_token() -> str:
    """A fresh secret for a link: 24 random bytes, URL-safe."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    """What the store keeps of a token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def ballot_id(secret: bytes, judge: str, person: str, match_id: str) -> str:
    """The id a person's link names a match by: HMAC-SHA256 under the workspace's secret over judge, person and
    match, 96 bits in hex. Stable for the person, another for everyone else, and without the secret no one can
    tell which public match id it stands for (a hash of what the person holds could be tried on every id)."""
    message = "\0".join((judge, person, match_id)).encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:24]


def open_ballots(match_ids: Iterable[str], people: int, cast: Mapping[int, Collection[str]]) -> set[str]:
    """The matches of match_ids on which at least one of a judge's people (runs 0..people-1) has no ballot,
    given run → the matches that person has a ballot on."""
    return {m for m in match_ids if any(m not in cast.get(run, ()) for run in range(people))}


def queue(judge: str, person: str, match_ids: Iterable[str]) -> list[str]:
    """The person's order of matches: shuffled per person (the same every time), so that people do not
    all judge the schedule's order and no one's early fatigue falls on the same matches."""
    order = sorted(match_ids)
    random.Random(hashlib.sha256(f"{judge}\0{person}".encode()).digest()).shuffle(order)
    return order


def check_ballot(match_id: str, person: str, fields: Mapping[str, str], *, dimensions_required: bool,
                 rationale_required: bool) -> Ballot:
    """A Ballot from raw fields ({overall, argument, source, language, rationale}); BallotError names the
    first field that is missing or not one of pro, con, tie. Dimensions and rationale may be left blank
    unless required (a paper ballot may record only the winner)."""
    outcomes: dict[str, Outcome] = {}
    for key in ("overall", *DIMENSIONS):
        value = (fields.get(key) or "").strip().lower()
        if not value:
            if key == "overall" or dimensions_required:
                raise BallotError(key, "missing: choose pro, con or tie")
            continue
        outcome = _OUTCOME.get(value)
        if outcome is None:
            raise BallotError(key, "expected pro, con or tie, got {value}", value=repr(value[:40]))
        outcomes[key] = outcome
    rationale = (fields.get("rationale") or "").strip()
    if rationale_required and not rationale:
        raise BallotError("rationale", "missing: say in a few words why")
    if len(rationale) > RATIONALE_MAX:
        raise BallotError("rationale", "{length} characters; at most {most}", length=f"{len(rationale):,}",
                          most=f"{RATIONALE_MAX:,}")
    overall = outcomes.pop("overall")
    return Ballot(match_id, person, overall, outcomes, rationale)


def _records(text: str, path: Path) -> Iterator[tuple[int, list[str], list[str]]]:
    """(line the record starts on, its cells, its physical lines) for each CSV record of text; blank lines are
    no record, and a quoted field may span lines, so a record's line is that of its first line. Read strictly:
    a quote left open to the end of the file, or text after a closing quote, is a UserError naming the line
    where its record began (a lenient reader would take the rest of the file as one field)."""
    lines_read: list[str] = []

    def lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            lines_read.append(line)
            yield line

    reader = csv.reader(lines(), strict=True)
    while True:
        mark = len(lines_read)  # the next record starts with the next line read
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise UserError(f"{path}:{mark + 1}: {_csv_problem(str(exc), len(lines_read))}") from None
        if cells:
            yield mark + 1, cells, lines_read[mark:]


def _csv_problem(message: str, last_line: int) -> str:
    """What a csv.Error says, in terms of the spreadsheet that wrote the file."""
    if message == "unexpected end of data":
        return (f"a quoted field is never closed: the record runs on to the end of the file (line {last_line}); "
                f"close the quote, and double any quote inside a quoted field (\"\")")
    if message.startswith("',' expected after"):
        return (f"text after a closing quote on line {last_line}; a quote inside a quoted field is written "
                f"doubled (\"\"), and a quoted field ends at a comma or the end of the line")
    return f"not valid CSV: {message}"


def _swallowed(lines: list[str], header: list[str], done: set[str], people: Iterable[str]) -> int | None:
    """How far after a record's first line the first of its lines that reads as a ballot row of its own
    comes (1: the next line), or None.

    A record's later lines are inside a quoted field, so a multi-line rationale is legitimate; but one whose
    continuation line, read alone as CSV, holds a done match id and one of the judge's people in the header's
    match_id and person columns is a quote left open that has swallowed the rows after it. Prose does not put a
    match id and a person's name as whole cells in those places, so this refuses the swallowing and no
    rationale written as prose.
    """
    at_match, at_person = header.index("match_id"), header.index("person")
    for index, line in enumerate(lines[1:], start=1):
        cells = next(csv.reader([line]), [])
        if len(cells) > max(at_match, at_person) and cells[at_match].strip() in done \
                and cells[at_person].strip() in people:
            return index
    return None


def read_ballots(path: Path, judge: JudgeSpec, done: set[str]) -> list[Ballot]:
    """The ballots of a CSV (IMPORT_HEADER), each checked; UserError 'FILE:LINE: problem' for the first bad
    row. A later row for the same person and match replaces the earlier one."""
    text = read_user_text(path).removeprefix("\ufeff")  # spreadsheets' "CSV UTF-8" starts with a byte-order mark
    rows = _records(text, path)
    _, header, _ = next(rows, (1, [], []))
    header = [h.strip() for h in header]
    if not header:
        raise UserError(f"{path}:1: the file is empty; expected the header line {IMPORT_HEADER}")
    unknown = [h for h in header if h not in IMPORT_COLUMNS]
    missing = [h for h in ("match_id", "person", "overall") if h not in header]
    if unknown or missing or len(set(header)) != len(header):
        problem = (f"unknown column {unknown[0]!r}" if unknown else f"no {missing[0]} column" if missing
                   else "a column is repeated")
        raise UserError(f"{path}:1: {problem}; expected the header line {IMPORT_HEADER}")
    ballots: dict[tuple[str, str], Ballot] = {}
    for line, cells, lines in rows:
        where = f"{path}:{line}"
        swallowed = _swallowed(lines, header, done, judge.people)
        if swallowed is not None:
            raise UserError(f"{where}: a quoted field opened here runs on over line {line + swallowed}, which "
                            f"reads as a ballot row of its own: close the quote (a quote inside a quoted field "
                            f"is written doubled, \"\")")
        if len(cells) != len(header):
            raise UserError(f"{where}: {len(header)} columns expected (as the header), got {len(cells)}")
        row = dict(zip(header, cells))
        match_id, person = row["match_id"].strip(), row["person"].strip()
        if match_id not in done:
            raise UserError(f"{where}: match_id {match_id!r}: not a done match of this workspace")
        if person not in judge.people:
            raise UserError(f"{where}: person {person!r}: not one of judge {judge.name!r}'s people "
                            f"({', '.join(judge.people)})")
        try:
            ballots[(match_id, person)] = check_ballot(match_id, person, row, dimensions_required=False,
                                                       rationale_required=False)
        except BallotError as exc:
            raise UserError(f"{where}: {exc}") from None
    return list(ballots.values())
