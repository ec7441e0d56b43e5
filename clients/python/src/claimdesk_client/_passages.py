"""Retrieved documents (LangChain Documents, LlamaIndex nodes) as ingest passages, for both
framework integrations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# The ids the server accepts today; others are left out and the server numbers the passage
# P1..Pn. (Issue 20 item 1 widens this to 100 printable characters: widen it here with it.)
_SERVER_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_URL_KEYS = ("source_url", "url", "source")


def _url(metadata: Mapping[str, Any]) -> str | None:
    for key in _URL_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.startswith(("http://", "https://")) and len(value) <= 2000:
            return value
    return None


def passage(text: str, *, id: object, metadata: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"text": text}
    if id is not None and _SERVER_ID.fullmatch(str(id)):
        found["id"] = str(id)
    title = metadata.get("title")
    if isinstance(title, str) and 0 < len(title) <= 500:
        found["title"] = title
    if url := _url(metadata):
        found["source_url"] = url
    return found


def unique(passages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blank texts dropped, a document retrieved twice kept once, a repeated id kept on its first
    passage only (the server refuses two passages with one id)."""
    kept: list[dict[str, Any]] = []
    seen_texts: set[tuple[str | None, str]] = set()
    seen_ids: set[str] = set()
    for found in passages:
        key = (found.get("id"), found["text"])
        if not found["text"].strip() or key in seen_texts:
            continue
        seen_texts.add(key)
        if found.get("id") in seen_ids:
            found = {k: v for k, v in found.items() if k != "id"}
        elif "id" in found:
            seen_ids.add(found["id"])
        kept.append(found)
    return kept
