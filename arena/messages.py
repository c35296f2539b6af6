"""Agent messages at rest: a match's prompts and responses packed into one zstd block; cached answers squeezed.

Every prompt of a match quotes the transcript so far again, so a match's messages are ~1 MB of text
that is mostly repetition; compressed together in one block they take ~30 KB, and every text comes
back byte for byte. The block is the UTF-8 of each message's prompt then response, in message order;
the sizes, stored with each message's row, cut it apart again.
"""
from __future__ import annotations

from typing import Iterable, Sequence

CODEC = "zstd"
LEVEL = 3  # zstd's default: 1.3 MB of agent4debate messages → ~28 KB in ~30 ms; level 19 saves 10 KB more at 9x CPU


def pack(texts: Iterable[tuple[str, str]]) -> tuple[list[tuple[int, int]], bytes]:
    """(prompt, response) pairs → their sizes in bytes, and the compressed block holding them all."""
    import zstandard

    sizes: list[tuple[int, int]]
    parts: list[bytes]
    sizes, parts = [], []
    for prompt, response in texts:
        p, r = prompt.encode("utf-8", "surrogatepass"), response.encode("utf-8", "surrogatepass")
        sizes.append((len(p), len(r)))
        parts += (p, r)
    return sizes, zstandard.ZstdCompressor(level=LEVEL).compress(b"".join(parts))


def unpack(codec: str, block: bytes, sizes: Sequence[tuple[int, int]]) -> list[tuple[str, str]]:
    """The (prompt, response) pairs a block holds, given their sizes in bytes, in order."""
    if codec != CODEC:
        raise ValueError(f"agent messages stored with codec {codec!r}, which this arena cannot read")
    import zstandard

    raw = zstandard.ZstdDecompressor().decompress(block, max_output_size=sum(p + r for p, r in sizes))
    out, at = [], 0
    for p, r in sizes:
        out.append((raw[at:at + p].decode("utf-8", "surrogatepass"),
                    raw[at + p:at + p + r].decode("utf-8", "surrogatepass")))
        at += p + r
    return out


def squeeze(text: str) -> str | bytes:
    """A cached answer as stored: zstd-compressed bytes when that saves space (a speech: ~2x), else the text."""
    import zstandard

    raw = text.encode("utf-8", "surrogatepass")
    packed = zstandard.ZstdCompressor(level=LEVEL).compress(raw)
    return packed if len(packed) < len(raw) else text


def unsqueeze(stored: str | bytes) -> str:
    """What squeeze was given (text stored plainly, as before squeezing existed, passes through)."""
    if isinstance(stored, str):
        return stored
    import zstandard

    return zstandard.ZstdDecompressor().decompress(stored).decode("utf-8", "surrogatepass")
