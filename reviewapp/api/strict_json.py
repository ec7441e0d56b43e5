"""The API parses only JSON that Postgres can store and Python can walk: finite numbers (no NaN,
Infinity, or 1e400, which overflows to infinity; integers within 64 bits), text without lone UTF-16
surrogates, and at most MAX_DEPTH levels of nesting (a deeper document would exhaust the recursion
of every layer that reads it). Anything else is refused as a 400 naming the field where it was
found."""

from __future__ import annotations

import json
import math
from typing import Any

from django.http import HttpRequest
from ninja.parser import Parser

MAX_DEPTH = 64
INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # what orjson encodes


class UnstorableJSON(ValueError):
    def __init__(self, path: tuple, message: str):
        super().__init__(f"{'.'.join(map(str, path)) or 'body'}: {message}")
        self.path = path
        self.message = message


def parse(raw: bytes | str) -> Any:
    try:
        value = json.loads(raw)  # NaN and Infinity parse, to be refused below with their field
    except RecursionError:
        raise UnstorableJSON((), f"nested deeper than {MAX_DEPTH} levels") from None
    check(value)
    return value


def check(value: Any) -> None:
    """Walks without recursion, so its own depth is never the limit."""
    pending: list[tuple[Any, tuple]] = [(value, ())]
    while pending:
        item, path = pending.pop()
        if len(path) > MAX_DEPTH:
            raise UnstorableJSON(path[:1], f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, float) and not math.isfinite(item):
            raise UnstorableJSON(
                path,
                "must be a finite number (NaN, Infinity and numbers beyond 1.8e308 are not stored)",
            )
        if isinstance(item, int) and not isinstance(item, bool) and not INT_MIN <= item <= INT_MAX:
            # Postgres would store it, but every JSON encoder downstream (orjson) stops at 64 bits.
            raise UnstorableJSON(
                path, "must be an integer within 64 bits; send bigger ones as strings"
            )
        if isinstance(item, str):
            _check_text(item, path)
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, path)
                pending.append((child, (*path, key)))
        elif isinstance(item, list):
            pending.extend((child, (*path, index)) for index, child in enumerate(item))


def _check_text(text: str, path: tuple) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnstorableJSON(
            path, "contains a lone surrogate (\\ud800-\\udfff), which is not text"
        ) from None


class StrictParser(Parser):
    def parse_body(self, request: HttpRequest) -> Any:
        return parse(request.body)
