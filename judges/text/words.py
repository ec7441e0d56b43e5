"""Words: the content words of a text (stopwords dropped, plurals folded), their crude stems, and
tokens with offsets and whether each is written like a name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from judges.types import Span

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
    lrb rrb lsb rsb lcb rcb
    """.split()
)
# (The last line: brackets as Penn Treebank tokenized text writes them, "-lrb-" for "(", as the
# CNN/DailyMail corpus ships its text.)

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


# --- stems and tokens with their case (the offline judge v2) ---------------------------------
#
# `content_words` only folds plurals, so "scored" never meets "scoring". `stem` strips a few more
# inflections (no dictionary, no model): "-ing", "-ed", "-ly", "-ment" and a final "e", so
# "scored", "scores", "scoring" and "score" all give "scor". Collisions are rare and harmless for
# what it is used for (asking whether a passage uses a word at all).

_STEM_SUFFIXES = ("ingly", "edly", "ings", "ing", "ed", "ly")
_MIN_ROOT = {"ly": 4}
_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """A crude, deterministic stem of a lowercased word (see above)."""
    word = _singular(word)
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_ROOT.get(suffix, 3):
            root = word[: -len(suffix)]
            if not _VOWELS & set(root):
                continue  # "sing", "bed": no vowel left, not a suffix
            if suffix in ("ed", "edly") and root.endswith("i"):
                root = root[:-1] + "y"  # "carried" -> "carry"
            elif len(root) > 3 and root[-1] == root[-2] and root[-1] not in "lsz":
                root = root[:-1]  # "running" -> "run", but "called" keeps "call"
            word = root
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Token:
    """A content word of a text: its stem, its offsets, and whether it is written like a name."""

    stem: str
    span: Span
    is_name: bool  # capitalized (not just because it opens the text) or all capitals


# A word's letters, with the combining marks decomposed text puts after some: NFD "Muse\u0301e" is
# one word, read as its composed form is, since fold_accents drops the marks either way. (Letters
# first and marks only between runs of them: as fast as a plain letter run on composed text.)
WORD_LETTERS = (
    r"[^\W\d_]+(?:[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+[^\W\d_]*)*"
)
_TOKEN_WORD = re.compile(rf"{WORD_LETTERS}(?:['’]{WORD_LETTERS})?")


@lru_cache(maxsize=65536)
def fold_accents(word: str) -> str:
    """"Angoulême" -> "Angouleme", "Café" (composed or not) -> "Cafe"."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def content_tokens(text: str) -> list[Token]:
    """The content words of `text` (as `content_words` reads them) with offsets, stems and case.

    A word opening the text or following sentence punctuation is not taken for a name because
    of its capital alone, unless it has inner capitals (McManus) or is all capitals of two letters
    or more (UKIP, NBA).
    """
    return [Token(word_stem, (start, start + length), is_name)
            for word_stem, start, length, is_name in token_readings(text)]


def token_readings(
    text: str, start: int = 0, end: int | None = None
) -> Iterator[tuple[str, int, int, bool]]:
    """`content_tokens(text)` as (stem, start, length, is_name) tuples, for the words that lie in
    text[start:end] when no word crosses `start` or `end` (a passage's rough pieces: a word never
    spans a piece boundary). Names are told from the text before each word, in the whole `text`.
    Building no Token is what makes it cheaper, for indexing long passages."""
    for match in _TOKEN_WORD.finditer(text, start, len(text) if end is None else end):
        reading = _token_reading(match.group())
        if reading is None:
            continue
        word_stem, length, capitalized, inner_capitals = reading
        word_start = match.start()
        is_name = False
        if capitalized:
            if inner_capitals:
                is_name = True
            else:
                before = text[max(0, word_start - 8):word_start].rstrip()
                if not before and word_start > 8:
                    before = text[:word_start].rstrip()
                is_name = not (not before or before[-1] in _OPENERS or before.endswith(("[", "]")))
        yield word_stem, word_start, length, is_name


def piece_stems(text: str, start: int, end: int) -> tuple[frozenset[str], frozenset[str]]:
    """The stems of the words of text[start:end] and those of its names: what `token_readings`
    gives for that stretch (same conditions), with less work per word. The words come from one
    findall; each is placed with str.find from the end of the one before (nothing between two
    words is a letter, so the first match is the word itself), which a capitalized word needs:
    what stands before it decides whether it is a name."""
    stems: set[str] = set()
    names: set[str] = set()
    position = start
    for word in _TOKEN_WORD.findall(text, start, end):
        word_start = text.find(word, position)
        position = word_start + len(word)
        reading = _token_reading(word)
        if reading is None:
            continue
        word_stem, _, capitalized, inner_capitals = reading
        stems.add(word_stem)
        if capitalized:
            if inner_capitals:
                names.add(word_stem)
                continue
            before = text[max(0, word_start - 8):word_start].rstrip()
            if not before and word_start > 8:
                before = text[:word_start].rstrip()
            if not (not before or before[-1] in _OPENERS or before.endswith(("[", "]"))):
                names.add(word_stem)
    return frozenset(stems), frozenset(names)


_OPENERS = frozenset(".!?:;\"“(\n-–—•*")


@lru_cache(maxsize=131072)
def _token_reading(word: str) -> tuple[str, int, bool, bool] | None:
    """(stem, length of the word without any "'s", capitalized, inner capitals or all capitals),
    or None for a stopword or a single letter."""
    raw = word.split("'")[0].split("’")[0]
    lowered = fold_accents(raw.lower())
    if len(lowered) < 2 or lowered in STOPWORDS:
        return None
    capitalized = raw[0].isupper()
    inner = capitalized and len(raw) > 1 and (raw.isupper() or any(c.isupper() for c in raw[1:]))
    return stem(lowered), len(raw), capitalized, inner


def stems(text: str) -> frozenset[str]:
    """The stems of every content word of `text` (those of `content_tokens`, without telling
    names: twice as fast)."""
    return frozenset(reading[0] for word in _TOKEN_WORD.findall(text)
                     if (reading := _token_reading(word)) is not None)


# Words that refer to the answer's source or to the answer itself: "The passage discusses ...",
# "Based on the given contexts, ...". They are never evidence of anything, so they are not terms.
META_STEMS = frozenset(stem(w) for w in """
    passage passages article text summary summarize context contexts document documents source
    sources
    given provided based according mention mentioned mentions discuss discusses discussed describe
    describes described detail details highlight highlights highlighted report reports reported
    state states stated note notes noted also however overall concise information additionally
    furthermore moreover
""".split())
