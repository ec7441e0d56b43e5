"""Retrieved documents (LangChain Documents, LlamaIndex nodes) as ingest passages, for both
framework integrations."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

_URL_KEYS = ("source_url", "url", "source")
_SCORE_KEYS = ("score", "relevance_score")  # what vector stores and rerankers put in Document metadata
MAX_ID_CHARS = 100


def server_takes_id(pid: str) -> bool:
    """The server's rule for passage ids: printable text up to 100 characters, not blank, no
    leading or trailing whitespace, no `<<<` / `>>>`. Others are left out and the server numbers
    the passage P1..Pn."""
    return (0 < len(pid) <= MAX_ID_CHARS and pid.strip() == pid and pid.isprintable()
            and "<<<" not in pid and ">>>" not in pid)


def _url(metadata: Mapping[str, Any]) -> str | None:
    for key in _URL_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.startswith(("http://", "https://")) and len(value) <= 2000:
            return value
    return None


def _finite(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _json_object(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata entries that are JSON the server stores (no NaN, no objects JSON cannot spell)."""
    kept = {}
    for key, value in metadata.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        kept[str(key)] = value
    return kept


def passage(text: str, *, id: object, metadata: Mapping[str, Any], score: object = None) -> dict[str, Any]:
    """`score`: the retriever's, when it gives one beside the document (LlamaIndex); else a score
    found in the metadata."""
    found: dict[str, Any] = {"text": text}
    if id is not None and server_takes_id(str(id)):
        found["id"] = str(id)
    title = metadata.get("title")
    if isinstance(title, str) and 0 < len(title) <= 500:
        found["title"] = title
    if url := _url(metadata):
        found["source_url"] = url
    score = _finite(score)
    if score is None:
        score = next((s for key in _SCORE_KEYS if (s := _finite(metadata.get(key))) is not None), None)
    if score is not None:
        found["score"] = score
    if kept := _json_object(metadata):
        found["metadata"] = kept
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
