"""A posted form read as the web app takes it: bounded in size and fields, its names and values strict UTF-8."""
from __future__ import annotations

import asyncio
from urllib.parse import unquote_to_bytes

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

from arena.domain.ballots import BallotError

BODY_MAX = 100_000  # bytes of a posted form: a ballot's longest rationale (20,000 characters) fits with room
FIELDS_MAX = 20  # a ballot has six fields; a form of hundreds is not one
# Seconds a posted form's whole body may take to come: BODY_MAX at 3.3 KB/s, a speech of a thousand words at 0.2.
# A body sent slower holds a connection (and what the form is about) open for as long as the sender likes.
READ_S = 30.0


async def posted(request: Request, within: float = READ_S) -> dict[str, str]:
    """The fields of a posted form, read only up to BODY_MAX bytes (413 beyond) and within `within` seconds (408
    beyond, the connection closed); 400 for a body that is not an application/x-www-form-urlencoded form (the ballot
    form's), BallotError for a field that is not UTF-8."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > BODY_MAX:
        raise HTTPException(413)
    body = bytearray()
    try:
        async with asyncio.timeout(within):
            async for chunk in request.stream():  # a chunked body declares no length: count as it comes
                body += chunk
                if len(body) > BODY_MAX:
                    raise HTTPException(413)
    except ClientDisconnect:  # gone before the whole body came: nobody to answer, nothing to store
        raise HTTPException(400) from None
    except TimeoutError:  # the rest of the body may still come: the connection cannot be read on after it
        raise HTTPException(408, headers={"Connection": "close"}) from None

    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/x-www-form-urlencoded":
        raise HTTPException(400)
    return form_fields(bytes(body))


def form_fields(body: bytes) -> dict[str, str]:
    """The fields of an application/x-www-form-urlencoded body: pairs split at & and =, + as a space, escapes
    percent-decoded, then names and values read as UTF-8 strictly (raw bytes beyond ASCII, which some clients
    send unescaped, included). A field given twice counts once, as its last value. BallotError names the first
    field that is not UTF-8; 400 for more than FIELDS_MAX fields."""
    pairs = [pair for pair in body.split(b"&") if pair]
    if len(pairs) > FIELDS_MAX:
        raise HTTPException(400)
    fields: dict[str, str] = {}
    for pair in pairs:
        name, _, value = (unquote_to_bytes(part.replace(b"+", b" ")) for part in pair.partition(b"="))
        try:
            key = name.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BallotError(name.decode("utf-8", "replace"), "a name that is not UTF-8 (byte {at})",
                              at=exc.start) from None
        try:
            fields[key] = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BallotError(key, "not UTF-8 text (byte {at} of the value)", at=exc.start) from None
    return fields
