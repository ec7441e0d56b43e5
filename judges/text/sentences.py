"""Sentence spans: where each sentence of a text starts and ends (pysbd, line by line), and the
rougher, faster pieces cut at punctuation and line breaks alone. Every span is a character offset
into the original text.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import chain, compress, repeat
from operator import lt

import pysbd

from judges.types import Span

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
    """The sentences of `text` (see `_split_sentences`). A judge and then the checks split the
    same answer one after the other, so the last few splits are kept (only a few: a benchmark
    that judges a batch twice must not find its answers already split)."""
    return list(_split_sentences(text))


@lru_cache(maxsize=4)
def _split_sentences(text: str) -> tuple[Span, ...]:
    """Half-open (start, end) offsets of each sentence in `text`, in order, trimmed of whitespace.

    Every line is split on its own first, so a list item or a heading on its own line is its own
    sentence; a break pysbd draws after an abbreviation it does not know is undone (`_rejoined`).
    Any non-blank text pysbd fails to account for becomes a sentence of its own rather than
    vanishing, so the spans cover all of the text's content.
    """
    spans: list[Span] = []
    for line in _LINE.finditer(text):
        spans.extend(_split_line(line.group(), offset=line.start()))
    return tuple(spans)


# pysbd's cost grows with the square of a line's sentences (its list-item rules rescan the line
# for each one): a line longer than this is given to it in chunks of about this size, so its cost
# stays linear in the text's length. A chunk ends where a rough piece ends with a word that is no
# abbreviation and the next opens with a capital (a sentence end pysbd draws too); only a line
# without such an end for CHUNK_CUT_ANYWHERE_AFTER characters is cut at another piece end. Lines
# of ordinary text are shorter than LINE_CHUNK_CHARS.
LINE_CHUNK_CHARS = 1_000
CHUNK_CUT_ANYWHERE_AFTER = 3 * LINE_CHUNK_CHARS
# A piece ending in "e.g.", "U.S.", "Dr." or "No." may end inside a sentence.
_ABBREVIATED_END = re.compile(
    r"(?:(?:(?<![\w.])[^\W\d_]\.)+|(?<![\w.])[A-Z][a-z]{0,2}\.)[\"'”’)\]]*$"
)
_CAPITAL = re.compile(r"[^\W\d_]")


def _line_chunks(line: str) -> list[str]:
    """The line, or, when longer than LINE_CHUNK_CHARS, consecutive pieces of it that each run at
    least that long (to a sentence end, see above) and together make the line."""
    if len(line) <= LINE_CHUNK_CHARS:
        return [line]
    chunks, begin = [], 0
    pieces = rough_pieces(line)
    for (_, end), (start, _) in zip(pieces, pieces[1:]):
        if start - begin < LINE_CHUNK_CHARS:
            continue
        opening = _CAPITAL.match(line, start)
        sentence_end = (
            opening is not None
            and opening.group().isupper()
            and not _ABBREVIATED_END.search(line, max(begin, end - 12), end)
        )
        if sentence_end or start - begin >= CHUNK_CUT_ANYWHERE_AFTER:
            chunks.append(line[begin:start])
            begin = start
    chunks.append(line[begin:])
    return chunks


def _split_line(line: str, offset: int) -> list[Span]:
    if not line.strip():
        return []
    spans: list[Span] = []
    position = 0
    for sentence in chain.from_iterable(map(_pysbd_sentences, _line_chunks(line))):
        sentence = sentence.strip()
        start = line.find(sentence, position) if sentence else -1
        if start < 0:
            continue  # not verbatim in the line; the gap check below keeps its text anyway
        spans.extend(_trimmed(line, position, start))  # text pysbd skipped over
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    spans.extend(_trimmed(line, position, len(line)))
    spans = _rejoined(line, spans)
    return [(start + offset, end + offset) for start, end in spans]


# pysbd knows a list of abbreviations; one it does not know ("incl.", "Tab.", "Mon.") ends a
# sentence before the word or number that continues it. A sentence does not open with a lowercase
# word (in text whose first sentence opens with a capital), so after a short word (up to six
# letters) and its point such a start continues the sentence. A sentence may open with a number
# ("2024 was ..."), so a number, a currency sign or a dash continues only after a word of up to
# three letters ("Tab. 2", "Jul. 2021", "Mon.-Fri."), the length of most abbreviations and of few
# words that end sentences.
_SHORT_WORD_POINT = re.compile(r"(?<![\w.])[^\W\d_]{1,6}\.$")
_ABBREVIATION_POINT = re.compile(r"(?<![\w.])[^\W\d_]{1,3}\.$")
_CONTINUATION = re.compile(r"[0-9$€£¥\-–—]|[^\W\d_]")
_FIRST_LETTER = re.compile(r"[^\W\d_]")


def _rejoined(line: str, spans: list[Span]) -> list[Span]:
    first_letter = _FIRST_LETTER.search(line)
    capitalized = first_letter is not None and first_letter.group().isupper()
    joined: list[Span] = []
    for start, end in spans:
        if joined and _continues(line, joined[-1], start, capitalized):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def _continues(line: str, previous: Span, start: int, capitalized: bool) -> bool:
    opening = _CONTINUATION.match(line, start)
    if opening is None:
        return False
    if opening.group().isalpha():
        return capitalized and opening.group().islower() and bool(
            _SHORT_WORD_POINT.search(line, previous[0], previous[1]))
    return bool(_ABBREVIATION_POINT.search(line, previous[0], previous[1]))


def _trimmed(text: str, start: int, end: int) -> list[Span]:
    """text[start:end] without its outer whitespace, as a list of zero or one span (str.strip
    does the character loop in C)."""
    piece = text[start:end]
    kept = piece.strip()
    if not kept:
        return []
    first = start + len(piece) - len(piece.lstrip())
    return [(first, first + len(kept))]


# Ends of rough pieces: sentence punctuation (and any closing quote or bracket) before a space,
# or a line break. Cheap, but it also breaks after abbreviations such as "Sec." and "e.g.".
# The regex engine tests a set of characters against each character in turn (~0.1 ms a
# 15,000-character passage, even where none of them is), but looks for one character fast
# (~5 us), so each mark has its own pattern, opening with it; a run of marks ends a piece from its
# first mark, as a pattern opening with the set `[.!?…]` would find it. Group 1 is the whitespace
# after the end, which no piece keeps.
_PIECE_ENDS = tuple(
    re.compile(rf"{mark}(?<![.!?…]{mark})[.!?…]*+[\"'”’)\]]*+(\s++|\Z)")
    for mark in map(re.escape, ".!?…")
)
_LINE_BREAK_AND_SPACE = re.compile(r"\n\s*+")


def rough_pieces(text: str) -> list[Span]:
    """Sentence-like spans found by punctuation and line breaks alone: much faster than
    `split_sentences`, and finer, since nearly every boundary pysbd draws is one here too (about
    98% on news and Wikipedia text). Use it to find where to look, and `split_sentences` to quote.

    What is between two pieces is found, not the pieces (every step runs in C but one per line
    break): the whitespace after a piece end, and the whitespace around a line break. The text is
    cut at each piece end and line break, and each piece trimmed of whitespace (str.strip and the
    regexes take the same characters for whitespace; tests/judges/test_text_scans.py holds it to
    that reading).
    """
    gaps = list(chain.from_iterable(
        map(re.Match.span, pattern.finditer(text), repeat(1)) for pattern in _PIECE_ENDS))
    if "\n" in text:
        for match in _LINE_BREAK_AND_SPACE.finditer(text):
            start = match.start()
            while start and text[start - 1].isspace():
                start -= 1
            gaps.append((start, match.end()))
    # A piece runs from the end of a gap to the start of the next. Two gaps in the same run of
    # whitespace (a line break after a piece end) are the same gap, with nothing between them.
    bounds = [
        len(text) - len(text.lstrip()),
        *chain.from_iterable(sorted(gaps)),
        len(text.rstrip()),
    ]
    starts, ends = bounds[::2], bounds[1::2]
    return list(compress(zip(starts, ends), map(lt, starts, ends)))
