"""Passage text indexed for the offline judge: which words and numbers it contains, and which of its
sentences best matches a claim.

Only `Passage.text` is indexed. Header fields (title, agency, section, source, fetched date) are
never evidence for a policy fact, so they are not searched here.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat, starmap
from operator import add, sub

import ahocorasick

from judges.text import (
    NUMBER_WORDS, Span, content_words, key_terms, normalize_number, number_values,
    quantity_pieces, quantity_values, piece_stems, readings_by_start, rough_pieces, split_sentences,
    year_range_values,
)
# Private helpers of judges.text that the lazy unit index shares (and _piece_values, cleared with
# the other caches).
from judges.text.numeric import _month_words, _number_word_runs, _piece_values
from judges.text.words import _TOKEN_WORD, _token_reading


@dataclass(frozen=True)
class Piece:
    span: Span
    terms: frozenset[str]


@dataclass(frozen=True)
class PassageIndex:
    text: str
    terms: frozenset[str]  # content words and normalized numbers
    numbers: frozenset[str]  # normalized numbers only

    def best_sentence(self, terms: frozenset[str]) -> Span | None:
        """The sentence sharing the most terms with `terms` (the earliest on a tie), or None.

        pysbd costs several milliseconds per passage, far more than the rest of the judge, so it
        only settles the boundaries around the best-matching rough piece: that piece and one
        neighbour on each side, which covers a sentence that an abbreviation cut into pieces.
        """
        pieces = _pieces(self.text)
        best = _most_shared(terms, pieces)
        if best is None:
            return None
        first = pieces[max(best - 1, 0)].span[0]
        last = pieces[min(best + 1, len(pieces) - 1)].span[1]
        region = self.text[first:last]
        sentences = [
            Piece((start + first, end + first), found) for (start, end), found in _sentences(region)
        ]
        choice = _most_shared(terms, sentences)
        return sentences[choice].span if choice is not None else pieces[best].span


def _most_shared(terms: frozenset[str], pieces: Sequence[Piece]) -> int | None:
    best, best_count = None, 0
    for position, piece in enumerate(pieces):
        count = len(terms & piece.terms)
        if count > best_count:  # strictly greater: ties go to the earlier piece
            best, best_count = position, count
    return best


# The same policy passages come back for answer after answer, so what is learnt about a passage
# text is kept per process. Bounded, because a passage may be up to 100k characters.
@lru_cache(maxsize=512)
def index_passage(text: str) -> PassageIndex:
    numbers = frozenset(number_values(text))
    return PassageIndex(text=text, terms=frozenset(content_words(text)) | numbers, numbers=numbers)


@lru_cache(maxsize=512)
def _pieces(text: str) -> tuple[Piece, ...]:
    return tuple(Piece(span, key_terms(text[span[0]:span[1]])) for span in rough_pieces(text))


@lru_cache(maxsize=4096)  # keyed by a few hundred characters around a match, so more of them
def _sentences(text: str) -> tuple[tuple[Span, frozenset[str]], ...]:
    return tuple((span, key_terms(text[span[0]:span[1]])) for span in split_sentences(text))


def clear_caches() -> None:
    """Forget every indexed passage (benchmarks use it to measure the cold path)."""
    index_passage.cache_clear()
    index_units.cache_clear()
    quantity_values.cache_clear()
    _piece_values.cache_clear()
    _pieces.cache_clear()
    _sentences.cache_clear()


# --- units: the offline judge v2's view of a passage ----------------------------------------


# Words stating a cause or an effect; a claim that has one needs a window that has one too.
CAUSAL = re.compile(
    r"\b(?:because|due to|owing to|thanks to|as a result|result(?:s|ed|ing)?"
    r" (?:in|from)|lead(?:s|ing)? to"
    r"|led to|caus(?:e|es|ed|ing)|so that|therefore|hence|consequently|attribut\w+ to|blame[sd]?"
    r"|in response to|after which|prompt(?:s|ed|ing)?|sparked|trigger(?:s|ed|ing)?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Unit:
    """A sentence-like piece of a passage (`rough_pieces`), with the words the judge compares."""

    span: Span
    stems: frozenset[str]
    names: frozenset[str]  # stems of the words written like names


# What can give a quantity value, for reading only the quantity pieces that may hold it (see
# UnitIndex._pieces_for). A plain number ("12.5", "1500", "2027") is read from digits or number
# words (a year also from a date); a date value ("2027-01-05", "2027-01", "--01-05") from a month's
# name, a "/" date or an ISO date, with its year's and day's digits; a clock time ("17:00") from a
# ":" or a.m./p.m.
_PLAIN_VALUE = re.compile(r"\d+(?:\.\d+)?")
_DATE_VALUE = re.compile(r"(?:\d{4}|-)-\d\d(?:-\d\d)?")
_TIME_VALUE = re.compile(r"\d\d:\d\d")
_YEAR_VALUE = re.compile(r"(?:19|20|21)\d\d")  # a date's year (its coarser reading) is plain
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a digit of another script
# Each opens with a set of characters (not an alternation), which the regex engine skips to.
_DATE_SIGN = re.compile(r"[/\d](?:(?<=/)|\d-[01]\d-)")  # "/", or "\d\d-[01]\d-"
_TIME_SIGN = re.compile(r"[:\d](?:(?<=:)|\s?[aApP]\.?\s?[mM])")  # ":", or _MERIDIEM_HINT


# Every value a number word can give (`quantities`): 0-99 in words, perhaps "hundred" times that,
# perhaps in cents. A value outside these is looked for in digits only, so the pieces that hold
# number words ("one of the ways", "two options") are not read for it.
_NUMBER_WORD_VALUES = frozenset(
    normalize_number(str(number * times), in_cents=in_cents)
    for number in range(100) for times in (1, 100) for in_cents in (False, True)
)


# The digits `_NUMBER` reads a number from: they open a run of digits, "." and "," (no digit, "."
# or "," before them), and are read the same way.
_RUN_DIGITS = re.compile(
    r"[0-9](?<![0-9.,][0-9])(?>\d{0,2}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d*(?:\.\d+)?)"
)
_RUN_CHARACTERS = frozenset("0123456789.,")


def _significant_digits(number: str) -> str:
    """The digits of a number without its point, commas and outer zeros: "1,500.00" and "0.15"
    give "15"."""
    return number.replace(",", "").replace(".", "").strip("0")


@lru_cache(maxsize=1024)
def _significant_in_run(digits: str) -> re.Pattern[str]:
    """Where a run of digits (`_RUN_DIGITS`) whose significant digits are `digits` writes them:
    one after the other, each perhaps followed by "," or ".", with no digit but 0 right before
    them, or before the "," or "." before them, and none but 0 right after them (a "," or "." and
    a digit may follow: the run "1.5" in "1.5.3"). No digits at all are written by a run that
    opens with a 0. The first digit opens the pattern, which the regex engine skips to (compiling
    one costs ~0.2 ms, hence the cache)."""
    if not digits:
        return re.compile(r"0(?<![0-9.,]0)")
    first = digits[0]
    rest = "".join(rf"[.,]?{digit}" for digit in digits[1:])
    return re.compile(rf"{first}(?<![1-9]{first})(?<![1-9][.,]{first}){rest}(?![1-9])")


@lru_cache(maxsize=1024)
def _digits_alone(digits: str) -> re.Pattern[str]:
    """`digits` with no digit after them, and none before them but perhaps a 0 ("June 06"): how a
    date writes its day and its year. The digits open the pattern, which the regex engine skips to.
    """
    return re.compile(rf"{digits}(?![0-9])(?<![1-9]{digits})(?<![0-9]0{digits})")


# Values asked at once past which every quantity piece of a passage is read rather than found
# value by value (UnitIndex.read_values).
READ_ALL_PIECES_AFTER = 24


class UnitIndex:
    """A passage cut into units (`rough_pieces`), read lazily: the judge asks only about the words
    and quantity values of the claims it judges, so only that is worked out, and kept (the same
    passages come back answer after answer, with other claims). The offline judge asks for all of
    an answer's stems and values at once (`learn_stems`, `read_values`), so the text is searched
    once per answer, not once per claim.

    Words: in an ASCII text, one scan finds the words that may give the stems asked (`_stem_units`)
    and only those are read (the same scan finds the number words, for the values); any other text
    has every piece's words read once (lowering it or folding its accents may move its letters).
    Quantities: the text is cut into `quantity_pieces` (no quantity crosses one), and only the
    pieces that may hold a value asked are read, all with one `readings_by_start` call (the
    quantities of `quantities(..., every_word=True)`); each quantity gives its readings to the
    unit it starts in. What it answers is what reading every unit and quantity of the text gives
    (tests/judges/test_unit_index.py holds it to that eager reading).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = rough_pieces(text)
        self.size = len(self.spans)
        self._starts = [start for start, _ in self.spans]
        self._words: tuple[dict[str, list[int]], dict[str, list[str]]] | None = (
            None  # non-ASCII texts
        )
        self._postings: dict[str, tuple[int, ...]] = {}
        self._units: dict[int, Unit] = {}
        # Quantities, filled as values are asked for (under the lock).
        self._lock = threading.Lock()
        self._quantity_pieces: list[Span] | None = None
        self._read: set[int] = set()
        self._value_units: dict[str, set[int]] = {}
        self._values: set[str] = set()  # every reading of the pieces read so far
        self._asked: dict[str, tuple[int, ...]] = {}
        self._year_ranges: set[str] | None = None
        self._other_digits: bool | None = None
        self._signs: dict[str, set[int]] = {}
        self._number_word_starts: list[int] | None = None  # found by learn_stems in an ASCII text

    # --- words

    def postings(self, word_stem: str) -> tuple[int, ...]:
        """The units (ascending) holding a word with this stem."""
        found = self._postings.get(word_stem)
        if found is None:
            self.learn_stems((word_stem,))
            found = self._postings[word_stem]
        return found

    def learn_stems(self, stems: Iterable[str]) -> None:
        """Find the units of the words giving each of `stems` not asked before (the offline judge
        asks for all of an answer's stems first: an ASCII text is then searched once)."""
        new = [word_stem for word_stem in dict.fromkeys(stems) if word_stem not in self._postings]
        if not new:
            return
        if self.text.isascii():
            found, self._number_word_starts = _stem_units(self.text, self._starts, new)
        else:
            found = self._read_stems(new)
        self._postings.update(found)

    def _read_stems(self, stems: list[str]) -> dict[str, tuple[int, ...]]:
        """The units of each stem's words, from every word of the text (read once): lowering and
        folding the accents of a text that is not ASCII may move or change its letters."""
        if self._words is None:
            word_units: dict[str, list[int]] = {}
            for position, (start, end) in enumerate(self.spans):
                for word in set(_TOKEN_WORD.findall(self.text, start, end)):
                    word_units.setdefault(word, []).append(position)
            surfaces: dict[str, list[str]] = {}
            for word in word_units:
                reading = _token_reading(word)
                if reading is not None:
                    surfaces.setdefault(reading[0], []).append(word)
            self._words = (word_units, surfaces)
        word_units, surfaces = self._words
        return {
            word_stem: tuple(
                sorted(set().union(*(word_units[word] for word in surfaces.get(word_stem, ()))))
            )
            for word_stem in stems
        }

    def held(self, position: int, stems: Iterable[str]) -> frozenset[str]:
        """Those of `stems` that a word of the unit gives: from its stems once it has been read
        (`unit`), else from their postings. The judge asks this of every unit it tries and reads
        only the units it quotes (reading the ~80 units an answer tries cost ~0.7 ms)."""
        found = self._units.get(position)
        if found is not None:
            return found.stems.intersection(stems)
        return frozenset(
            word_stem for word_stem in stems if _holds(self.postings(word_stem), position)
        )

    def unit(self, position: int) -> Unit:
        found = self._units.get(position)
        if found is None:
            start, end = self.spans[position]
            unit_stems, names = piece_stems(self.text, start, end)
            found = self._units[position] = Unit(span=(start, end), stems=unit_stems, names=names)
        return found

    # --- quantities

    def value_units(self, value: str) -> tuple[int, ...]:
        """The units (ascending) in which a quantity starts that gives `value`
        (`quantity_readings`)."""
        found = self._asked.get(value)
        if found is None:
            self.read_values((value,))
            found = self._asked[value]
        return found

    def read_values(self, values: Iterable[str]) -> None:
        """Read at once the pieces that may hold any of `values` not asked before (the offline
        judge asks for every value of an answer first: one `readings_by_start` call over many
        pieces costs little more than over one, ~25 us on this machine)."""
        if all(value in self._asked for value in values):
            return
        # The index is shared by every thread (index_units' cache), and a piece is marked read
        # before its values are in: without the lock another thread could take a piece being
        # read for read and answer without its values.
        with self._lock:
            new = [value for value in dict.fromkeys(values) if value not in self._asked]
            if len(self._read) == len(self._pieces()):
                wanted = set()  # every piece is read: nothing to look for
            elif len(new) > READ_ALL_PIECES_AFTER:
                # Each value's pieces are found by a scan of the text, a reading of every piece
                # costs a few such scans: past a few values it is cheaper, and answers the same.
                wanted = set(range(len(self._pieces())))
            else:
                wanted = set().union(*(self._pieces_for(value) for value in new))
            self._read_pieces(sorted(wanted - self._read))
            for value in new:
                self._asked[value] = tuple(sorted(self._value_units.get(value, ())))

    def has_value(self, value: str) -> bool:
        """Whether `quantity_values(text)` holds `value`."""
        self.value_units(value)
        if value in self._values:
            return True
        if not _YEAR_VALUE.fullmatch(value):
            # what a year range gives besides its quantities is a year ("2007 -- 11": 2011)
            return False
        if self._year_ranges is None:
            self._year_ranges = year_range_values(self.text)
        return value in self._year_ranges

    def _pieces(self) -> list[Span]:
        if self._quantity_pieces is None:
            self._quantity_pieces = quantity_pieces(self.text, self.spans)
            self._piece_starts = [start for start, _ in self._quantity_pieces]
        return self._quantity_pieces

    def _pieces_for(self, value: str) -> set[int]:
        """The quantity pieces that may hold a quantity giving `value`."""
        pieces = self._pieces()
        if self._other_digits is None:
            self._other_digits = (
                not self.text.isascii() and _OTHER_DIGIT.search(self.text) is not None
            )
        if self._other_digits and not _TIME_VALUE.fullmatch(value):
            # `\d` reads any script's digits ("$٥" is 5), which the digit patterns here do not
            # look for: every piece is read.
            return set(range(len(pieces)))
        if _PLAIN_VALUE.fullmatch(value):
            if value in _NUMBER_WORD_VALUES:
                return self._digit_pieces(value) | self._number_word_pieces()
            return self._digit_pieces(value)
        if _DATE_VALUE.fullmatch(value):
            # A date is written with its year's digits when it has a year, and with its day's
            # when it has a day, neither next to other digits. Its year is rarer than the signs
            # of a date (looking for those in the whole text cost more than reading the pieces).
            if value.startswith("-"):
                wanted = self._sign_pieces("date")
            else:
                wanted = self._pieces_matching(_digits_alone(value[:4]))
            if value.count("-") != 1:  # "2027-01-05" and "--01-05" have a day, "2027-01" none
                wanted = wanted & self._pieces_matching(_digits_alone(str(int(value[-2:]))))
            return wanted
        if _TIME_VALUE.fullmatch(value):
            return self._sign_pieces("time")
        return set(range(len(pieces)))

    def _read_pieces(self, todo: list[int]) -> None:
        """Read the quantities of the pieces numbered `todo` (ascending) with one
        `readings_by_start` call over them put end to end: each piece begins and ends at a safe
        cut (`quantity_pieces`), so the joined text has the quantities of its pieces, whichever
        pieces are left out between them (tests/judges/test_text_scans.py)."""
        if not todo:
            return
        self._read.update(todo)
        pieces = self._pieces()
        texts: list[str] = []
        joined_starts: list[int] = []  # where each piece begins in the joined text
        length = 0
        for number in todo:
            start, end = pieces[number]
            texts.append(self.text[start:end])
            joined_starts.append(length)
            length += end - start
        for joined_start, readings in readings_by_start("".join(texts)):
            piece = bisect.bisect_right(joined_starts, joined_start) - 1
            start = pieces[todo[piece]][0] + joined_start - joined_starts[piece]
            self._values.update(readings)
            position = bisect.bisect_right(self._starts, start) - 1
            if position >= 0:
                for reading in readings:
                    self._value_units.setdefault(reading, set()).add(position)

    def _piece_of(self, offset: int) -> int:
        return bisect.bisect_right(self._piece_starts, offset) - 1

    def _pieces_matching(self, pattern: re.Pattern[str]) -> set[int]:
        """The quantity pieces in which `pattern` matches: one search per piece found, each
        resuming at the end of the piece found before."""
        pieces = self._pieces()
        found: set[int] = set()
        match = pattern.search(self.text)
        while match is not None:
            number = self._piece_of(match.start())
            found.add(number)
            match = pattern.search(self.text, pieces[number][1])
        return found

    def _digit_pieces(self, value: str) -> set[int]:
        """The quantity pieces in which a number giving `value` may be written in digits (as they
        are, or before "cents"), or, for a year, a date with that year (whose digits may run on:
        "May 5, 2027.5" is in 2027). The text has no digits of another script (`_pieces_for`).

        The runs of digits that may give it are found where they write its significant digits
        (the same for its cents), with one scan of the text, and only those are read: ~0.025 ms
        a value in a 15,000-character passage, where reading its ~250 runs cost ~0.4 ms."""
        text = self.text
        found: set[int] = set()
        for match in _significant_in_run(_significant_digits(value)).finditer(text):
            start = match.start()
            while start and text[start - 1] in _RUN_CHARACTERS:
                start -= 1  # to where the run would open
            run = _RUN_DIGITS.match(text, start)
            if run is not None and value in (normalize_number(run.group()),
                                             normalize_number(run.group(), in_cents=True)):
                found.add(self._piece_of(start))
        if _YEAR_VALUE.fullmatch(value):
            found |= self._pieces_matching(_digits_alone(value))
        return found

    def _number_word_pieces(self) -> set[int]:
        """The quantity pieces in which a number word stands (in an ASCII text `learn_stems` has
        found where, with the same pass)."""
        found = self._signs.get("words")
        if found is None:
            starts = self._number_word_starts
            if starts is None:
                starts = [start for start, _ in _number_word_runs(self.text)]
            found = self._signs["words"] = set(map(self._piece_of, starts))
        return found

    def _sign_pieces(self, kind: str) -> set[int]:
        found = self._signs.get(kind)
        if found is None:
            if kind == "date":
                found = self._pieces_matching(_DATE_SIGN)
                found |= {self._piece_of(match.start()) for match in _month_words(self.text, True)}
            else:
                found = self._pieces_matching(_TIME_SIGN)
            self._signs[kind] = found
        return found


def _holds(postings: tuple[int, ...], position: int) -> bool:
    """Whether `position` is one of `postings` (ascending)."""
    found = bisect.bisect_left(postings, position)
    return found < len(postings) and postings[found] == position


def _stem_units(
    text: str, starts: list[int], stems: list[str]
) -> tuple[dict[str, tuple[int, ...]], list[int]]:
    """The units (given by their `starts`; ascending) holding a word of `text`, an ASCII text,
    that gives one of `stems` (`_token_reading`). Such a word opens with its stem, or with all of
    it but a final "y" ("policies" gives "policy"), so one Aho-Corasick pass finds every word that
    may give one, and each distinct word is read once, not each word of the text. After the pass
    every step runs in C (map, set, sorted) but one per distinct word and one per stem: a
    15,000-character passage has ~800 words opening with a 5-sentence answer's stems.

    The same pass finds where the number words stand (the starts of `_number_word_runs(text)`,
    ascending), which reading the passage's values needs: a second pass over the text cost
    ~0.08 ms a 15,000-character passage."""
    # The lowered text with every character that is no letter nor "'" made a space, after a space
    # (so a word opening the text follows one) and before one (so every word ends before one);
    # spaced[i] stands for text[i - 1].
    spaced = " " + text.lower().translate(_WORD_CHARACTERS_ONLY) + " "
    # Where a word opens with a prefix (one place per word: no prefix opens another), and, below
    # zero, where a number word stands alone (less _NUMBER_WORD_MARK).
    found_places = sorted(starmap(sub, _prefix_automaton(tuple(stems)).iter(spaced)))
    split = bisect.bisect_left(found_places, 0)
    firsts = found_places[split:]
    number_word_starts = list(map(add, found_places[:split], repeat(_NUMBER_WORD_MARK - 1)))
    if "'" in spaced:
        firsts = [
            first for first in firsts if spaced[first - 1] == " " or _opens_word(spaced, first)
        ]
    words = list(map(spaced.__getitem__, map(slice, firsts, map(spaced.find, repeat(" "), firsts))))
    if "'" in spaced:
        # A word takes at most one "'" and the letters after it ("rider's"; "rock'n'roll":
        # "rock'n").
        words = [_WORD_AT.match(word).group() if "'" in word else word for word in words]
    # Each (stem, unit) pair as one number, stem_base + unit, so that the pairs are told apart
    # and sorted as ints (sorting tuples of a string and an int cost ~0.3 ms a passage).
    width = len(starts) + 1
    base = {word_stem: number * width for number, word_stem in enumerate(stems, 1)}
    base_of = {word: base[reading[0]] for word in set(words)
               if (reading := _token_reading(word)) is not None and reading[0] in base}
    # A unit's number is how many units after the first start at or before the word.
    later_starts = [start + 1 for start in starts[1:]]
    units = map(bisect.bisect_right, repeat(later_starts), firsts)
    pairs = sorted(set(map(add, map(base_of.get, words, repeat(0)), units)))
    found = {}
    for word_stem, stem_base in base.items():
        first = bisect.bisect_left(pairs, stem_base)
        last = bisect.bisect_left(pairs, stem_base + width, first)
        found[word_stem] = tuple(map(sub, pairs[first:last], repeat(stem_base)))
    return found, number_word_starts


def _shortest_prefixes(stems: tuple[str, ...]) -> frozenset[str]:
    """What a word giving one of `stems` opens with (the stem, or all of it but a final "y"),
    without those that open with another: a word opening with "rider" opens with "rid" too."""
    prefixes = sorted(
        {word_stem[:-1] if word_stem.endswith("y") else word_stem for word_stem in stems}
    )
    kept: list[str] = []
    for prefix in prefixes:  # sorted, so a prefix comes right before the first word it opens
        if not kept or not prefix.startswith(kept[-1]):
            kept.append(prefix)
    return frozenset(kept)


@lru_cache(maxsize=64)  # an answer's stems are asked of each of its passages, in the same order
def _prefix_automaton(stems: tuple[str, ...]) -> ahocorasick.Automaton:
    """An automaton of what a word giving one of `stems` opens with (`_shortest_prefixes`) after
    a space or a "'" (see `_stem_units`), each giving where its match ends less where its prefix
    begins; and of the number words between two of these (a run of letters that is a number word:
    `_NUMBER_WORD_RUN`), each giving that plus _NUMBER_WORD_MARK, so that where they begin comes
    out below zero. Building one costs ~50 us, where a regex of the same words cost ~0.7 ms to
    compile (once per answer). It is kept by the stems, not by their prefixes: working those out
    again for each passage cost ~0.15 ms an answer."""
    automaton = ahocorasick.Automaton()
    for prefix in _shortest_prefixes(stems):
        for before in " '":
            automaton.add_word(before + prefix, len(prefix) - 1)
    for word in NUMBER_WORDS:
        for before in " '":
            for after in " '":
                automaton.add_word(before + word + after, len(word) + _NUMBER_WORD_MARK)
    automaton.make_automaton()
    return automaton


_NUMBER_WORD_MARK = 1 << 40  # more than any text's length


_WORD_CHARACTERS_ONLY = str.maketrans({character: " " for character in map(chr, range(128))
                                       if character not in "abcdefghijklmnopqrstuvwxyz'"})
_WORD_AT = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _opens_word(lowered: str, position: int) -> bool:
    """Whether the letters at `position`, right after a "'", open a word. After a letter they do
    not when the letters before the "'" open one, which takes "'" and these as its end
    ("rider's"); they do when those are themselves such an end ("rock'n'roll": "roll")."""
    apostrophe = start = position - 1
    while lowered[start - 1] in _LOWER_LETTERS:
        start -= 1
    if start == apostrophe:
        return True
    return lowered[start - 1] == "'" and not _opens_word(lowered, start)


_LOWER_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


@lru_cache(maxsize=512)
def index_units(text: str) -> UnitIndex:
    return UnitIndex(text)
