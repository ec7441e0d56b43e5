"""Placing what a judge wrote: claim text in the answer, quotes in the passages.

Both go through judges.locate: exact, then normalized (case, whitespace, curly quotes, dashes,
Unicode forms, invisible characters, an ellipsis as a gap, punctuation at the edges), then fuzzy
(rapidfuzz, never below judges.locate.FUZZY_FLOOR, never for very short texts). Every profile
places text through these functions, so this is the one place to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.locate import find_in_text, locate
from judges.text import Span
from judges.types import Evidence, Passage


def locate_in_answer(text: str, answer: str, hint: int = 0) -> Span | None:
    """Half-open span of `text` in `answer`: exact (outer whitespace trimmed), else normalized,
    else fuzzy (a judge often restates a claim with slightly different wording). The first
    occurrence at or after `hint` is preferred; failing that, one anywhere (the hint only chooses
    between repeats). None when the text is blank or matches nowhere at or above the floor."""
    if not text.strip():
        return None
    found = find_in_text(text.strip(), answer, max(hint, 0))
    return found.span if found else None


def resolve_passage_id(pid: str | None, passages: Sequence[Passage]) -> str | None:
    """The passage id a judge named, with the `[P1]` brackets of our rendering taken off when that
    names a real passage. None or blank means no passage was named."""
    if pid is None or not pid.strip():
        return None
    ids = {passage.id for passage in passages}
    if pid not in ids and pid.strip().strip("[]").strip() in ids:
        return pid.strip().strip("[]").strip()
    return pid


def locate_quote(
    quote: str, passages: Sequence[Passage], preferred_pid: str | None = None
) -> Evidence:
    """Evidence for a judge's quote (judges.locate.locate): looked for in the named passage first,
    then in the others. Found: that passage's id, the passage's own text at the span (what the
    judge quoted, as it really stands there), the span and the match quality ("exact",
    "normalized" or "fuzzy"). Not found: the named id (or "" when none was named), the quote as
    the judge wrote it, no span and match "not_found". A quote naming a passage the request does
    not have is not searched for elsewhere: it keeps that id and is not_found, since the citation
    itself is wrong."""
    pid = resolve_passage_id(preferred_pid, passages)
    if (pid is not None and pid not in {passage.id for passage in passages}) or not quote.strip():
        return Evidence(passage_id=pid or "", quote=quote, span=None, match="not_found")
    located = locate(quote.strip(), passages, pid)
    if located.span is None:
        return Evidence(passage_id=pid or "", quote=quote, span=None, match="not_found")
    text = next(passage.text for passage in passages if passage.id == located.passage_id)
    start, end = located.span
    return Evidence(passage_id=located.passage_id, quote=text[start:end], span=located.span,
                    match=located.match)
