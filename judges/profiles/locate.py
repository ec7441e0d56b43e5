"""Placing what a judge wrote: claim text in the answer, quotes in the passages.

Matching here is exact (after trimming outer whitespace only). A later step adds normalized and
fuzzy matching; every profile goes through these two functions, so that is the one place to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.text import Span
from judges.types import Evidence, Passage


def locate_in_answer(text: str, answer: str, hint: int = 0) -> Span | None:
    """Half-open span of `text` (trimmed) in `answer`: its first occurrence at or after `hint`, or,
    failing that, its first occurrence anywhere (the hint only chooses between repeats). None when
    the text is blank or not verbatim in the answer."""
    needle = text.strip()
    if not needle:
        return None
    start = answer.find(needle, max(hint, 0))
    if start < 0:
        start = answer.find(needle)
    return None if start < 0 else (start, start + len(needle))


def resolve_passage_id(pid: str | None, passages: Sequence[Passage]) -> str | None:
    """The passage id a judge named, with the `[P1]` brackets of our rendering taken off when that
    names a real passage. None or blank means no passage was named."""
    if pid is None or not pid.strip():
        return None
    ids = {passage.id for passage in passages}
    if pid not in ids and pid.strip().strip("[]").strip() in ids:
        return pid.strip().strip("[]").strip()
    return pid


def locate_quote(quote: str, passages: Sequence[Passage], preferred_pid: str | None = None) -> Evidence:
    """Evidence for a judge's quote: looked for in the named passage first, then in the others in
    order. Found: that passage's id, the quote as it stands in the passage, its span there and
    match "exact". Not found: the named id (or "" when none was named), the quote as the judge
    wrote it, no span and match "not_found". A quote naming a passage the request does not have
    is not searched for elsewhere: it keeps that id and is not_found, since the citation itself is
    wrong."""
    pid = resolve_passage_id(preferred_pid, passages)
    by_id = {passage.id: passage for passage in passages}
    needle = quote.strip()
    if (pid is not None and pid not in by_id) or not needle:
        return Evidence(passage_id=pid or "", quote=quote, span=None, match="not_found")
    order = ([by_id[pid]] if pid is not None else []) + [p for p in passages if p.id != pid]
    for passage in order:
        start = passage.text.find(needle)
        if start >= 0:
            end = start + len(needle)
            return Evidence(
                passage_id=passage.id, quote=passage.text[start:end], span=(start, end), match="exact"
            )
    return Evidence(passage_id=pid or "", quote=quote, span=None, match="not_found")
