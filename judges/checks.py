"""Deterministic answer checks: run after every backend, no model, only ever adding findings.

`apply_checks(request, result)` reads the answer and the passages itself and adds what it finds to
any backend's result (DESIGN.md, "Deterministic checks"; issue 4, item 2). Four answer checks:

1. **Quotations** -- text the answer puts in quotation marks ("…", “…”, or '…' when it is clearly a
   quotation and not an apostrophe) that is at least QUOTE_MIN_WORDS words or QUOTE_MIN_CHARS
   characters long must be in some passage's text after normalization (Unicode NFKC, case, runs of
   whitespace, curly quotes, dashes, spaces before punctuation; an ellipsis in the quotation stands
   for a gap). Else a `quote` fabrication, and the claims over it become UNSUPPORTED. A title in
   quotation marks ("Beauty and the Beast": every word capitalized but small joining words, at
   most 10 words) is a name, not a quotation, and is not checked.
2. **Numbers** -- every quantity in the answer (money, percentages, ages, durations, counts, dates,
   clock times; `judges.text.quantities`) must be in some passage's *text* after normalization
   ("$86" = "86.00" = "86 dollars", "1,500" = "1500", "50%" = "fifty percent", "January 5, 2027" =
   "2027-01-05" = "1/5/2027", "14 days" = "fourteen days"). Header fields are never searched. Else
   a `statistic` (or `date`) fabrication, and the claims over it become UNSUPPORTED. Not checked
   here: citation markers, list numbers opening a line, URLs, quantities inside a checked quotation
   (check 1 covers them) and inside a provenance statement (check 4 covers them).
3. **Citations** -- `[P3]`, `[3]`, `[P1, P2]`, `(P3)`: every cited passage must exist (`[3]` names
   the passage "3", or "P3" when the passages are P-numbered), else a `citation` fabrication; a
   sentence whose citations all name missing passages becomes UNSUPPORTED. The passages a sentence
   cites (their union) must support it: contain every quantity it states and at least
   CITATION_MIN_RECALL (50%) of its content words. Else a `citation` fabrication and the sentence's
   claims become at most PARTIALLY_SUPPORTED. A marker cites the sentence it stands in, or the one
   before when it opens its sentence on the same line ("... free. [P2] Youth ..."). Not checked for
   support: a sentence saying the sources are silent ("the policy does not specify ...") and one
   that only lists sources ("Reference: [1]").
4. **Provenance** -- where the answer says its information came from or how current it is, that is
   checked against the passage *header* fields only (fetched_at, agency, title, section,
   source_url), never the passage text: a stated fetch date no passage's fetched_at gives is a
   `date` fabrication; a named agency or document, a section number or a source URL that no header
   has is an `entity` fabrication; either way the claims over it become UNSUPPORTED. A date is a
   fetch date when a cue precedes it in its clause ("fetched", "snapshot", "as of", "updated",
   "retrieved", "published", ...). The same words can state a policy fact, so after a loose cue
   (all but fetched/crawled/scraped/snapshot) a date the passage text states is left alone, and when
   no passage has a fetched_at the date is an ordinary one for check 2; likewise a section,
   document name or URL that the passage text itself names is not flagged. Named sources are read
   after "according to", "as stated in", ... (any name) and after "from", "in", "per", "under",
   "based on" (only a name with a document noun: Policy, Guide, Tariff, FAQ, ...), and before
   "states", "says", ... (a name with a document noun); a name agrees when all its content words
   (less "policy", "website" and the like) are in one passage's agency, title, section and tag, or
   their initials ("LRT"). `provenance_verdict(sentence, request)` tells a judge whether a sentence
   is a provenance statement that agrees with the headers.

Prompt injection (issue 9, item 6; judges.injection finds it). Checks 1-4 read the answer with
its invisible characters removed (zero-width spaces, bidi controls, tag characters: a zero-width
space must not hide "fifty percent" from check 2; spans are mapped back to the real answer) and
only the passages that do not address the judge (`trusted_passages`: a passage whose text or
header holds an instruction to the judge, forged data markers or hidden text keeps its id but
supports nothing; the rewrite note names it). Then:

5. **Injection** -- text in the answer that addresses the judge or hides text: the claims over it
   become UNSUPPORTED (a claim is added for it when none covers it).
6. **Evidence** -- a SUPPORTED claim whose found quotes are all in passages that address the
   judge becomes PARTIALLY_SUPPORTED.
7. **Support** -- a SUPPORTED claim with no quote found in a trusted passage (fare_policy and
   sentence_map give none) must have SUPPORT_MIN of its content words (names double; words of
   quantities and provenance statements are checks 2 and 4's) in one trusted passage sentence, else
   PARTIALLY_SUPPORTED. When anything in the request (question, turns, passages, answer) addresses
   the judge, every SUPPORTED claim, quoted or not, needs all of its content words there.

How findings land: a finding over a claim (by answer span, or by text when the claim has none)
lowers that claim's label -- never raises it (SUPPORTED < PARTIALLY_SUPPORTED < UNSUPPORTED /
CONTRADICTED) -- and appends the finding to its explanation. A finding over answer text no claim
covers adds a claim for that text (only when every claim can be placed in the answer; otherwise
the fabrication alone is added). Fabrications and claims are only ever added. When a label
changed or a claim was added, the grounding score and verdict are recomputed with
`judges.scoring` and the less grounded of the backend's and the recomputed ones is kept; a result
to which the checks added a fabrication is never GROUNDED.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property, lru_cache
from typing import Literal

from judges.injection import find_injections, original_span, strip_invisible
from judges.scoring import grounding_score, verdict_for
from judges.text import (
    Quantity, Span, content_tokens, content_words, quantities, quantity_values, split_sentences, stems,
    values_in,
)
from judges.types import Claim, Fabrication, JudgeRequest, JudgeResult, Passage

QUOTE_MIN_WORDS = 3
QUOTE_MIN_CHARS = 15
# Share of a citing sentence's content words the cited passages must contain (and every number).
CITATION_MIN_RECALL = 0.5

LABEL_RANK = {"SUPPORTED": 0, "PARTIALLY_SUPPORTED": 1, "UNSUPPORTED": 2, "CONTRADICTED": 2}
VERDICT_RANK = {"GROUNDED": 0, "MOSTLY_GROUNDED": 1, "UNGROUNDED": 2}

ProvenanceVerdict = Literal["agrees", "disagrees"]


@dataclass(frozen=True)
class Finding:
    """What one check found at one place in the answer."""

    check: str  # "quote" | "number" | "citation" | "provenance"
    span: Span  # the answer text the finding is about; claims overlapping it are affected
    note: str  # appended to the explanation of each affected claim
    lower_to: str  # "UNSUPPORTED" or "PARTIALLY_SUPPORTED"
    category: str  # the category of a claim added for answer text no claim covers
    fabrication: Fabrication | None = None


# --- entry point -------------------------------------------------------------------------------


def apply_checks(request: JudgeRequest, result: JudgeResult) -> JudgeResult:
    """`result` with every check's findings added (a new object; `result` is not modified).

    Checks 1-4 read the answer without its invisible characters (judges.injection.strip_invisible:
    a zero-width space must not hide a price from check 2) and only the passages that do not
    address the judge (`trusted_passages`); their spans are mapped back to the real answer.
    Checks 5-7 are about prompt injection and the judge's support for SUPPORTED claims.
    """
    trusted, poisoned = trusted_passages(request.passages)
    clean_text, where = strip_invisible(request.answer)
    checked = _Answer(request.model_copy(update={"answer": clean_text, "passages": trusted}))
    findings = [
        _remap(finding, where, request.answer)
        for finding in (
            *check_quotations(checked),
            *check_numbers(checked),
            *check_citations(checked),
            *check_provenance(checked),
        )
    ]
    answer = checked if clean_text == request.answer else _Answer(
        request.model_copy(update={"passages": trusted}))
    answer_injections = check_answer_injections(answer)
    findings += answer_injections
    findings += check_evidence(answer, result, poisoned)
    findings += check_support(answer, result, under_attack=bool(
        poisoned or answer_injections or any(find_injections(text) for text in _steering_texts(request))))
    checked_result = _apply(findings, answer, result)
    if poisoned:
        listed = "; ".join(f"{pid}: {reason}" for pid, reason in poisoned.items())
        note = (f"Passages that address the judge were not used as evidence by the deterministic "
                f"checks ({listed}).")
        checked_result = checked_result.model_copy(
            update={"rewrite_note": f"{checked_result.rewrite_note} {note}".strip()})
    return checked_result


def _remap(finding: Finding, where: Sequence[int], text: str) -> Finding:
    """A finding made on the answer without invisible characters, placed in the real answer."""
    if where[-1] == len(where) - 1:
        return finding  # nothing was removed
    span = original_span(where, finding.span)
    fabrication = finding.fabrication
    if fabrication is not None and fabrication.answer_span is not None:
        fab_span = original_span(where, fabrication.answer_span)
        fabrication = fabrication.model_copy(update={"answer_span": fab_span, "text": text[slice(*fab_span)]})
    return Finding(finding.check, span, finding.note, finding.lower_to, finding.category, fabrication)


class _Answer:
    """The request with what the checks share worked out once."""

    def __init__(self, request: JudgeRequest):
        self.request = request
        self.text = request.answer
        self.passages = request.passages

    @cached_property
    def quantities(self) -> list[Quantity]:
        return quantities(self.text)

    @cached_property
    def quotations(self) -> list[Quotation]:
        return quotations(self.text)

    @cached_property
    def provenance(self) -> list[ProvenanceMention]:
        return provenance_mentions(self.text, self.request)

    @cached_property
    def sentences(self) -> list[Span]:
        return split_sentences(self.text)

    @cached_property
    def sentence_index(self) -> _SpanIndex:
        index = _SpanIndex()
        for position, span in enumerate(self.sentences):
            index.add(span, position)
        return index

    def values_in_text(self, wanted: Sequence[Quantity]) -> set[str]:
        """The values of `wanted` that some passage's text gives (never their headers).

        Reading a passage's quantities is the costly part of the checks (about 0.4 ms for 1,500
        characters the first time a passage is seen), and an answer's numbers usually stand as
        written in a few sentences of the passages: so the pieces of the passages
        (judges.text.quantity_pieces, about a sentence each) where a wanted value stands as
        written are read first, and reading stops once every value is found. A value found
        nowhere still reads them all; which are found does not depend on the order."""
        forms: dict[str, set[str]] = {}
        for quantity in wanted:
            forms.setdefault(quantity.value, set()).add(quantity.text)
        return values_in([passage.text for passage in self.passages], forms)


# --- 1. quotations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Quotation:
    span: Span  # with the quotation marks
    inner: Span  # without them


_DOUBLE_QUOTED = re.compile(r"[\"“„](?P<body>[^\"“”„\n]+)[\"”]")
# An opening single quote follows a space, a bracket or the start and is followed by a non-space;
# a closing one follows a non-space and is followed by no letter. "don't" and "riders' cards" are
# neither, so apostrophes are not read as quotation marks.
_SINGLE_QUOTED = re.compile(r"(?<![\w'‘’])['‘](?P<body>[^\s'‘’](?:[^\n]*?[^\s'‘’])?)['’](?![\w'‘’])")


def quotations(text: str) -> list[Quotation]:
    """Quotations long enough to check: QUOTE_MIN_WORDS words or QUOTE_MIN_CHARS characters."""
    found: list[Quotation] = []
    taken = _Mask(len(text))
    for pattern in (_DOUBLE_QUOTED, _SINGLE_QUOTED):
        for match in pattern.finditer(text):
            body = match.group("body").strip()
            if len(body.split()) < QUOTE_MIN_WORDS and len(body) < QUOTE_MIN_CHARS:
                continue
            if _is_title(body):
                continue
            if taken.touches(match.span()):
                continue
            found.append(Quotation(span=match.span(), inner=match.span("body")))
            taken.add(match.span())
    return sorted(found, key=lambda q: q.span)


_TITLE_SMALL_WORDS = frozenset("a an and as at but by for from in into of on or the to vs via with".split())
_TITLE_MAX_WORDS = 10


def _is_title(body: str) -> bool:
    """A name or title in quotation marks ("Beauty and the Beast", "Ride to Learn"), not a
    quotation: at most _TITLE_MAX_WORDS words, every one capitalized but small connecting words."""
    words = re.findall(r"[^\W_][\w'’-]*", body)
    if not words or len(words) > _TITLE_MAX_WORDS:
        return False
    significant = [w for w in words if w.lower() not in _TITLE_SMALL_WORDS or w is words[0]]
    return all(w[0].isupper() or w[0].isdigit() for w in significant)


def check_quotations(answer: _Answer) -> list[Finding]:
    findings = []
    for quotation in answer.quotations:
        if find_in_passages(answer.text[slice(*quotation.inner)], answer.passages) is not None:
            continue
        quoted = answer.text[slice(*quotation.span)]
        reason = f"{quoted} appears in no passage"
        findings.append(Finding(
            check="quote", span=quotation.span, note=f"Quote check: {reason}.", lower_to="UNSUPPORTED",
            category="quote",
            fabrication=Fabrication(kind="quote", text=quoted, answer_span=quotation.span, reason=reason),
        ))
    return findings


# --- text matching: the one function to swap for judges.locate -------------------------------------

_FOLD = str.maketrans({
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "«": '"', "»": '"',
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "\u00ad": "",
})
_SPACES = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\.\.\.+|\[\.\.\.\]")
_EDGE_PUNCTUATION = " .,;:!?\"'"


_CLOSERS = frozenset(",.;:!?)]}")
_OPENERS = frozenset("([{")
_SPACE_BEFORE_CLOSER = re.compile(r" (?=[,.;:!?)\]}])")
_SPACE_AFTER_OPENER = re.compile(r"(?<=[(\[{]) ")


def _fold(text: str) -> str:
    """NFKC, case-folded, quotes and dashes unified, whitespace runs as one space, and no space
    before closing punctuation or after an opening bracket (tokenized text writes "Veeram (
    Valour ) , 2014")."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).translate(_FOLD).casefold())
    return _SPACE_AFTER_OPENER.sub("", _SPACE_BEFORE_CLOSER.sub("", folded))


@lru_cache(maxsize=1024)
def _folded_passage(text: str) -> str:
    return _fold(text)


def find_in_passages(needle: str, passages: Sequence[Passage]) -> str | None:
    """The id of the first passage whose text contains `needle` after normalization, or None.

    Normalization is `_fold` on both sides, word boundaries at both ends, the needle's outer
    punctuation ignored, and an ellipsis in the needle ("...", "…", "[...]") matching any gap
    within the same passage. This is the only place the checks match text against passages, so
    it can be replaced by the evidence locator (judges.locate) when that lands.
    """
    pieces = [piece.strip(_EDGE_PUNCTUATION) for piece in _ELLIPSIS.split(_fold(needle))]
    pieces = [piece for piece in pieces if piece]
    if not pieces:
        return None
    patterns = [re.compile(r"(?<!\w)" + re.escape(piece) + r"(?!\w)") for piece in pieces]
    for passage in passages:
        haystack = _folded_passage(passage.text)
        position = 0
        for pattern in patterns:
            match = pattern.search(haystack, position)
            if match is None:
                break
            position = match.end()
        else:
            return passage.id
    return None


def _locate_in_answer(text: str, answer: str) -> Span | None:
    """Where a claim's text stands in the answer: verbatim, else after normalization."""
    needle = text.strip()
    if not needle:
        return None
    start = answer.find(needle)
    if start >= 0:
        return start, start + len(needle)
    folded, where = _fold_with_offsets(answer)
    target = _fold(needle).strip()
    start = folded.find(target) if target else -1
    if start < 0:
        return None
    return where[start], where[start + len(target) - 1] + 1


def _fold_with_offsets(text: str) -> tuple[str, list[int]]:
    """`_fold(text)` with, for each character of it, the index in `text` it came from."""
    out: list[str] = []
    where: list[int] = []
    index = 0
    while index < len(text):
        end = index + 1
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1  # a base character and its combining marks normalize together
        for char in unicodedata.normalize("NFKC", text[index:end]).translate(_FOLD).casefold():
            if char.isspace():
                if out and (out[-1] == " " or out[-1] in _OPENERS):
                    continue
                char = " "
            elif char in _CLOSERS and out and out[-1] == " ":
                out.pop()
                where.pop()
            out.append(char)
            where.append(index)
        index = end
    return "".join(out), where


# --- 2. numbers ------------------------------------------------------------------------------------


def check_numbers(answer: _Answer) -> list[Finding]:
    skip = _Mask(len(answer.text), [q.span for q in answer.quotations] + [m.span for m in answer.provenance])
    checked = [quantity for quantity in answer.quantities if not skip.covers(quantity.span)]
    in_text = answer.values_in_text(checked) if checked else set()
    findings = []
    for quantity in checked:
        if quantity.value in in_text:
            continue
        is_date = quantity.kind == "date"
        reason = f"'{quantity.text}' appears in no passage"
        findings.append(Finding(
            check="number", span=quantity.span, note=f"{'Date' if is_date else 'Number'} check: {reason}.",
            lower_to="UNSUPPORTED", category=_quantity_category(quantity),
            fabrication=Fabrication(
                kind="date" if is_date else "statistic", text=quantity.text, answer_span=quantity.span,
                reason=reason,
            ),
        ))
    return findings


def _quantity_category(quantity: Quantity) -> str:
    return {"date": "date", "money": "price"}.get(quantity.kind, "statistic")


# --- 3. citations -----------------------------------------------------------------------------------

_CITATION_MARKER = re.compile(
    r"\[\s*(?P<square>P?\d+(?:\s*[,;]\s*P?\d+)*)\s*\]|\(\s*(?P<round>P\d+(?:\s*[,;]\s*P?\d+)*)\s*\)",
    re.IGNORECASE,
)
_MARKER_ID = re.compile(r"P?\d+", re.IGNORECASE)


@dataclass(frozen=True)
class CitationMarker:
    text: str
    span: Span
    cited: tuple[str, ...]  # as written: "P3", "3"


def citation_markers(text: str) -> list[CitationMarker]:
    return [
        CitationMarker(match.group(), match.span(),
                       tuple(_MARKER_ID.findall(match.group("square") or match.group("round"))))
        for match in _CITATION_MARKER.finditer(text)
    ]


def resolve_citation(cited: str, passages: Sequence[Passage]) -> str | None:
    """The id of the passage a citation names, or None: "P3" or "p3" names "P3" (or a passage
    whose id is "3"); "3" names the passage "3", else "P3" when the passages are P-numbered."""
    ids = {passage.id for passage in passages}
    number = cited.lstrip("Pp")
    for candidate in (cited, cited.upper(), number, f"P{number}"):
        if candidate in ids:
            return candidate
    return None


def check_citations(answer: _Answer) -> list[Finding]:
    markers = citation_markers(answer.text)
    if not markers:
        return []
    by_sentence: dict[Span, list[CitationMarker]] = {}
    for marker in markers:
        sentence = _citing_sentence(answer, marker)
        by_sentence.setdefault(sentence, []).append(marker)

    findings = []
    p_numbered = all(re.fullmatch(r"P\d+", p.id or "") for p in answer.passages)
    # What a sentence says, without its markers and provenance phrases (check 4 judges those).
    said = _blank(answer.text, [m.span for m in markers] + [m.span for m in answer.provenance])
    for sentence, cited_here in by_sentence.items():
        existing: list[str] = []
        invented: list[Finding] = []
        for marker in cited_here:
            for cited in marker.cited:
                pid = resolve_citation(cited, answer.passages)
                if pid is not None:
                    existing.append(pid)
                    continue
                shown = f"P{cited}" if cited.isdigit() and p_numbered else cited.upper()
                note = f"Citation check: {marker.text} cites {shown}, which does not exist."
                invented.append(Finding(
                    check="citation", span=sentence, note=note, lower_to="UNSUPPORTED", category="citation",
                    fabrication=Fabrication(kind="citation", text=marker.text, answer_span=marker.span,
                                            reason=f"cites {shown}, which does not exist"),
                ))
        if not existing:
            # Every passage the sentence cites is invented: nothing it cites supports it.
            findings.extend(invented)
            continue
        # Some cited passages exist: the sentence stands or falls with them (checked below).
        findings.extend(
            Finding(f.check, f.span, f.note, "PARTIALLY_SUPPORTED", f.category, f.fabrication)
            for f in invented
        )
        cited_ids = list(dict.fromkeys(existing))
        problem = _unsupported_by(said[slice(*sentence)], [answer.request.passage(pid) for pid in cited_ids])
        if problem is None:
            continue
        last = cited_here[-1]
        names = ", ".join(cited_ids)
        verb = "does" if len(cited_ids) == 1 else "do"
        reason = f"{names} {verb} not support this sentence"
        findings.append(Finding(
            check="citation", span=sentence, note=f"Citation check: {reason} ({problem}).",
            lower_to="PARTIALLY_SUPPORTED", category="citation",
            fabrication=Fabrication(kind="citation", text=last.text, answer_span=last.span,
                                    reason=f"{reason} ({problem})"),
        ))
    return findings


def _citing_sentence(answer: _Answer, marker: CitationMarker) -> Span:
    """The sentence a marker cites for: the one it stands in, or the one before when the marker
    opens its sentence ("... free. [P2] Youth pay ...") or is all the sentence has."""
    found = answer.sentence_index.overlapping((marker.span[0], marker.span[0] + 1))
    if not found:
        return marker.span
    position = found[0]
    sentence = answer.sentences[position]
    before = answer.text[sentence[0]:marker.span[0]]
    if position > 0 and not _CITATION_MARKER.sub("", before).strip():
        previous = answer.sentences[position - 1]
        if "\n" not in answer.text[previous[1]:sentence[0]]:  # a marker opening a line cites that line
            return previous
    return sentence


# A sentence saying the sources are silent ("the policy does not specify ...") asserts nothing a
# cited passage could contain, and "Sources: [1], [2]" only lists them: neither is checked for
# support (a citation of a missing passage still is).
_SILENCE = re.compile(
    r"\b(?:not (?:mentioned|specified|stated|given|provided|listed|included|addressed|covered|clear)"
    r"|no (?:information|mention|details?|data)|(?:does|do|did)(?:n't| not) (?:specify|mention|say|state|list"
    r"|provide|include|address|cover|indicate))\b",
    re.IGNORECASE,
)
_REFERENCE_WORDS = frozenset("reference source citation context passage document see cited".split())


def _unsupported_by(text: str, cited: list[Passage | None]) -> str | None:
    """Why the `cited` passages together do not support `text` (a sentence), or None when they do."""
    if _SILENCE.search(text) or not set(content_words(text)) - _REFERENCE_WORDS:
        return None
    values = frozenset().union(*(quantity_values(p.text) for p in cited if p is not None))
    missing_numbers = [q.text for q in quantities(text) if q.value not in values]
    if missing_numbers:
        return "it does not state " + ", ".join(f"'{n}'" for n in missing_numbers)
    words = set(content_words(text))
    if not words:
        return None
    cited_words = frozenset().union(*(_passage_words(p.text) for p in cited if p is not None))
    recall = len(words & cited_words) / len(words)
    if recall < CITATION_MIN_RECALL:
        return f"only {round(recall * 100)}% of the sentence's words are there"
    return None


@lru_cache(maxsize=1024)
def _passage_words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


# --- 4. provenance ----------------------------------------------------------------------------------


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
_LOOSE_CUE = r"as of|updated|published|revised|current|dated|posted|reviewed|retrieved|accessed|downloaded"
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
    taken = _Mask(len(text), [m.span for m in mentions])
    mentions += [m for m in _named_sources(text, request) if not taken.touches(m.span)]
    return sorted(mentions, key=lambda m: m.span)


def check_provenance(answer: _Answer) -> list[Finding]:
    findings = []
    for mention in answer.provenance:
        if mention.verdict != "disagrees":
            continue
        target = answer.text[slice(*mention.target)]
        findings.append(Finding(
            check="provenance", span=mention.span, note=f"Provenance check: {mention.reason}.",
            lower_to="UNSUPPORTED", category="provenance",
            fabrication=Fabrication(kind="date" if mention.kind == "date" else "entity", text=target,
                                    answer_span=mention.target, reason=mention.reason),
        ))
    return findings


# Words that may surround a provenance statement without stating a policy fact.
PROVENANCE_FILLER = frozenset(
    """information info data answer detail fact figure source sourced fetched retrieved accessed
    downloaded updated last published current currently latest snapshot date dated version copy
    based come came taken drawn pulled obtained according section page website site document
    documentation policy provenance record reflect accurate valid here above below note passage
    retrieval checked collected captured revised posted reviewed reference referenced cited see
    available found listed stated""".split()
)


def provenance_verdict(sentence: str, request: JudgeRequest) -> ProvenanceVerdict | None:
    """Whether `sentence` is a provenance statement that agrees with the passage headers.

    "disagrees": it makes a provenance claim (fetch date, agency, document, section, source URL)
    that no passage header gives. "agrees": every provenance claim in it agrees with a header and
    it says nothing else: no quantity and no content word outside its provenance phrases beyond
    PROVENANCE_FILLER (so "This is from the Fare Policy, section 4.2 (fetched 2026-08-16)."
    agrees, while "As of 2026-08-16, seniors pay $1.35." is None: its fare must be judged against
    the passage text as usual). None: otherwise. `provenance_mentions` gives the phrases themselves,
    for a judge that wants to set them aside and judge the rest of a mixed sentence.
    """
    mentions = [m for m in provenance_mentions(sentence, request) if m.verdict is not None]
    if not mentions:
        return None
    if any(m.verdict == "disagrees" for m in mentions):
        return "disagrees"
    rest = _blank(sentence, [m.span for m in mentions] + [m.span for m in citation_markers(sentence)])
    if quantities(rest) or set(content_words(rest)) - PROVENANCE_FILLER:
        return None
    return "agrees"


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
                    text_values = frozenset().union(*(quantity_values(p.text) for p in request.passages))
                if quantity.value in text_values:
                    mentions.append(ProvenanceMention("date", span, quantity.span, None))
                    continue
            shown = ", ".join(fetched) if fetched else "no passage gives a fetch date"
            preposition = "on" if len(quantity.value) == 10 or quantity.value.startswith("--") else "in"
            verdict = "disagrees"
            reason = f"no passage was fetched {preposition} {quantity.value.lstrip('-')} (fetched: {shown})"
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
            sid for sid in _SECTION_ID.findall(match.group("ids"))
            if not any(h == sid.lower() or h.startswith(sid.lower() + ".") or sid.lower().startswith(h + ".")
                       for h in headers if h)
        ]
        if not unknown:
            verdict, reason = "agrees", ""
        elif all(_text_names_section(sid, request.passages) for sid in unknown):
            verdict, reason = None, ""
        else:
            shown = ", ".join(headers) if headers else "none"
            names = " or ".join(unknown)
            verdict, reason = "disagrees", f"no passage header names section {names} (sections: {shown})"
        mentions.append(ProvenanceMention("section", match.span(), match.span(), verdict, reason))
    return mentions


def _text_names_section(sid: str, passages: Sequence[Passage]) -> bool:
    pattern = re.compile(rf"(?:section|sec\.|§)\s*{re.escape(sid)}(?![\w.]?\d)", re.IGNORECASE)
    return any(pattern.search(p.text) for p in passages)


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
        if any(h == key or h.split("#")[0].rstrip("/") == key or h.startswith((key + "/", key + "#"))
               for h in headers):
            verdict, reason = "agrees", ""
        elif any(url.lower() in p.text.lower() for p in request.passages):
            verdict, reason = None, ""
        else:
            verdict, reason = "disagrees", f"no passage's source is {url}"
        mentions.append(ProvenanceMention("url", span, span, verdict, reason))
    return mentions


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
    while index < len(tokens) and tokens[index].group().lower() in ("the", "our", "a", "an", "its", "their"):
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
    clause_start = max((m.end() for m in _CLAUSE_END.finditer(text, reach, position)), default=reach)
    clause_start = max(clause_start, max(text.rfind(c, clause_start, position) + 1 for c in ",:(\""))
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
        _is_capitalized(tokens[index - 1].group()) or tokens[index - 1].group().lower() in _CONNECTORS
    ):
        index -= 1
    while index < len(tokens) and tokens[index].group().lower() in _CONNECTORS | {"the"}:
        index += 1
    if index >= len(tokens) or not _is_capitalized(tokens[index].group()):
        return None
    return tokens[index].start(), tokens[-1].end()


def _strip_possessive(text: str, end: int) -> int:
    return end - 2 if text[end - 2:end] in ("'s", "’s") else end


def _judge_name(text: str, span: Span, name: Span, request: JudgeRequest) -> ProvenanceMention | None:
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
    fields = [f for f in (passage.agency, passage.title, passage.section, passage.tag) if f]
    words = set(content_words(" ".join(fields)))
    for field in (passage.agency, passage.title):
        if field:
            initials = "".join(w[0] for w in re.findall(r"[A-Za-z][\w'-]*", field) if w[0].isupper())
            if len(initials) >= 2:
                words.add(initials.lower())
    return frozenset(words)


# --- 5-7. prompt injection and support ------------------------------------------------------------

# A SUPPORTED claim the judge gave no verified quote for must have at least this weighted share
# of its content words (names count double) in ONE sentence of one trusted passage, or it is
# lowered to PARTIALLY_SUPPORTED. Its cost (python bench/support_check_cost.py: the offline
# judge's SUPPORTED claims with their quotes taken away): at 0.5 it lowers 3.0% (HAGRID) and 4.9%
# (FaithBench) of them, touching 4.5% and 11.9% of the hallucination-free answers; at 0.6 9.2% and
# 15.1% (12.2% and 34.6% of those answers), at 0.7 18.0% and 28.4%. 0.5 still stops a claim made of
# words no passage sentence has ("bought with the GoldWave mobile wallet").
SUPPORT_MIN = 0.5
# When anything in the request addresses the judge, the judge's SUPPORTED is suspect: every
# SUPPORTED claim, quoted or not, must have ALL its content words in one trusted passage sentence.
SUPPORT_MIN_UNDER_ATTACK = 1.0
SUPPORT_NAME_WEIGHT = 2.0
SUPPORT_MIN_WORDS = 3  # claims with fewer content words ("Yes, it is.") are not checked


def trusted_passages(passages: Sequence[Passage]) -> tuple[list[Passage], dict[str, str]]:
    """The passages with those that address the judge emptied, and why each was.

    A passage whose text or header fields hold an instruction to the judge, forged data markers or
    hidden text was written, at least in part, by someone trying to steer the judge, and nothing
    tells which part: none of it is evidence. It keeps its id (a citation of it is not a citation
    of a missing passage) but its text and header say nothing, so no number, quotation, citation
    or provenance statement is supported by it."""
    trusted: list[Passage] = []
    poisoned: dict[str, str] = {}
    for passage in passages:
        reason = _poison_reason(passage)
        if reason is None:
            trusted.append(passage)
            continue
        poisoned[passage.id] = reason
        trusted.append(passage.model_copy(update={
            "text": " ", "tag": None, "agency": None, "title": None, "section": None,
            "source_url": None, "fetched_at": None,
        }))
    return trusted, poisoned


def _poison_reason(passage: Passage) -> str | None:
    found = find_injections(passage.text, passage=True)
    if found:
        return f"its text has {found[0].describe()}"
    for name in ("tag", "agency", "title", "section", "source_url"):
        value = getattr(passage, name)
        if value and (found := find_injections(value)):
            return f"its {name} has {found[0].describe()}"
    return None


def check_answer_injections(answer: _Answer) -> list[Finding]:
    """Text in the answer that addresses the judge (or hides text) is no answer to a rider: the
    claims over it become UNSUPPORTED (a claim is added for it when none covers it)."""
    findings = []
    for injection in find_injections(answer.text):
        findings.append(Finding(
            check="injection", span=injection.span, lower_to="UNSUPPORTED", category="other",
            note=f"Injection check: the answer addresses the judge: {injection.describe()}.",
        ))
    return findings


def check_evidence(answer: _Answer, result: JudgeResult, poisoned: dict[str, str]) -> list[Finding]:
    """A SUPPORTED claim whose quotes are all found only in passages that address the judge rests
    on the attacker's text: PARTIALLY_SUPPORTED. (Quotes found nowhere are the profiles' concern:
    judges.locate.distrust_unverified_quotes.)"""
    if not poisoned:
        return []
    findings = []
    for claim in result.claims:
        span = _claim_span(claim, answer.text)
        found = [e for e in claim.evidence if e.match != "not_found"]
        if claim.label != "SUPPORTED" or span is None or not found:
            continue
        if all(e.passage_id in poisoned for e in found):
            pids = ", ".join(sorted({e.passage_id for e in found}))
            findings.append(Finding(
                check="evidence", span=span, lower_to="PARTIALLY_SUPPORTED", category=claim.category,
                note=f"Evidence check: the judge's quotes are only in {pids}, which addresses the judge.",
            ))
    return findings


def _steering_texts(request: JudgeRequest) -> list[str]:
    """The request's texts that are not evidence but reach the judge: question and prior turns."""
    return [request.question, *(turn.content for turn in request.prior_turns)]


def check_support(answer: _Answer, result: JudgeResult, under_attack: bool = False) -> list[Finding]:
    """A SUPPORTED claim without a quote found in a trusted passage (fare_policy and sentence_map
    report none; a talked-round judge quotes the answer itself or the attacker's passage) must
    share most of its content words with one sentence of one trusted passage (SUPPORT_MIN, names
    weighing double): the checks look for the quote the judge did not give. Statements that the
    sources are silent and claims of fewer than SUPPORT_MIN_WORDS content words are not checked.
    Lowers to PARTIALLY_SUPPORTED: a word count is a doubt, not a verdict.

    Claims with a verified quote are left to the judge: measured on the dev sets of README.md's
    "Accuracy", checking them too lowered the offline judge's balanced accuracy (FaithBench 0.651
    -> 0.630, HAGRID 0.782 -> 0.748 at 0.6), as one sentence is a narrower window than its own.
    Below SUPPORT_MIN means strictly below: half the words of "Seniors can ride free on holidays"
    pass outside an attack.

    `under_attack` (something in the request addresses the judge): every SUPPORTED claim is
    checked, quoted or not, at SUPPORT_MIN_UNDER_ATTACK. A judge that may have been talked round
    can quote a real sentence that shares most but not all of a fabricated claim's words
    ("Children under 5 ride free" for "Seniors ride free"); a request that tries to steer the
    judge should reach a human anyway."""
    minimum = SUPPORT_MIN_UNDER_ATTACK if under_attack else SUPPORT_MIN
    findings = []
    for claim in result.claims:
        span = _claim_span(claim, answer.text)
        if claim.label != "SUPPORTED" or span is None:
            continue
        if not under_attack and _has_trusted_quote(claim, answer.passages):
            continue
        text = strip_invisible(answer.text[slice(*span)])[0]
        if _SILENCE.search(text):
            continue
        weights: dict[str, float] = {}
        # Words inside a quantity ("January" of "January 5, 2027") are check 2's to match, in
        # whatever form the passage writes them; a statement of where the information comes from
        # is check 4's, against the headers, which no passage sentence holds.
        inside = _Mask(len(text), [q.span for q in quantities(text)]
                       + [m.span for m in provenance_mentions(text, answer.request)])
        for token in content_tokens(text):
            if inside.touches(token.span):
                continue
            weight = SUPPORT_NAME_WEIGHT if token.is_name else 1.0
            weights[token.stem] = max(weights.get(token.stem, 0.0), weight)
        if len(weights) < SUPPORT_MIN_WORDS:
            continue
        total = sum(weights.values())
        best, best_where = 0.0, None
        for passage in answer.passages:
            for sentence, sentence_stems in _sentence_stems(passage.text):
                share = sum(w for stem, w in weights.items() if stem in sentence_stems) / total
                if share > best:
                    best, best_where = share, (passage.id, sentence)
        if best >= minimum - 1e-9:
            continue
        where = f" (closest: {best_where[0]}, \"{_clip(best_where[1])}\")" if best_where else ""
        findings.append(Finding(
            check="support", span=span, lower_to="PARTIALLY_SUPPORTED", category=claim.category,
            note=(f"Support check: at most {best:.0%} of the claim's words are in any one passage "
                  f"sentence{where}{'; the request addresses the judge, so all must be' if under_attack else ''}."),
        ))
    return findings


def _has_trusted_quote(claim: Claim, passages: Sequence[Passage]) -> bool:
    """The judge quoted text that stands in a passage that does not address the judge."""
    trusted = {p.id for p in passages if p.text.strip()}
    return any(e.match != "not_found" and e.passage_id in trusted for e in claim.evidence)


@lru_cache(maxsize=256)
def _sentence_stems(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    clean = strip_invisible(text)[0]
    return tuple((clean[s:e], stems(clean[s:e])) for s, e in split_sentences(clean))


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- applying findings ---------------------------------------------------------------------------


MAX_NOTES_PER_CLAIM = 12  # an answer full of findings must not grow one explanation without bound


def _apply(findings: list[Finding], answer: _Answer, result: JudgeResult) -> JudgeResult:
    if not findings:
        return result
    claims = [claim.model_copy(deep=True) for claim in result.claims]
    fabrications = list(result.fabrications)
    reported = _Reported(len(answer.text), fabrications)
    spans = [_claim_span(claim, answer.text) for claim in claims]
    placed = _SpanIndex()
    for index, span in enumerate(spans):
        if span is not None:
            placed.add(span, index)
    can_add_claims = all(span is not None for span in spans)
    labels_changed = added_fabrication = False
    changed: list[str] = []  # ids of claims the checks added or lowered

    # First every claim the findings need is added, then every finding is attached to every claim
    # it overlaps. In one pass a finding would miss a claim that a later finding adds, and checking
    # the result again would attach it then: the checks must be idempotent.
    for finding in findings:
        if finding.fabrication is not None and not reported.has(finding.fabrication):
            fabrications.append(finding.fabrication)
            reported.add(finding.fabrication)
            added_fabrication = True
        if can_add_claims and not _hits(finding, answer, claims, spans, placed):
            span = _uncovered_span(answer, finding.span, placed, spans)
            claims.append(Claim(
                id=_next_claim_id(claims), text=answer.text[slice(*span)], answer_span=span,
                label=finding.lower_to, category=finding.category,
            ))
            spans.append(span)
            placed.add(span, len(claims) - 1)
            labels_changed = True
            changed.append(claims[-1].id)

    # Notes already there count towards the cap, so checking twice adds none.
    notes = {i: sum(1 for f in findings if f.note in claim.explanation) for i, claim in enumerate(claims)}
    for finding in findings:
        for i in _hits(finding, answer, claims, spans, placed):
            claim = claims[i]
            lowered = _lower(claim.label, finding.lower_to)
            if lowered != claim.label:
                claim.label = lowered
                labels_changed = True
                if claim.id not in changed:
                    changed.append(claim.id)
            if notes[i] < MAX_NOTES_PER_CLAIM and finding.note not in claim.explanation:
                claim.explanation = f"{claim.explanation} {finding.note}".strip()
                notes[i] += 1

    score, verdict = result.grounding_score, result.verdict
    if labels_changed:
        score = min(score, grounding_score(claims))
        verdict = _less_grounded(verdict, verdict_for(claims))
    if added_fabrication and verdict == "GROUNDED":
        verdict = "MOSTLY_GROUNDED"
    return result.model_copy(update={
        "claims": claims,
        "fabrications": fabrications,
        "grounding_score": score,
        "verdict": verdict,
        "rewrite_note": _rewrite_note(result.rewrite_note, [c for c in claims if c.id in changed]),
    })


def _hits(finding: Finding, answer: _Answer, claims: list[Claim], spans: list[Span | None],
          placed: _SpanIndex) -> list[int]:
    """The claims a finding belongs to: those whose span overlaps it, else spanless claims whose
    text shares its text."""
    hits = placed.overlapping(finding.span)
    if not hits:
        hits = [i for i, span in enumerate(spans) if span is None
                and _texts_overlap(answer.text[slice(*finding.span)], claims[i].text)]
    return hits


def _lower(label: str, to: str) -> str:
    """`label` lowered to `to` if that is lower; never raised. CONTRADICTED stays CONTRADICTED."""
    return to if LABEL_RANK[to] > LABEL_RANK[label] else label


def _less_grounded(first: str, second: str) -> str:
    return max(first, second, key=VERDICT_RANK.__getitem__)


class _Reported:
    """Fabrications already in the result. A new one is already reported when one of the same
    kind covers (at least) the same answer text, or, without a span, has the same text."""

    def __init__(self, length: int, fabrications: list[Fabrication]):
        self.length = length
        self.masks: dict[str, _Mask] = {}
        self.unplaced: set[tuple[str, str]] = set()
        for fabrication in fabrications:
            self.add(fabrication)

    def add(self, fabrication: Fabrication) -> None:
        span = fabrication.answer_span
        if span is None or not 0 <= span[0] < span[1] <= self.length:
            self.unplaced.add((fabrication.kind, fabrication.text))
        else:
            self.masks.setdefault(fabrication.kind, _Mask(self.length)).add(span)

    def has(self, fabrication: Fabrication) -> bool:
        if fabrication.answer_span is None:
            return (fabrication.kind, fabrication.text) in self.unplaced
        mask = self.masks.get(fabrication.kind)
        return mask is not None and mask.covers(fabrication.answer_span)


def _claim_span(claim: Claim, answer: str) -> Span | None:
    span = claim.answer_span
    if span is not None and 0 <= span[0] < span[1] <= len(answer):
        return span
    return _locate_in_answer(claim.text, answer)


def _uncovered_span(answer: _Answer, target: Span, placed: _SpanIndex, spans: list[Span | None]) -> Span:
    """The stretch of the target's sentence(s) around `target` that no claim covers."""
    sentences = answer.sentence_index.spans_overlapping(target)
    start = min([target[0]] + [s[0] for s in sentences])
    end = max([target[1]] + [s[1] for s in sentences])
    for span in (spans[i] for i in placed.overlapping((start, end))):
        if span is None or _overlaps(span, target):
            continue
        if span[1] <= target[0]:
            start = max(start, span[1])
        elif span[0] >= target[1]:
            end = min(end, span[0])
    text = answer.text
    # Trim what joins the stretch to its neighbours: spaces, commas, "and", "but", ...
    while start < target[0]:
        joint = _LEADING_JOINT.match(text, start, target[0])
        if joint is None or joint.end() == start:
            break
        start = joint.end()
    while end > target[1]:
        joint = _TRAILING_JOINT.search(text, target[1], end)
        if joint is None or joint.start() == end:
            break
        end = joint.start()
    return start, end


_JOINT_WORDS = r"and|or|but|so|while|whereas|although|though"
_LEADING_JOINT = re.compile(rf"(?:[\s,;:)]|(?:{_JOINT_WORDS})\b)+", re.IGNORECASE)
_TRAILING_JOINT = re.compile(rf"(?:[\s,;:(]|\b(?:{_JOINT_WORDS}))+$", re.IGNORECASE)


def _next_claim_id(claims: list[Claim]) -> str:
    taken = {claim.id for claim in claims}
    number = len(claims) + 1
    while f"c{number}" in taken:
        number += 1
    return f"c{number}"


def _rewrite_note(note: str, changed: list[Claim]) -> str:
    """The backend's note, plus what to do about each claim the checks added or lowered."""
    to_remove = [c.id for c in changed if c.label in ("UNSUPPORTED", "CONTRADICTED")]
    to_narrow = [c.id for c in changed if c.label == "PARTIALLY_SUPPORTED"]
    if not (to_remove or to_narrow):
        return note
    additions = []
    if to_remove:
        additions.append(f"Remove or source {', '.join(to_remove)} (deterministic checks).")
    if to_narrow:
        additions.append(
            f"Narrow {', '.join(to_narrow)} to what the cited passages say (deterministic checks)."
        )
    return " ".join([note.strip(), *additions]).strip()


# --- small helpers -------------------------------------------------------------------------------


def _overlaps(first: Span, second: Span) -> bool:
    return first[0] < second[1] and second[0] < first[1]


def _texts_overlap(first: str, second: str) -> bool:
    first, second = _fold(first).strip(), _fold(second).strip()
    return bool(first and second) and (first in second or second in first)


class _Mask:
    """Which characters of a text some span covers."""

    def __init__(self, length: int, spans: Sequence[Span] = ()):
        self.bits = bytearray(length + 1)
        for span in spans:
            self.add(span)

    def add(self, span: Span) -> None:
        self.bits[span[0]:span[1]] = b"\x01" * (span[1] - span[0])

    def touches(self, span: Span) -> bool:
        return self.bits.find(1, span[0], span[1]) >= 0

    def covers(self, span: Span) -> bool:
        return span[0] < span[1] and self.bits.find(0, span[0], span[1]) < 0


class _SpanIndex:
    """Spans (with a value each) found by overlap without scanning them all."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, int]] = []  # (start, end, value), sorted
        self.longest = 0

    def add(self, span: Span, value: int) -> None:
        bisect.insort(self.entries, (span[0], span[1], value))
        self.longest = max(self.longest, span[1] - span[0])

    def overlapping(self, span: Span) -> list[int]:
        first = bisect.bisect_left(self.entries, (span[0] - self.longest,))
        last = bisect.bisect_left(self.entries, (span[1],))
        return sorted(v for s, e, v in self.entries[first:last] if s < span[1] and span[0] < e)

    def spans_overlapping(self, span: Span) -> list[Span]:
        first = bisect.bisect_left(self.entries, (span[0] - self.longest,))
        last = bisect.bisect_left(self.entries, (span[1],))
        return [(s, e) for s, e, _ in self.entries[first:last] if s < span[1] and span[0] < e]


def _blank(text: str, spans: list[Span]) -> str:
    """`text` with each span replaced by spaces, so offsets stay valid."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
