"""Provenance statements in a text (`provenance_mentions`): fetch dates, sections, named sources and
URLs, each judged against the passage headers (check 4, judges/checks/provenance.py, says how)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Literal

from judges.checks.matching import find_in_passages
from judges.checks.spans import Mask
from judges.text import content_words, quantities, quantity_values
from judges.types import JudgeRequest, Passage, Span


ProvenanceVerdict = Literal["agrees", "disagrees"]


@dataclass(frozen=True)
class ProvenanceMention:
    """A statement about where the information came from or how current it is."""

    kind: str  # "date" | "section" | "document" | "url"
    span: Span  # in the text searched, cue words included
    target: Span  # the date, section, name or URL itself
    verdict: ProvenanceVerdict | None  # None: the passage text states it, so it is not judged here
    reason: str = ""


# Cues that the date is when the data was taken: only a passage's fetched_at can support it.
_FETCH_CUE = r"fetched|crawled|scraped|snapshot"


# Cues that may also introduce a policy date ("as of July 1, fares are ...", "cards retrieved
# until June 30"): the passage text may support the date too.
_LOOSE_CUE = (
    r"as of|updated|published|revised|current|dated|posted|reviewed|retrieved|accessed|downloaded"
)


_DATE_CUE = re.compile(rf"\b(?:(?P<fetch>{_FETCH_CUE})|(?P<loose>{_LOOSE_CUE}))\b", re.IGNORECASE)


_CLAUSE_END = re.compile(r"(?<!\b[A-Za-z])[.;!?](?=\s)|\n")


_CUE_REACH = 40  # characters between a cue and its date


_SECTION = re.compile(
    r"\b(?:[Ss]ections?|[Ss]ecs?\.|§§?)\s*(?P<ids>\d+(?:\.\d+)*[A-Za-z]?"
    r"(?:\s*(?:,|and|or|&|to|through)\s*(?:§\s*)?\d+(?:\.\d+)*[A-Za-z]?)*)"
)


_SECTION_ID = re.compile(r"\d+(?:\.\d+)*[A-Za-z]?")


_URL = re.compile(r"\bhttps?://[^\s<>\"'\])]+", re.IGNORECASE)


# Cues naming a source outright, and looser ones that do only when followed by a document's name.
_STRONG_SOURCE_CUE = (
    r"according to|as (?:stated|described|set out|explained|listed|published|written) in"
    r"|citing|cited in|source:?"
)


_WEAK_SOURCE_CUE = r"from|in|per|under|see|based on"


_SOURCE_CUE = re.compile(
    rf"\b(?:(?P<strong>{_STRONG_SOURCE_CUE})|(?P<weak>{_WEAK_SOURCE_CUE}))\s+", re.IGNORECASE
)


_SOURCE_VERB = re.compile(
    r"\s+(?:states|says|notes|specifies|explains|lists|indicates|confirms|reads|provides)\b"
)


_DOC_NOUNS = frozenset(
    """policy policies guide guidelines tariff rule rules rulebook handbook faq faqs questions
    document documents website site page schedule notice manual brochure code ordinance bulletin
    regulation regulations terms sheet circular""".split()
)


_TOKEN = re.compile(r"[A-Za-z0-9][\w'’&-]*")


_CONNECTORS = frozenset({"of", "and", "for", "&", "the", "on", "to"})


# Words a named source may add to what its header says without naming something else.
_GENERIC_SOURCE_WORDS = frozenset(
    "policy document website site page official published current latest online agency".split()
)


def provenance_mentions(text: str, request: JudgeRequest) -> list[ProvenanceMention]:
    """Every provenance statement in `text` (the answer, or one sentence of it), judged against the
    passages' header fields."""
    mentions = [*_provenance_dates(text, request), *_sections(text, request), *_urls(text, request)]
    taken = Mask(len(text), [m.span for m in mentions])
    mentions += [m for m in _named_sources(text, request) if not taken.touches(m.span)]
    return sorted(mentions, key=lambda m: m.span)


def _fetched_dates(request: JudgeRequest) -> list[str]:
    """The passages' fetch days as YYYY-MM-DD (fetched_at may be any ISO 8601 date or datetime)."""
    return sorted({_iso_day(p.fetched_at) for p in request.passages if p.fetched_at})


def _iso_day(value: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        try:
            return datetime.fromisoformat(value).date().isoformat()
        except ValueError:
            return value[:10]


def _provenance_dates(text: str, request: JudgeRequest) -> list[ProvenanceMention]:
    fetched = _fetched_dates(request)
    text_values: frozenset[str] | None = None
    mentions = []
    for quantity in quantities(text):
        if quantity.kind != "date":
            continue
        start = quantity.span[0]
        window_start = max(0, start - 80)
        clause_ends = [m.end() for m in _CLAUSE_END.finditer(text, window_start, start)]
        window_start = max(clause_ends, default=window_start)
        cues = list(_DATE_CUE.finditer(text, window_start, start))
        if not cues or start - cues[-1].end() > _CUE_REACH:
            continue
        # The mention runs from the first cue of the clause: "As of our data fetched on 2026-07-01".
        span = (cues[0].start(), quantity.span[1])
        fetch_cue = any(cue.group("fetch") for cue in cues)
        if not fetch_cue and not fetched:
            continue  # no passage has a fetch date: "as of 2021" is an ordinary date (check 2)
        if _date_agrees(quantity.value, fetched):
            verdict, reason = "agrees", ""
        else:
            if not fetch_cue:
                if text_values is None:
                    text_values = frozenset().union(
                        *(quantity_values(p.text) for p in request.passages)
                    )
                if quantity.value in text_values:
                    mentions.append(ProvenanceMention("date", span, quantity.span, None))
                    continue
            shown = ", ".join(fetched) if fetched else "no passage gives a fetch date"
            preposition = (
                "on" if len(quantity.value) == 10 or quantity.value.startswith("--") else "in"
            )
            verdict = "disagrees"
            reason = (
                f"no passage was fetched {preposition} {quantity.value.lstrip('-')} (fetched:"
                f" {shown})"
            )
        mentions.append(ProvenanceMention("date", span, quantity.span, verdict, reason))
    return mentions


def _date_agrees(value: str, fetched: list[str]) -> bool:
    if value.startswith("--"):
        return any(day.endswith(value[1:]) for day in fetched)
    return any(day == value or day.startswith(value + "-") for day in fetched)


def _section_key(section: str) -> str:
    key = re.sub(r"(?i)\bsec(?:tion|s)?\b\.?|§", "", section)
    return key.strip().strip(".").lower()


def _sections(text: str, request: JudgeRequest) -> list[ProvenanceMention]:
    headers = sorted({_section_key(p.section) for p in request.passages if p.section})
    mentions = []
    for match in _SECTION.finditer(text):
        unknown = [
            sid
            for sid in _SECTION_ID.findall(match.group("ids"))
            if not any(
                h == sid.lower()
                or h.startswith(sid.lower() + ".")
                or sid.lower().startswith(h + ".")
                for h in headers
                if h
            )
        ]
        if not unknown:
            verdict, reason = "agrees", ""
        elif all(_text_names_section(sid, request.passages) for sid in unknown):
            verdict, reason = None, ""
        else:
            shown = ", ".join(headers) if headers else "none"
            names = " or ".join(unknown)
            verdict, reason = (
                "disagrees",
                f"no passage header names section {names} (sections: {shown})",
            )
        mentions.append(ProvenanceMention("section", match.span(), match.span(), verdict, reason))
    return mentions


def _text_names_section(sid: str, passages: Sequence[Passage]) -> bool:
    """Whether a passage's text names section `sid`: "section", "sec." or "§" before it (any
    case), and no digit right after it, nor after one more character of an id."""
    key = sid.lower()
    return any(key in _sections_named(p.text) for p in passages)


_SECTION_WORD = re.compile(r"(?:section|sec\.|§)\s*", re.IGNORECASE)


_DIGIT_AFTER = re.compile(r"[\w.]?\d")


@lru_cache(maxsize=256)  # asked for each section an answer names, of every passage: read once
def _sections_named(text: str) -> frozenset[str]:
    """Every section id the text names (`_text_names_section`), lowercased: each start of an id
    after a section word, cut where no digit follows."""
    named = set()
    for match in _SECTION_WORD.finditer(text):
        start = match.end()
        longest = _SECTION_ID.match(text, start)
        if longest is not None:
            named.update(text[start:end].lower() for end in range(start + 1, longest.end() + 1)
                         if not _DIGIT_AFTER.match(text, end))
    return frozenset(named)


def _url_key(url: str) -> str:
    url = url.strip().rstrip("/").lower()
    return re.sub(r"^https?://(www\.)?", "", url)


def _urls(text: str, request: JudgeRequest) -> list[ProvenanceMention]:
    headers = [_url_key(p.source_url) for p in request.passages if p.source_url]
    mentions = []
    for match in _URL.finditer(text):
        url = match.group().rstrip(".,;:!?")
        span = (match.start(), match.start() + len(url))
        key = _url_key(url)
        if any(
            h == key or h.split("#")[0].rstrip("/") == key or h.startswith((key + "/", key + "#"))
            for h in headers
        ):
            verdict, reason = "agrees", ""
        elif any(url.lower() in _lowered(p.text) for p in request.passages):
            verdict, reason = None, ""
        else:
            verdict, reason = "disagrees", f"no passage's source is {url}"
        mentions.append(ProvenanceMention("url", span, span, verdict, reason))
    return mentions


@lru_cache(maxsize=256)  # asked for each URL an answer gives, of every passage
def _lowered(text: str) -> str:
    return text.lower()


def _named_sources(text: str, request: JudgeRequest) -> list[ProvenanceMention]:
    """Agencies and documents the text names as its source, judged against the headers."""
    found: dict[Span, ProvenanceMention] = {}
    for cue in _SOURCE_CUE.finditer(text):
        name = _name_after(text, cue.end())
        if name is None:
            continue
        words = [w.lower() for w in _TOKEN.findall(text[slice(*name)])]
        if cue.group("weak") and not _DOC_NOUNS & set(words):
            continue  # "from the Customer Service Center" names a place, not a source
        mention = _judge_name(text, (cue.start(), name[1]), name, request)
        if mention is not None:
            found[name] = mention
    for verb in _SOURCE_VERB.finditer(text):
        name = _name_before(text, verb.start())
        if name is None or name in found:
            continue
        if not _DOC_NOUNS & {w.lower() for w in _TOKEN.findall(text[slice(*name)])}:
            continue  # "She says" or "Metro says" alone is not a document
        mention = _judge_name(text, (name[0], verb.end()), name, request)
        if mention is not None:
            found[name] = mention
    return list(found.values())


def _tokens(text: str, start: int, end: int) -> list[re.Match[str]]:
    return [m for m in _TOKEN.finditer(text, start, end)]


def _is_capitalized(token: str) -> bool:
    return token[0].isupper() or token[0].isdigit() and any(c.isupper() for c in token)


def _name_after(text: str, position: int) -> Span | None:
    """A source's name starting at `position`: an optional "the"/"our", a run of capitalized words
    (joined by "of", "and", ...), then up to two lowercase words ending in a document noun."""
    tokens = _tokens(text, position, min(len(text), position + 200))
    index = 0
    while index < len(tokens) and tokens[index].group().lower() in (
        "the",
        "our",
        "a",
        "an",
        "its",
        "their",
    ):
        index += 1
    run: list[re.Match[str]] = []
    last_end = tokens[index - 1].end() if index else position
    for token in tokens[index:]:
        gap = text[last_end:token.start()]
        if gap.strip():
            break  # punctuation ends the name
        word = token.group()
        # A number after a capitalized word belongs to the name: "the Tariff Rules 2027".
        if _is_capitalized(word) or (run and (word.lower() in _CONNECTORS or word.isdigit())):
            run.append(token)
            last_end = token.end()
        else:
            break
    while run and run[-1].group().lower() in _CONNECTORS:
        run.pop()
    if not run:
        return None
    end = previous = run[-1].end()
    for token in tokens[index + len(run):index + len(run) + 3]:
        if text[previous:token.start()].strip() or not token.group().islower():
            break
        if token.group() in _DOC_NOUNS:
            end = token.end()
            break
        previous = token.end()
    return run[0].start(), _strip_possessive(text, end)


def _name_before(text: str, position: int) -> Span | None:
    """A source's name ending at `position` (before "states", "says", ...): capitalized words,
    then up to two lowercase words ending in a document noun ("the LRT fare policy states")."""
    reach = max(0, position - 200)
    clause_start = max(
        (m.end() for m in _CLAUSE_END.finditer(text, reach, position)), default=reach
    )
    clause_start = max(
        clause_start, max(text.rfind(c, clause_start, position) + 1 for c in ",:(\"")
    )
    tokens = _tokens(text, clause_start, position)
    if not tokens or tokens[-1].end() != len(text[:position].rstrip()):
        return None
    index = len(tokens)
    lowercase = 0
    while index > 0 and tokens[index - 1].group().islower() and lowercase < 3:
        index -= 1
        lowercase += 1
        if lowercase == 1 and tokens[index].group().lower() not in _DOC_NOUNS:
            return None
    while index > 0 and (
        _is_capitalized(tokens[index - 1].group())
        or tokens[index - 1].group().lower() in _CONNECTORS
    ):
        index -= 1
    while index < len(tokens) and tokens[index].group().lower() in _CONNECTORS | {"the"}:
        index += 1
    if index >= len(tokens) or not _is_capitalized(tokens[index].group()):
        return None
    return tokens[index].start(), tokens[-1].end()


def _strip_possessive(text: str, end: int) -> int:
    return end - 2 if text[end - 2:end] in ("'s", "’s") else end


def _judge_name(
    text: str, span: Span, name: Span, request: JudgeRequest
) -> ProvenanceMention | None:
    words = set(content_words(text[slice(*name)])) - _GENERIC_SOURCE_WORDS
    if not words:
        return None  # "the policy" names nothing to check
    if any(words <= _header_words(p) for p in request.passages):
        return ProvenanceMention("document", span, name, "agrees")
    if find_in_passages(text[slice(*name)], request.passages) is not None:
        return ProvenanceMention("document", span, name, None)  # the passage text names it
    named = dict.fromkeys(h for p in request.passages for h in (p.agency, p.title) if h)
    headers = "; ".join(named) or "none"
    reason = f"no passage header names '{text[slice(*name)]}' (headers: {headers})"
    return ProvenanceMention("document", span, name, "disagrees", reason)


def _header_words(passage: Passage) -> frozenset[str]:
    return _words_of_header(passage.agency, passage.title, passage.section, passage.tag)


@lru_cache(maxsize=1024)  # asked of every passage for every source an answer names
def _words_of_header(
    agency: str | None, title: str | None, section: str | None, tag: str | None
) -> frozenset[str]:
    fields = [f for f in (agency, title, section, tag) if f]
    words = set(content_words(" ".join(fields)))
    for field in (agency, title):
        if field:
            initials = "".join(
                w[0] for w in re.findall(r"[A-Za-z][\w'-]*", field) if w[0].isupper()
            )
            if len(initials) >= 2:
                words.add(initials.lower())
    return frozenset(words)
