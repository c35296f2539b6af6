"""Secrets never leave the environment: every error string is redacted before it is shown or stored."""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit, urlunsplit

_SECRET_NAME_ENDINGS = ("_KEY", "_TOKEN", "_SECRET")  # _KEY covers OPENAI_API_KEY, TAVILY_API_KEY...
_MIN_SECRET_LEN = 8  # shorter values ("true", "dev") and words ("bearer of news") would blank out common words
_REDACTED = "[redacted]"
_SUFFIX = " (key redacted)"
# One pass for both shapes: "Bearer <token>" (any case) and provider key shapes (sk-ant- before sk-, so the
# longer prefix is kept). "[" is in neither token alphabet, so already redacted text is left as it is.
_TOKENS = re.compile(r"(?i:\b(bearer)\s+)[A-Za-z0-9._~+/=-]{8,}|\b(sk-ant-|sk-|tvly-)[A-Za-z0-9_-]{8,}")


# A URL's user and password, and its query, may carry a credential (http://user:pw@host, ...?api-key=...).
# Already redacted parts ("[redacted]@", "?[redacted]") are left as they are.
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)((?!\[redacted\]@)[^\s/@?#]*@)?([^\s?#'\"<>)\]]*)"
                  r"(\?(?!\[redacted\])[^\s#'\"<>)\]]*)?")


def redact(text: str, environ: Mapping[str, str] = os.environ) -> str:
    """*_KEY/_TOKEN/_SECRET env values, Bearer tokens, sk-/tvly- keys (8+ chars), and the user, password and query
    of URLs become [redacted], noted once."""
    return _redact(text, _secret_values(environ))


def public_url(url: str) -> str:
    """url without what may carry a credential (user, password, query, fragment): what may be stored or shown of
    a server's address."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL after all: what redaction leaves of it
        return _URL.sub(_url_replacement, url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def redactor(environ: Mapping[str, str] = os.environ) -> Callable[[str], str]:
    """redact, with the environment's secrets read once: for many texts (an export's hundred thousand rows)."""
    values = _secret_values(environ)
    return lambda text: _redact(text, values)


def _redact(text: str, values: list[str]) -> str:
    text, n = _TOKENS.subn(_token_replacement, text)  # first, so a shaped key keeps its telling prefix
    found = n > 0
    urls = _URL.sub(_url_replacement, text)
    found, text = found or urls != text, urls
    for value in values:
        if value in text:
            text, found = text.replace(value, _REDACTED), True
    return text + _SUFFIX if found else text


def _secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values worth hiding, longest first, so a value that contains another is replaced whole."""
    values = (environ[k] for k in environ if k.upper().endswith(_SECRET_NAME_ENDINGS))
    return sorted({v for v in values if len(v) >= _MIN_SECRET_LEN}, key=len, reverse=True)


def _url_replacement(m: re.Match[str]) -> str:
    user = f"{_REDACTED}@" if m[2] else ""
    query = f"?{_REDACTED}" if m[4] and m[4] != "?" else (m[4] or "")
    return m[1] + user + m[3] + query


def _token_replacement(m: re.Match[str]) -> str:
    return f"{m[1]} {_REDACTED}" if m[1] else f"{m[2]}{_REDACTED}"
