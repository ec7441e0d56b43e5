"""Plain-text helpers shared by the judges: sentence spans, content words and numbers.

Everything here is deterministic and works on character offsets into the original text, so a span
computed here can be stored, highlighted and sliced back out byte-exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache

import pysbd

Span = tuple[int, int]

# --- sentences -------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]+")


@cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _pysbd_sentences(line: str) -> list[str]:
    # Segmenter.segment() finds each sentence's offsets by compiling a fresh regex per sentence,
    # which costs more than the segmentation itself and can report an earlier repeat of the
    # sentence. Its processor gives the same sentences; `_split_line` places them with str.find.
    # The processor keeps no state between calls, so one segmenter serves every thread.
    return _segmenter().processor(line).process()


def split_sentences(text: str) -> list[Span]:
    """Half-open (start, end) offsets of each sentence in `text`, in order, trimmed of whitespace.

    Every line is split on its own first, so a list item or a heading on its own line is its own
    sentence. Any non-blank text pysbd fails to account for becomes a sentence of its own rather
    than vanishing, so the spans cover all of the text's content.
    """
    spans: list[Span] = []
    for line in _LINE.finditer(text):
        spans.extend(_split_line(line.group(), offset=line.start()))
    return spans


def _split_line(line: str, offset: int) -> list[Span]:
    if not line.strip():
        return []
    spans: list[Span] = []
    position = 0
    for sentence in _pysbd_sentences(line):
        sentence = sentence.strip()
        start = line.find(sentence, position) if sentence else -1
        if start < 0:
            continue  # not verbatim in the line; the gap check below keeps its text anyway
        spans.extend(_trimmed(line, position, start))  # text pysbd skipped over
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    spans.extend(_trimmed(line, position, len(line)))
    return [(start + offset, end + offset) for start, end in spans]


def _trim(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _trimmed(text: str, start: int, end: int) -> list[Span]:
    """text[start:end] without its outer whitespace, as a list of zero or one span."""
    start, end = _trim(text, start, end)
    return [(start, end)] if start < end else []


# Ends of rough pieces: sentence punctuation (and any closing quote or bracket) before a space,
# or a line break. Cheap, but it also breaks after abbreviations such as "Sec." and "e.g.".
_PIECE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n")


def rough_pieces(text: str) -> list[Span]:
    """Sentence-like spans found by punctuation and line breaks alone: much faster than
    `split_sentences`, and finer, since nearly every boundary pysbd draws is one here too (about
    98% on news and Wikipedia text). Use it to find where to look, and `split_sentences` to quote.
    """
    spans: list[Span] = []
    start = 0
    for match in _PIECE_END.finditer(text):
        spans.extend(_trimmed(text, start, match.end()))
        start = match.end()
    spans.extend(_trimmed(text, start, len(text)))
    return spans


# --- content words ---------------------------------------------------------------------------

# Function words carry no checkable fact; dropping them makes word overlap mean something. Unit
# words are dropped too because `numbers` folds them into the value ("86 dollars" is 86).
STOPWORDS = frozenset(
    """
    cent cents dollar dollars percent
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing don done down during each either else
    etc even ever every few for from further get gets got had has have having he her here hers
    him his how however i if in into is isn it its itself just let may me might more most must
    my no nor not now of off on once only or other our ours out over own per please same shall
    she should so some such than that the their theirs them then there these they this those
    through thus to too under until up upon us very via was we were what when where whether
    which while who whom whose why will with within without would yes yet you your yours
    """.split()
)

_WORD = re.compile(r"[^\W\d_]+")


def content_words(text: str) -> list[str]:
    """Lowercased words with punctuation, digits and stopwords removed and plurals folded."""
    words = _WORD.findall(text.lower())
    return [_singular(word) for word in words if len(word) > 1 and word not in STOPWORDS]


@lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    # Just enough folding that "seniors" meets "senior" and "passes" meets "pass"; no stemmer.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# --- numbers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumberMention:
    """A number as written in the text (`text`, `span`) and its normalized `value`."""

    text: str
    span: Span
    value: str  # canonical decimal string: "$86", "86.00" and "86" all give "86"
    is_money: bool
    is_percent: bool

    @property
    def looks_like_year(self) -> bool:
        return not (self.is_money or self.is_percent) and re.fullmatch(r"(19|20)\d\d", self.value) is not None


# A citation marker such as [2] or [P3, P4] points at a passage; it is not a fact to check.
_CITATION = re.compile(r"\[\s*P?\d+(?:\s*[,;]\s*P?\d+)*\s*\]", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
# Digits glued to letters (P2, c1, COVID19) are names, not quantities; "1,500" keeps its comma
# only when it groups thousands, and the atomic group stops "2.75x" or "1,5000" from matching a
# shorter prefix. The sign, percent, plus, ordinal suffix and unit word stay in the match so a
# highlighted fabrication shows what the answer actually said.
_NUMBER = re.compile(
    r"(?:(?<![.,\d])(?P<money>[$€£])\s?|(?<![\w.,$€£]))"
    r"(?P<digits>(?>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?))"
    r"(?:(?P<suffix>%|\+|st|nd|rd|th)|\s?(?P<unit>dollars?|cents?|¢|percent))?"
    r"(?!\w)"
)


def numbers(text: str) -> list[NumberMention]:
    """Every number in `text` with its span, skipping citation markers like [P2]."""
    return [
        NumberMention(
            text=match.group(),
            span=match.span(),
            value=_value_of(match),
            is_money=match.group("money") is not None or match.group("unit") not in (None, "percent"),
            is_percent=match.group("suffix") == "%" or match.group("unit") == "percent",
        )
        for match in _number_matches(text)
    ]


def key_terms(text: str) -> frozenset[str]:
    """What two texts are compared on: content words plus normalized numbers."""
    return frozenset(content_words(text)) | number_values(text)


def number_values(text: str) -> set[str]:
    """Just the normalized values of `numbers(text)`: the cheap path for long passages."""
    return {_value_of(match) for match in _number_matches(text)}


def _number_matches(text: str) -> Iterator[re.Match[str]]:
    if not _DIGIT.search(text):
        return  # most sentences have no number; skip the slower pattern
    cited = [match.span() for match in _CITATION.finditer(text)] if "[" in text else []
    for match in _NUMBER.finditer(text):
        if not any(start <= match.start() < end for start, end in cited):
            yield match


def _value_of(match: re.Match[str]) -> str:
    return normalize_number(match.group("digits"), in_cents=match.group("unit") in ("cent", "cents", "¢"))


@lru_cache(maxsize=65536)
def normalize_number(digits: str, in_cents: bool = False) -> str:
    """Canonical form of a written number: "1,500" -> "1500", "86.00" -> "86", "2.75" -> "2.75".

    Amounts in cents become dollars, so "50 cents" meets "$0.50".
    """
    value = Decimal(digits.replace(",", ""))
    if in_cents:
        value = value / 100
    # normalize() drops trailing zeros; the "f" format stops it turning 1500 into 1.5E+3.
    return format(value.normalize(), "f")
