"""Reading the request headers that choose an answer: `If-None-Match` and `Accept-Encoding`."""

from __future__ import annotations

import re
from collections.abc import Iterable

# An entity tag is an optionally weak quoted string; anything between tags (commas, spaces,
# junk) is skipped, so a malformed header simply matches nothing.
_ENTITY_TAG = re.compile(r'(?:W/)?("[^"]*")')


def none_match(header: str | None, etags: Iterable[str]) -> bool:
    """Whether `If-None-Match: header` matches one of the resource's `etags` (answer 304).

    RFC 9110 compares weakly here: `W/"x"` matches `"x"`. `*` matches any existing resource.
    Repeated `If-None-Match` headers are one comma-separated list (RFC 9110, 5.3): callers pass
    their values joined with ", ", so a tag or `*` in any of them counts.
    """
    if header is None:
        return False
    sent = set(_ENTITY_TAG.findall(header))
    if not sent.isdisjoint(etags):
        return True
    # `*` as a list member of its own, outside any quoted tag (a tag may contain `*`).
    return any(item.strip() == "*" for item in _ENTITY_TAG.sub("", header).split(","))


def accepts_gzip(header: str | None) -> bool:
    """Whether `Accept-Encoding: header` admits gzip: listed (or `*`) without `q=0`.

    An explicit `gzip` entry wins over `*`, so `*, gzip;q=0` refuses it.
    """
    if not header:
        return False
    wildcard: bool | None = None
    for item in header.split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        if coding not in ("gzip", "x-gzip", "*"):
            continue
        accepted = _quality(params) > 0
        if coding == "*":
            wildcard = accepted
        else:
            return accepted
    return bool(wildcard)


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip())
            except ValueError:
                return 0.0
    return 1.0
