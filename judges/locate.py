"""The evidence locator: where a quote stands in the passages, and how well it matches.

    locate(quote, passages, preferred_pid=None) -> Located(passage_id, span, match, score)

A judge's quote is looked for in three steps of falling quality, each over every passage (the
preferred one first, then the others in order) before the next step is tried, so an exact match in
another passage beats a normalized match in the preferred one:

1. **exact**: `str.find` of the quote as given (in every passage), then of the quote with its
   outer whitespace trimmed. score 100.
2. **normalized**: both sides folded by `normalize_text` (NFKC, case-folding, whitespace runs
   collapsed to one space, every quotation mark and apostrophe (curly or straight, single or
   double) made "'", every Unicode dash made "-", zero-width and other invisible format
   characters dropped, no space before closing punctuation or after an opening bracket, so
   tokenized "Veeram ( Valour ) , 2014" is "Veeram (Valour), 2014"); punctuation and
   whitespace at the quote's edges are ignored, and an ellipsis in the quote ("...", "…", ". . .",
   "[...]") is a gap: its pieces must appear in order with at most GAP_MAX_CHARS characters between
   two pieces. score 100.
3. **fuzzy**: rapidfuzz on the normalized strings (`partial_ratio_alignment` finds the window, the
   window is then moved to word boundaries and scored with `fuzz.ratio` against the quote, so the
   score is the similarity of the quote to exactly the text returned). Accepted only when the score
   is at least FUZZY_FLOOR, the quote has at least MIN_FUZZY_CHARS normalized characters, and the
   match changes nothing the quote asserts: the same numbers, the same number of negations, and
   every word of 4+ letters of the quote there (or a typo of it).
   An ellipsis quote is matched piece by piece, each piece under the same rules.

Anything else is `not_found` (span None, score 0): a quote the judge wrote that is in no passage.

Spans are half-open character offsets into the passage's ORIGINAL text: normalization keeps, for
every normalized character, the original start and end of the character(s) it came from, so
`passage.text[span[0]:span[1]]` is always the real source text that matched. Each text's
normalized form and index map is cached (`functools.lru_cache` keyed on the text).

This normalization is the codebase's one definition of "the same text": the checks
(judges.checks.matching) match quotations, named sources and claims through `find_whole_words`,
`find_in_text` and `fold`, never with a folding of their own.

`distrust_unverified_quotes` applies the rule that a claim a judge calls SUPPORTED on the strength
of quotes that are in no passage is not left SUPPORTED.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

from rapidfuzz import fuzz

from judges.types import Claim, Passage

Span = tuple[int, int]

# Fuzzy matches scoring below this (0-100, rapidfuzz's ratio of the normalized quote to the
# normalized text returned) are not matches. 85 keeps a quote with a typo or two, a dropped or
# changed word in a sentence-long quote, or a stray space inside a word (a 40-character quote with
# 2 edits scores about 95, with 5 edits about 88), while a quote that says something else shares
# too little wording to reach it: two different policy sentences on the same topic score 50-75.
# Fuzzy matches also keep the quote's numbers, negations and content words (see
# _asserts_the_same), since a changed number, a dropped "not" or a swapped name is a different
# statement at any score.
FUZZY_FLOOR = 85.0
# Quotes shorter than this after normalization (and after their edge punctuation is dropped) are
# too ambiguous to match fuzzily: "$1.35 fare" is close to many strings. Exact or normalized only.
MIN_FUZZY_CHARS = 12
# The most normalized characters an ellipsis may stand for between two pieces of a quote.
GAP_MAX_CHARS = 300
# Texts whose normalized form is cached (passages, answers); the least recently used go first.
# An entry costs about 10 bytes per character (the string and two 4-byte offset arrays): some 20 kB
# for a typical 2,000-character passage, 1 MB for the largest allowed (100,000), so at most about
# 128 MB. 128 holds every passage of the largest request (100 passages) plus its answer.
CACHE_TEXTS = 128

UNVERIFIED_QUOTE = "Unverified quote: the judge's quote is not in any passage. "
UNVERIFIED_NO_QUOTE = "Unverified quote: the judge quoted no passage for this claim. "


@dataclass(frozen=True, slots=True)
class Located:
    """Where a quote was found. `span` indexes the original text of passage `passage_id`;
    None when `match` is "not_found" (then passage_id is the preferred id, or "")."""

    passage_id: str
    span: Span | None
    match: str  # "exact" | "normalized" | "fuzzy" | "not_found"
    score: float  # 0..100; 100 for exact and normalized, 0 for not_found

    @property
    def found(self) -> bool:
        return self.span is not None


@dataclass(frozen=True, slots=True)
class Found:
    """A match in one text (see find_in_text)."""

    span: Span
    match: str
    score: float


# --- normalization with an index map ---------------------------------------------------------

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u2039\u203a\u0060\u00b4\u02bc\u02bb\uff07"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\u301d\u301e\u301f\uff02"
# Every quotation mark and apostrophe, single or double, curly or straight, folds to "'": models
# swap them freely, not least to avoid escaping '"' inside a JSON string.
_QUOTES = _SINGLE_QUOTES + _DOUBLE_QUOTES + "'\""
_EXTRA_DASHES = (
    "\u2212\u2043\ufe63\uff0d"  # minus sign, hyphen bullet, small and fullwidth hyphen-minus
)
# No space before closing punctuation nor after an opening bracket: tokenized text writes "Veeram (
# Valour ) , 2014" for "Veeram (Valour), 2014", and a quote of either must match the other.
_CLOSERS = frozenset(",.;:!?)]}")
_OPENERS = frozenset("([{")
# such a space in a printable ASCII run
_LOOSE_SPACE = re.compile(r"(?<=[(\[{]) | (?=[,.;:!?)\]}])")
_MAYBE_LOOSE = re.compile(r"[ (\[{][ ,.;:!?)\]}]")  # a cheaper test first: most runs have none

# Printable ASCII with single spaces inside: normalized one character for one by _ASCII.
_PLAIN = re.compile(r"[\x21-\x7e]+(?: [\x21-\x7e]+)*")
_ASCII = str.maketrans(
    {**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}, '"': "'", "`": "'"}
)

_char_memo: dict[str, str] = {}


def _fold_char(ch: str) -> str:
    """One character after NFKC and case folding -> its normalized form ('' to drop it)."""
    if ch.isspace():
        return " "
    if ch in _QUOTES:
        return "'"
    category = unicodedata.category(ch)
    if category == "Pd" or ch in _EXTRA_DASHES:
        return "-"
    if category == "Cf":  # zero-width spaces and joiners, soft hyphen, BOM, bidi marks, ...
        return ""
    return ch


def _fold(unit: str) -> str:
    """A unit (a character with its combining marks) -> its normalized form."""
    if len(unit) == 1:
        cached = _char_memo.get(unit)
        if cached is not None:
            return cached
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", unit).casefold())
    # The quote and dash mapping runs on the original character too: NFKC turns some of them
    # into other characters (U+2033 double prime -> two primes) before we see them.
    if len(unit) == 1 and unit in _QUOTES:
        result = _fold_char(unit)
    else:
        result = "".join(_fold_char(ch) for ch in folded)
    if len(unit) == 1 and len(_char_memo) < 65536:
        _char_memo[unit] = result
    return result


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """`text` normalized, with for every normalized character k the original span
    [starts[k], ends[k]) it came from."""

    text: str
    starts: array
    ends: array

    def original_span(self, start: int, end: int) -> Span:
        """The original span of normalized [start, end) (end > start)."""
        return (self.starts[start], self.ends[end - 1])

    def normalized_position(self, original: int) -> int:
        """The first normalized position whose source starts at or after `original`."""
        return bisect_left(self.starts, original)


def _build(text: str) -> NormalizedText:
    out: list[str] = []
    starts = array("i")
    ends = array("i")
    # The last unit appended: its original start and how many normalized characters it gave
    # (a combining mark that follows re-normalizes the unit with the mark).
    unit_start = -1
    unit_out = 0
    position = 0
    n = len(text)

    def emit(begin: int, end: int, folded: str) -> int:
        count = 0
        for ch in folded:
            if ch == " " and (not out or out[-1] == " " or out[-1] in _OPENERS):
                continue  # whitespace runs collapse, leading whitespace goes, none after "("
            if ch in _CLOSERS and out and out[-1] == " ":
                drop_last()
            out.append(ch)
            starts.append(begin)
            ends.append(end)
            count += 1
        return count

    def drop_last() -> None:
        out.pop()
        starts.pop()
        ends.pop()

    def special(begin: int, end: int) -> None:
        nonlocal unit_start, unit_out
        index = begin
        while index < end:
            ch = text[index]
            stop = index + 1
            while stop < n and _is_mark(text[stop]) and not text[stop].isspace():
                stop += 1
            if _is_mark(ch) and unit_start >= 0 and unit_start + 1 == index and unit_out > 0:
                # Marks after a plain character (or after a unit already emitted): re-fold with it.
                begin_unit = unit_start
                del out[-unit_out:]
                del starts[-unit_out:]
                del ends[-unit_out:]
                unit_out = emit(begin_unit, stop, _fold(text[begin_unit:stop]))
                unit_start = begin_unit
                index = stop
                continue
            unit_out = emit(index, stop, _fold(text[index:stop]))
            unit_start = index if stop == index + 1 else -1
            index = stop

    for match in _PLAIN.finditer(text):
        if match.start() > position:
            special(position, match.start())
        a, b = match.span()
        run = match.group()
        if run[0] in _CLOSERS and out and out[-1] == " ":
            drop_last()
        marked = _LOOSE_SPACE.sub("\0", run) if _MAYBE_LOOSE.search(run) else run
        if "\0" not in marked:
            out.extend(run.translate(_ASCII))
            starts.extend(range(a, b))
            ends.extend(range(a + 1, b + 1))
        else:  # the spaces to drop are NUL in `marked`: keep the positions of the other bytes
            kept = list(compress(range(a, b), marked.encode("ascii")))
            out.extend(marked.replace("\0", "").translate(_ASCII))
            starts.extend(kept)
            ends.extend(map((1).__add__, kept))
        unit_start, unit_out = b - 1, 1
        position = b
    if position < n:
        special(position, n)
    if out and out[-1] == " ":  # trailing whitespace goes too
        out.pop()
        starts.pop()
        ends.pop()
    return NormalizedText("".join(out), starts, ends)


@lru_cache(maxsize=CACHE_TEXTS)
def normalized(text: str) -> NormalizedText:
    """`text` normalized with its index map (cached)."""
    return _build(text)


def normalize_text(text: str) -> str:
    """The normalized form of `text` (what normalized and fuzzy matching compare)."""
    return normalized(text).text


def fold(text: str) -> str:
    """`normalize_text` without the cache: for short texts seen once (claims, findings), which
    would otherwise evict the passages."""
    return _build(text).text


# --- the quote side --------------------------------------------------------------------------

_ELLIPSIS = re.compile(r"\s*(?:\[\s*\.\s?\.\s?\.\s*\]|\.\s?\.\s?\.(?:\s?\.)*)\s*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|no|never|nor|none|nothing|neither|cannot|without)\b|n't\b")


def _is_edge(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] == "P"


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        end -= 1
    return text[start:end]


@dataclass(frozen=True, slots=True)
class _Needle:
    whole: str  # the normalized quote without edge punctuation (or as is, when that leaves nothing)
    pieces: tuple[str, ...]  # its pieces between ellipses; one piece when it has none
    head: str  # the punctuation stripped from its start, without spaces (may be taken in)
    tail: str  # the punctuation stripped from its end, without spaces


@lru_cache(maxsize=4096)
def _needle(quote: str) -> _Needle | None:
    folded = _build(quote).text  # not through normalized(): quotes would evict the passages
    whole = _strip_edges(folded) or folded
    if not whole:
        return None
    pieces = tuple(piece for piece in (_strip_edges(p) for p in _ELLIPSIS.split(whole)) if piece)
    at = folded.find(whole)
    head, tail = folded[:at], folded[at + len(whole):]
    if _ELLIPSIS.search(head):
        head = ""  # "...ride free": the ellipsis says the quote starts mid-text; nothing to take in
    if _ELLIPSIS.search(tail):
        tail = ""
    return _Needle(whole, pieces or (whole,), head.replace(" ", ""), tail.replace(" ", ""))


def _numbers(text: str) -> tuple[str, ...]:
    values = []
    for token in _NUMBER.findall(text):
        token = token.replace(",", "")
        if "." in token:
            token = token.rstrip("0").rstrip(".")
        values.append(token.lstrip("0") or "0")
    return tuple(sorted(values))


_WORD = re.compile(r"[^\W\d_]{4,}")  # words of 4 letters or more: the content words, roughly
# A quote's word counts as kept when the text has it, or a word this close to it (a typo).
WORD_TYPO_RATIO = 75.0


@lru_cache(maxsize=4096)
def _assertions(text: str) -> tuple[tuple[str, ...], int, frozenset[str]]:
    """What a fuzzy match must keep: the numbers in the text, how many negations, its words."""
    return _numbers(text), len(_NEGATION.findall(text)), frozenset(_WORD.findall(text))


def _asserts_the_same(quote: str, found: str) -> bool:
    """A fuzzy match may differ in spelling, punctuation and small words, never in its numbers,
    in negation, or by a content word of the quote that the text does not have (a typo of one is
    fine): "with a valid Medicare card" is not "with a valid student ID" at any score."""
    numbers, negations, words = _assertions(quote)
    if numbers != _numbers(found) or negations != len(_NEGATION.findall(found)):
        return False
    found_words = set(_WORD.findall(found))
    for word in words - found_words:
        if word in found:  # a word the quote split or joined differently
            continue
        if not any(fuzz.ratio(word, other, score_cutoff=WORD_TYPO_RATIO) for other in found_words):
            return False
    return True


# --- matching in one text --------------------------------------------------------------------


def _exact(quote: str, text: str) -> Span | None:
    """The quote as given, then with its outer whitespace trimmed."""
    trimmed = quote.strip()
    for needle in (quote, trimmed) if trimmed != quote else (quote,):
        if needle:
            start = text.find(needle)
            if start >= 0:
                return (start, start + len(needle))
    return None


_MAX_GAP_STEPS = 2000


def _gapped(pieces: Sequence[str], norm: str, lo: int) -> Span | None:
    """The first place from `lo` where the pieces appear in order, each at most GAP_MAX_CHARS after
    the end of the one before (normalized positions)."""
    budget = [_MAX_GAP_STEPS]

    def chain(k: int, prev_end: int) -> int | None:
        if k == len(pieces):
            return prev_end
        piece = pieces[k]
        limit = prev_end + GAP_MAX_CHARS + len(piece)
        pos = norm.find(piece, prev_end, limit)
        while pos >= 0 and budget[0] > 0:
            budget[0] -= 1
            end = chain(k + 1, pos + len(piece))
            if end is not None:
                return end
            pos = norm.find(piece, pos + 1, limit)
        return None

    first = pieces[0]
    pos = norm.find(first, lo)
    while pos >= 0 and budget[0] > 0:
        budget[0] -= 1
        end = chain(1, pos + len(first))
        if end is not None:
            return (pos, end)
        pos = norm.find(first, pos + 1)
    return None


def _normalized_span(needle: _Needle, norm: NormalizedText, lo: int = 0) -> Span | None:
    """Normalized [start, end) of the needle in the normalized text, searching from `lo`. The
    quote's edge punctuation is taken in where the text has the same (`"free."` -> `“free.”`)."""
    text = norm.text
    start = text.find(needle.whole, lo)
    if start >= 0:
        end = start + len(needle.whole)
        for ch in needle.tail:
            if end < len(text) and text[end] == ch:
                end += 1
            else:
                break
        for ch in reversed(needle.head):
            if start > lo and text[start - 1] == ch:
                start -= 1
            else:
                break
        return (start, end)
    if len(needle.pieces) > 1:
        return _gapped(needle.pieces, text, lo)
    return None


def _word_start(text: str, p: int) -> bool:
    if p >= len(text) or text[p] == " ":
        return False
    return p == 0 or text[p - 1] == " " or text[p - 1].isalnum() != text[p].isalnum()


def _word_end(text: str, p: int) -> bool:
    if p <= 0 or text[p - 1] == " ":
        return False
    return p == len(text) or text[p] == " " or text[p - 1].isalnum() != text[p].isalnum()


def _nearest(positions: list[int], target: int, keep: int) -> list[int]:
    return sorted(positions, key=lambda p: abs(p - target))[:keep]


# Candidate spans checked for _asserts_the_same, best score first: they are the same text give or
# take a few characters at the edges, so when the best few change the quote's meaning all do.
_MAX_CHECKED = 8


def _fuzzy_span(piece: str, hay: str, lo: int, hi: int) -> tuple[Span, float] | None:
    """Best fuzzy match of `piece` in hay[lo:hi], on word boundaries where that scores as well,
    with score >= FUZZY_FLOOR and the same numbers and negations; normalized positions."""
    if len(piece) < MIN_FUZZY_CHARS or hi <= lo:
        return None
    window = hay[lo:hi] if lo or hi < len(hay) else hay
    if len(piece) >= len(window):
        ds, de = 0, len(window)
    else:
        alignment = fuzz.partial_ratio_alignment(piece, window, score_cutoff=FUZZY_FLOOR - 5)
        if alignment is None:
            return None
        ds, de = alignment.dest_start, alignment.dest_end
    # Candidate spans: word-boundary starts and ends near the window's, and the window itself.
    reach = min(max(4, len(piece) // 8), 32)
    size = len(window)
    starts = [
        p for p in range(max(0, ds - reach), min(size, ds + reach) + 1) if _word_start(window, p)
    ]
    ends = [p for p in range(max(0, de - reach), min(size, de + reach) + 1) if _word_end(window, p)]
    starts, ends = _nearest(starts, ds, 6), _nearest(ends, de, 6)
    boundaries = {(s, e) for s in starts for e in ends if s < e}
    # A quote may start or end inside a word (or a number): the window's own edges, nudged.
    near_starts = {p for p in range(ds - 2, ds + 3) if 0 <= p < size} | set(starts)
    near_ends = {p for p in range(de - 2, de + 3) if 0 < p <= size} | set(ends)
    scored = []
    for s, e in {(s, e) for s in near_starts for e in near_ends}:
        if e > s:
            score = fuzz.ratio(piece, window[s:e].strip(" "), score_cutoff=FUZZY_FLOOR)
            if score:
                # Best score first; at equal scores word boundaries, then the span nearest the
                # window.
                scored.append(
                    (round(score, 6), (s, e) in boundaries, -(abs(s - ds) + abs(e - de)), s, e)
                )
    for score, _, _, s, e in sorted(scored, reverse=True)[:_MAX_CHECKED]:
        if _asserts_the_same(piece, window[s:e]):
            break
    else:
        return None
    while s < e and window[s] == " ":
        s += 1
    while e > s and window[e - 1] == " ":
        e -= 1
    bs, be = _balanced(window, s, e)
    if (bs, be) != (s, e):
        balanced = fuzz.ratio(piece, window[bs:be])
        if balanced >= FUZZY_FLOOR:
            s, e, score = bs, be, balanced
    return (lo + s, lo + e), score


_PAIRS = (("'", "'"), ("(", ")"), ("[", "]"))  # quotation marks are all "'" by now


def _balanced(text: str, s: int, e: int) -> Span:
    """Take in the quotation mark or bracket right beside the span when the span holds only one of
    a pair: `calls it "the best deal` + `"`, not a dangling mark."""
    for opening, closing in _PAIRS:
        inside = text[s:e]
        if opening == closing:
            unbalanced = inside.count(opening) % 2
        else:
            unbalanced = inside.count(opening) - inside.count(closing)
        if unbalanced > 0 and e < len(text) and text[e] == closing:
            e += 1
        elif (
            unbalanced
            and s > 0
            and text[s - 1] == opening
            and (opening == closing or unbalanced < 0)
        ):
            s -= 1
    return s, e


def _fuzzy(needle: _Needle, norm: NormalizedText, lo: int = 0) -> tuple[Span, float] | None:
    hay = norm.text
    if len(needle.pieces) == 1:
        return _fuzzy_span(needle.whole, hay, lo, len(hay))
    # An ellipsis quote: piece by piece, in order, each starting at most GAP_MAX_CHARS after the one
    # before. A piece there as it is (normalized) scores 100; one too short to match fuzzily must
    # be.
    total, weighted = 0, 0.0
    start = end = None
    for index, piece in enumerate(needle.pieces):
        low = lo if index == 0 else end
        high = len(hay) if index == 0 else min(len(hay), end + GAP_MAX_CHARS + len(piece))
        at = hay.find(piece, low, high)
        if at >= 0:
            span, score = (at, at + len(piece)), 100.0
        else:
            got = _fuzzy_span(piece, hay, low, high)
            if got is None:
                return None
            span, score = got
        if start is None:
            start = span[0]
        end = span[1]
        total += len(piece)
        weighted += score * len(piece)
    return (start, end), weighted / total


_WORD_CHAR = re.compile(r"\w")
# Places of a quote's text in one passage tried for whole words before giving up (each a find).
_MAX_WORD_TRIES = 1000


def find_whole_words(quote: str, text: str) -> Span | None:
    """The original span of the first normalized match of `quote` in `text` that neither starts
    nor ends inside a word ("iders aged 65" is not in "riders aged 65"); no exact or fuzzy step,
    an ellipsis in the quote a gap as in `locate`."""
    needle = _needle(quote)
    if needle is None:
        return None
    norm = normalized(text)
    hay = norm.text
    low = 0
    for _ in range(_MAX_WORD_TRIES):
        found = _normalized_span(needle, norm, low)
        if found is None:
            return None
        start, end = found
        inside_before = start > 0 and _WORD_CHAR.match(hay[start - 1])
        inside_after = end < len(hay) and _WORD_CHAR.match(hay[end])
        if not inside_before and not inside_after:
            return norm.original_span(start, end)
        # past the quote's text, not the punctuation taken in
        whole_at = hay.find(needle.whole, low)
        low = (whole_at if whole_at >= 0 else start) + 1
    return None


def find_in_text(quote: str, text: str, hint: int = 0, fuzzy: bool = True) -> Found | None:
    """The best match of `quote` in one text: exact, else normalized, else fuzzy (when allowed).

    With a hint (an original offset), a match starting at or after it is preferred, to choose
    between repeats: exact or normalized after the hint, then exact or normalized anywhere, then
    fuzzy after the hint, then fuzzy anywhere."""
    needle = _needle(quote)
    norm = normalized(text) if needle is not None else None
    lows = (hint, 0) if hint > 0 else (0,)
    for low in lows:
        span = _exact(quote, text[low:]) if low else _exact(quote, text)
        if span:
            return Found((span[0] + low, span[1] + low), "exact", 100.0)
        if norm is not None:
            found = _normalized_span(needle, norm, norm.normalized_position(low))
            if found:
                return Found(norm.original_span(*found), "normalized", 100.0)
    if not fuzzy or norm is None:
        return None
    for low in lows:
        got = _fuzzy(needle, norm, norm.normalized_position(low))
        if got:
            return Found(norm.original_span(*got[0]), "fuzzy", round(got[1], 2))
    return None


# --- the locator -----------------------------------------------------------------------------


def locate(quote: str, passages: Sequence[Passage], preferred_pid: str | None = None) -> Located:
    """Where `quote` is in the passages: the preferred passage first, then the others in order,
    exact before normalized before fuzzy (the best fuzzy score wins; ties go to the earlier
    passage). Not found: Located(preferred_pid or "", None, "not_found", 0.0)."""
    # stable: preferred first
    order = sorted(passages, key=lambda passage: passage.id != preferred_pid)
    missing = Located(preferred_pid or "", None, "not_found", 0.0)
    if not quote:
        return missing
    trimmed = quote.strip()
    for needle in (quote, trimmed) if trimmed != quote else (quote,):  # as given first, everywhere
        if needle:
            for passage in order:
                start = passage.text.find(needle)
                if start >= 0:
                    return Located(passage.id, (start, start + len(needle)), "exact", 100.0)
    needle = _needle(quote)
    if needle is None:
        return missing
    for passage in order:
        norm = normalized(passage.text)
        found = _normalized_span(needle, norm)
        if found:
            return Located(passage.id, norm.original_span(*found), "normalized", 100.0)
    if len(needle.whole) < MIN_FUZZY_CHARS:
        return missing
    best: Located | None = None
    for passage in order:
        norm = normalized(passage.text)
        got = _fuzzy(needle, norm)
        if got and (best is None or got[1] > best.score):
            best = Located(passage.id, norm.original_span(*got[0]), "fuzzy", round(got[1], 2))
    return best or missing


# --- distrust of the judge's own quotes ------------------------------------------------------


def distrust_unverified_quotes(
    claims: Sequence[Claim], require_evidence: bool = False
) -> list[Claim]:
    """A claim labelled SUPPORTED whose evidence is all not_found (or, with require_evidence, that
    has no evidence at all) becomes PARTIALLY_SUPPORTED, its explanation prefixed "Unverified
    quote: ...": the judge quoted text that is in no passage, so its SUPPORTED is unverified. The
    evidence stays as it is, so the unverified quote can be shown. Other claims are unchanged;
    applying it twice changes nothing more. Recompute the score and verdict afterwards."""
    result = []
    for claim in claims:
        if claim.label == "SUPPORTED":
            if claim.evidence and all(evidence.match == "not_found" for evidence in claim.evidence):
                prefix = UNVERIFIED_QUOTE
            elif not claim.evidence and require_evidence:
                prefix = UNVERIFIED_NO_QUOTE
            else:
                prefix = ""
            if prefix:
                claim = claim.model_copy(update={
                    "label": "PARTIALLY_SUPPORTED", "explanation": prefix + claim.explanation})
        result.append(claim)
    return result
