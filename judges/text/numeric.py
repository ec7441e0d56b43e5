"""Numbers, number words, dates and clock times in a text, each with its span and its normalized
value, so that "$86" meets "86.00", "fifty percent" meets "50%" and "January 5, 2027" meets
"2027-01-05"; and the values a passage offers for matching them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date as date_type
from decimal import Decimal
from functools import lru_cache
from itertools import starmap
from operator import itemgetter

from judges.text.scan import line_starts, matches_at, word_positions
from judges.text.words import content_words
from judges.types import Span

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
        return (
            not (self.is_money or self.is_percent)
            and re.fullmatch(r"(19|20)\d\d", self.value) is not None
        )


# A citation marker such as [2] or [P3, P4] points at a passage; it is not a fact to check.
_CITATION = re.compile(r"\[\s*P?\d+(?:\s*[,;]\s*P?\d+)*\s*\]", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
# Digits glued to letters (P2, c1, COVID19) are names, not quantities; "1,500" keeps its comma
# only when it groups thousands, and the atomic group stops "2.75x" or "1,5000" from matching a
# shorter prefix. The sign, percent, plus, ordinal suffix and unit word stay in the match so a
# highlighted fabrication shows what the answer actually said.
# A number opens with a currency sign (no ".", "," or digit before it) and the digits after it
# (`amount`), or with a digit (no letter, digit, ".", "," or sign before it) and the digits after
# that one (`more`): the pattern opens with that set of characters, which the regex engine skips
# to, and tells the two apart by what it has just read. Written as an alternation, each opening
# with its lookbehind, it was tried at every character (about 0.2 ms per 1,500 characters); tried
# only where a number may start, one Python step each, it took twice as long as this finditer
# (~0.18 against ~0.09 ms for the ~36 numbers of 1,900 characters of the bench's passages).
_NUMBER = re.compile(
    r"(?P<lead>[$€£\d])"
    r"(?:(?<=[$€£])(?<![.,\d].)\s?(?P<amount>(?>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?))"
    r"|(?<=\d)(?<![\w.,$€£]\d)(?P<more>(?>\d{0,2}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d*(?:\.\d+)?)))"
    r"(?:(?P<suffix>%|\+|st|nd|rd|th)|\s?(?P<unit>dollars?|cents?|¢|percent))?"
    r"(?!\w)"
)


def numbers(text: str) -> list[NumberMention]:
    """Every number in `text` with its span, skipping citation markers like [P2]."""
    return [NumberMention(*_number_fields(match)[:5]) for match in _number_matches(text)]


def key_terms(text: str) -> frozenset[str]:
    """What two texts are compared on: content words plus normalized numbers."""
    return frozenset(content_words(text)) | number_values(text)


def number_values(text: str) -> set[str]:
    """Just the normalized values of `numbers(text)`: the cheap path for long passages."""
    return {_value_of(match) for match in _number_matches(text)}


def _number_matches(text: str) -> Iterator[re.Match[str]]:
    if not _DIGIT.search(text):
        return  # most sentences have no number; skip the slower pattern
    if "[" not in text:
        yield from _NUMBER.finditer(text)
        return
    cited = [match.span() for match in _CITATION.finditer(text)]
    for match in _NUMBER.finditer(text):
        if not any(start <= match.start() < end for start, end in cited):
            yield match


def _value_of(match: re.Match[str]) -> str:
    return normalize_number(
        _digits_of(match), in_cents=match.group("unit") in ("cent", "cents", "¢")
    )


def _number_fields(match: re.Match[str]) -> _Fields:
    """A `_NUMBER` match as the fields of a Quantity (a `NumberMention`'s are the first five)."""
    amount, suffix, unit = match.group("amount", "suffix", "unit")
    is_money = amount is not None or unit not in (None, "percent")
    is_percent = suffix == "%" or unit == "percent"
    return match.group(), match.span(), _value_of(match), is_money, is_percent, False, False, False


def _digits_of(match: re.Match[str]) -> str:
    """The digits of a `_NUMBER` match, without its currency sign."""
    amount = match.group("amount")
    return amount if amount is not None else match.group("lead") + match.group("more")


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


# --- quantities: numbers, number words, dates and times --------------------------------------
#
# `numbers` above sees digits only; it is what the offline judge v1 was built on and stays as it is.
# `quantities` is the richer reading the deterministic checks use: a date is one mention whose value
# is an ISO token ("January 5, 2027", "5 Jan. 2027", "1/5/2027" and "2027-01-05" all give
# "2027-01-05"; "July 2026" gives "2026-07"; "June 30" gives "--06-30"), a clock time is one mention
# ("5 p.m." and "5:00 pm" give "17:00"), and number words count ("fifty percent" is 50, "fourteen
# days" is 14). `quantity_values` gives what a passage offers to match them against, including the
# coarser forms of each date (a passage saying "July 1, 2026" supports "July 2026" and "2026").

MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}
# A month is a capitalized (or all-capitals) word found in MONTHS, so "may" the verb is not May.
# Each one is read with the day and year around it: "January 5, 2027", "5 January 2027", "the 5th
# of Jan. 2027", "July 2026", "June 30", "30 June".
# The month names themselves, so the regex engine skips the other words (it used to match every
# word and look it up, a Python step per word of every passage): capitalized or all capitals, and
# for passages also lowercase ("on may 30 ."). A name glued to letters before it is skipped below.
_MONTH_WORD = re.compile(
    "(?:"
    + "|".join(
        sorted({f for m in MONTHS for f in (m.capitalize(), m.upper())}, key=len, reverse=True)
    )
    + r")\b\.?"
)
_MONTH_WORD_ANY_CASE = re.compile(
    "(?:"
    + "|".join(
        sorted({f for m in MONTHS for f in (m, m.capitalize(), m.upper())}, key=len, reverse=True)
    )
    + r")\b\.?"
)
# "2007 -- 11" and "2001–07" in a passage are year ranges: they also give 2011 and 2007.
_YEAR_RANGE = re.compile(
    r"\b(?P<century>19|20)(?P<first>\d\d)\s*(?:-{1,2}|–|—|to)\s*(?P<last>\d\d)\b(?![-–—]?\d)"
)
_MONTH_TAIL = re.compile(  # "5, 2027", "5th 2027", "5 , 2027" (tokenized text), ", 2027", " 5"
    r"\s*(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b(?:(?:\s*,)?\s+(?P<year>(?:19|20|"
    r"21)\d\d)\b)?"
    r"|(?:\s*,)?\s+(?P<year_only>(?:19|20|21)\d\d)\b"
)
_DAY_BEFORE = re.compile(
    r"(?<![\w.,$€£])(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?$"
)
_NOT_A_DAY = re.compile(r"\s*[:%$]|\.\d")  # "June 30:" or "May 3.5" is no month and day
_ISO_DATE = re.compile(
    r"(?<![\w/.-])(?P<year>(?:19|20|21)\d\d)-(?P<mm>0[1-9]|1[0-2])-(?P<dd>0[1-9]|[12]\d|3[01])"
    r"(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?(?![\w/-]|\.\d)"
)
_US_DATE = re.compile(  # month/day/year, as US answers write it
    r"(?<![\w/.-])(?P<mm>0?[1-9]|1[0-2])/(?P<dd>0?[1-9]|[12]\d|3[01])/(?P<year>(?:19|20|21)\d\d)"
    r"(?![\w/]|\.\d)"
)
_MERIDIEM = r"(?P<mer>[ap]\.\s?m\.|[ap]m\b|[AP]\.\s?M\.|[AP]M\b)"
_CLOCK_TIME = re.compile(
    rf"(?<![\w.:,$€£])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?![\d:])(?:\s?{_MERIDIEM})?"
)
_HOUR_TIME = re.compile(rf"(?<![\w.:,$€£])(?P<h>1[0-2]|0?[1-9])\s?{_MERIDIEM}")
# Every _HOUR_TIME has this: its hour's last digit is ASCII, and [0-9] is quicker to skip to than
# \d (~15 us less per 2,000 characters).
_MERIDIEM_HINT = re.compile(r"[0-9]\s?[aApP]\.?\s?[mM]")
_ISO_HINT = re.compile(r"\d\d-[01]\d-")
_CLOCK_HINT = re.compile(r"\d:\d\d")

_UNITS_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_TENS_WORDS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
               "eighty": 80, "ninety": 90}
NUMBER_WORDS: dict[str, int] = {
    word: value for value, word in enumerate(_UNITS_WORDS)
} | _TENS_WORDS
_NUMBER_WORD = re.compile(
    r"(?<![\w-])(?:(?P<tens>"
    + "|".join(_TENS_WORDS)
    + r")(?:[- ](?P<ones>one|two|three|four|five|six|seven"
    r"|eight|nine)\b)?|(?P<small>" + "|".join(sorted(_UNITS_WORDS, key=len, reverse=True)) + r"))"
    r"(?:\s+(?P<hundred>hundred))?\b"
    r"(?:\s?(?P<unit>dollars?|cents?|percent|per\s?cent))?(?!\w)",
    re.IGNORECASE,
)
# In an answer a number word is a checkable quantity only when it counts something ("five years",
# "three children", "fifty percent", "sixty-five and older"), so "one of the ways" or "two
# options" are not read as statistics. Passages offer every number word they contain.
_COUNTED = re.compile(
    r"[\s-]+(?:(?:[a-z]+[\s-]+)?(?:days?|weeks?|months?|years?|hours?|minutes?|rides?|trips?|"
    r"transfers?"
    r"|child(?:ren)?|adults?|riders?|people|persons?|companions?|attendants?|miles?|zones?|stops?"
    r"|times|consecutive|business|calendar)\b|(?:and|or) (?:older|over|more|younger|under)\b)",
    re.IGNORECASE,
)
_WEB_ADDRESS = re.compile(r"\bhttps?://[^\s<>\"'\])]+|\bwww\.[^\s<>\"'\])]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
# A run of ASCII letters that is a number word, in any case ("Five", "TWELVE"), found by the regex
# engine rather than by looking up every word of the text.
_NUMBER_WORD_RUN = re.compile(
    r"(?<![A-Za-z])(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")(?![A-Za-z])",
    re.IGNORECASE | re.ASCII,
)
# "1." or "2)" opening a line is a list item's number, not a quantity; tokenized text (as
# CNN/DailyMail ships it) writes "1 .".
_LIST_ORDINAL = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(\d{1,3})[ \t]?[.)](?=\s)", re.MULTILINE)

# The scans below find the same matches as the patterns' finditer, trying each pattern only where
# it can begin (`matches_at`), found with str.find or a pattern the regex engine skips ahead on.
# Number words, month names and year ranges are rare in a passage, while scanning for them tried a
# long alternation at every character: these three scans were most of the cost of reading a
# passage's quantities. For non-ASCII text (where lower() may change lengths) the full scans run.


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _number_word_runs(text: str) -> Iterator[Span]:
    """The spans `_NUMBER_WORD_RUN.finditer(text)` gives: runs of ASCII letters that are a number
    word in any case. Each such run begins with a number word, so only those places are tried."""
    if not text.isascii():
        yield from (match.span() for match in _NUMBER_WORD_RUN.finditer(text))
        return
    for match in matches_at(_NUMBER_WORD_RUN, text, word_positions(text.lower(), NUMBER_WORDS)):
        yield match.span()


# Every month name and abbreviation begins with one of these (lowered).
_MONTH_PREFIXES = frozenset(name[:3] for name in MONTHS)


def _month_words(text: str, any_case: bool) -> Iterator[re.Match[str]]:
    """`_MONTH_WORD(_ANY_CASE).finditer(text)`, tried only where a month's first three letters
    stand."""
    pattern = _MONTH_WORD_ANY_CASE if any_case else _MONTH_WORD
    if not text.isascii():
        return pattern.finditer(text)
    return matches_at(pattern, text, word_positions(text.lower(), _MONTH_PREFIXES))


def _year_ranges(text: str) -> Iterator[re.Match[str]]:
    """`_YEAR_RANGE.finditer(text)`, tried only where "19" or "20" stands."""
    if "19" not in text and "20" not in text:
        return iter(())
    return matches_at(_YEAR_RANGE, text, word_positions(text, ("19", "20")))


@dataclass(frozen=True)
class Quantity(NumberMention):
    """A `NumberMention` that may also be a date, a clock time or a number written as a word."""

    is_date: bool = False
    is_time: bool = False
    is_word: bool = False

    @property
    def kind(self) -> str:
        if self.is_date or self.looks_like_year:
            return "date"
        if self.is_time:
            return "time"
        if self.is_money:
            return "money"
        if self.is_percent:
            return "percent"
        return "number"


def quantities(text: str, *, every_word: bool = False) -> list[Quantity]:
    """Every checkable quantity in `text`, in order, none overlapping another.

    Dates and times come first and swallow the numbers inside them; then number words (only those
    that count something, unless `every_word`); then digits as `numbers` reads them. Skipped:
    citation markers ([P2], [3]), digits glued to letters (P2, c1), list numbers opening a line
    ("1. Tap your card"), and anything inside a URL or an e-mail address.
    """
    return list(starmap(Quantity, sorted(_quantity_fields(text, every_word), key=itemgetter(1))))


def readings_by_start(text: str) -> list[tuple[int, list[str]]]:
    """Where each quantity of `text` starts (every number word counts, as in a passage) and its
    readings (`quantity_readings`), in no order: what reading a passage's values needs, without
    the Quantity objects (building one costs ~1.4 us, a passage's pieces read hold ~40)."""
    return [
        (span[0], _readings(value, is_date, is_time))
        for _, span, value, _, _, is_date, is_time, _ in _quantity_fields(text, every_word=True)
    ]


# The fields of a Quantity in their order (text, span, value, is_money, is_percent, is_date,
# is_time, is_word), as `_quantity_fields` finds them.
_Fields = tuple[str, Span, str, bool, bool, bool, bool, bool]


def _quantity_fields(text: str, every_word: bool) -> list[_Fields]:
    """The quantities of `text` (see `quantities`) as the fields of each, in no order."""
    found: list[_Fields] = []
    taken = bytearray(len(text) + 1)  # 1 where a quantity (or a URL, or a list number) already is

    def free(span: Span) -> bool:
        return taken.find(1, span[0], span[1]) < 0

    def block(span: Span) -> None:
        taken[span[0]:span[1]] = b"\x01" * (span[1] - span[0])

    def add(fields: _Fields | None) -> None:
        if fields is not None and free(fields[1]):
            found.append(fields)
            block(fields[1])

    lowered = text.lower()
    if "http" in lowered or "www." in lowered:
        for match in _WEB_ADDRESS.finditer(text):
            block(match.span())
    if "@" in text:
        for match in _EMAIL.finditer(text):
            block(match.span())
    has_digit = _DIGIT.search(text) is not None
    if has_digit:
        for match in matches_at(_LIST_ORDINAL, text, line_starts(text)):
            block(match.span(1))
        if "-" in text and _ISO_HINT.search(text):
            for match in _ISO_DATE.finditer(text):
                add(_numeric_date(match))
        if "/" in text:
            for match in _US_DATE.finditer(text):
                add(_numeric_date(match))
        for date in _month_dates(text, any_case=every_word):
            add(date)
        if ":" in text and _CLOCK_HINT.search(text):
            for match in _CLOCK_TIME.finditer(text):
                add(_time_fields(match))
        if _MERIDIEM_HINT.search(text):
            for match in _HOUR_TIME.finditer(text):
                add(_time_fields(match))
    for word in _number_word_runs(text):
        if not free(word):
            continue
        match = _NUMBER_WORD.match(text, word[0])
        if match and (every_word or match.group("unit") or _COUNTED.match(text, match.end())):
            add(_word_fields(match))
    if has_digit:
        for match in _number_matches(text):
            start, end = match.span()
            if taken.find(1, start, end) < 0:  # numbers come last: none needs blocking
                found.append(_number_fields(match))
    return found


def _lowercase_date(text: str, word: re.Match, tail: re.Match | None, month: int) -> bool:
    """Whether a lowercase month name in an answer is a date: with a year after it, or a day after
    or before it ("january 4 , 2000", "16 september"); "may" only with its year ("you may 5 times"
    is no date)."""
    if tail and (tail.group("year") or tail.group("year_only")):
        return True
    if month == 5:
        return False
    return (
        bool(tail and tail.group("day"))
        or _DAY_BEFORE.search(text, max(0, word.start() - 20), word.start()) is not None
    )


def _month_dates(text: str, any_case: bool = False) -> Iterator[_Fields | None]:
    """Dates written with a month's name, the most specific reading of each. Month names are
    capitalized unless `any_case` (so "may" the verb is not May in an answer), or lowercase with a
    day or a year right after it: lowercased text ("on january 4 , 2000") writes no capitals."""
    for word in _month_words(text, any_case=True):
        month = MONTHS.get(word.group().rstrip(".").lower())
        if month is None or (word.start() and text[word.start() - 1].isalpha()):
            continue
        tail = _MONTH_TAIL.match(text, word.end())
        if not any_case and word.group().islower() and not _lowercase_date(text, word, tail, month):
            continue
        if (
            tail
            and tail.group("day")
            and (tail.group("year") or not _NOT_A_DAY.match(text, tail.end()))
        ):
            year = int(tail.group("year")) if tail.group("year") else None
            span = (word.start(), tail.end())
            yield _date_fields(text[slice(*span)], span, year, month, int(tail.group("day")))
            continue
        # A day before the month, looked for only now: the search tries each of 20 places.
        head = _DAY_BEFORE.search(text, max(0, word.start() - 20), word.start())
        if tail and tail.group("year_only"):
            span = (head.start() if head else word.start(), tail.end())
            day = int(head.group("day")) if head else None
            yield _date_fields(text[slice(*span)], span, int(tail.group("year_only")), month, day)
        elif head:
            span = (head.start(), word.end())
            yield _date_fields(text[slice(*span)], span, None, month, int(head.group("day")))


def _numeric_date(match: re.Match[str]) -> _Fields | None:
    return _date_fields(
        match.group(), match.span(), int(match["year"]), int(match["mm"]), int(match["dd"])
    )


def _date_fields(
    written: str, span: Span, year: int | None, month: int, day: int | None
) -> _Fields | None:
    """A date as one quantity: "2027-01-05", "2027-01" (no day) or "--01-05" (no year); None when
    there is no such day."""
    if day is not None:
        try:
            date_type(year or 2000, month, day)  # 2000 is a leap year, so "February 29" is valid
        except ValueError:
            return None
    if year is None:
        value = f"--{month:02d}-{day:02d}"
    elif day is None:
        value = f"{year:04d}-{month:02d}"
    else:
        value = f"{year:04d}-{month:02d}-{day:02d}"
    return written, span, value, False, False, True, False, False


@lru_cache(maxsize=4096)
def quantity_values(text: str) -> frozenset[str]:
    """The values a text offers for matching `quantities` of another text: every quantity in it
    (every number word, lowercase month names, the end year of "2007 -- 11"), and coarser readings:
    a date "2027-01-05" also gives "2027-01", "--01-05" and "2027"; a time with a.m./p.m. also
    gives its 12-hour reading, so "5:00 p.m." gives "17:00" and "05:00" (an answer's bare "5:00"
    is then found). Read piece by piece (`quantity_pieces`), which gives the same values."""
    return frozenset().union(
        *(_piece_values(text[start:end]) for start, end in quantity_pieces(text))
    )


def year_range_values(text: str) -> set[str]:
    """The end years of the year ranges in `text` ("2007 -- 11" gives "2011")."""
    return {match["century"] + match["last"] for match in _year_ranges(text)
            if int(match["last"]) > int(match["first"])}


@lru_cache(maxsize=16384)
def _piece_values(piece: str) -> frozenset[str]:
    values = year_range_values(piece)
    for _, readings in readings_by_start(piece):
        values.update(readings)
    return frozenset(values)


# Where a text can be cut so that its quantities are those of its pieces: after sentence
# punctuation and one whitespace character, before a capitalized word ("... $5. Riders ..."). No
# pattern of `quantities` matches across such a place: none crosses ".", "!" or "?" followed by
# whitespace except a month's "Jan. 5" (its day is a digit, not a capital) and "A. M." (a capital
# followed by "."), and every lookbehind reads the whitespace before the cut as it reads the start
# of a text. tests/judges/test_text_scans.py holds the pieces' quantities to the whole text's.
_SAFE_CUT = re.compile(r"[.!?]\s(?=[A-Z][a-z])")


def quantity_pieces(text: str, rough: Iterable[Span] | None = None) -> list[Span]:
    """`text` cut at every safe place (see _SAFE_CUT) into consecutive spans covering all of it.

    `rough`, the `rough_pieces(text)` when they are known, spares the scan: a safe cut's
    punctuation is followed by whitespace, so a rough piece ends with it, and only the rough
    pieces' ends are tried (~0.06 ms a 15,000-character passage, where the scan took ~0.15 ms).
    """
    if rough is None:
        ends = [match.end() for match in _SAFE_CUT.finditer(text)]
    else:
        ends = [end + 1 for _, end in rough if _SAFE_CUT.match(text, end - 1)]
    return list(zip([0, *ends], [*ends, len(text)]))


def quantity_readings(quantity: Quantity) -> list[str]:
    """What one quantity of a passage offers for matching (see `quantity_values`): its value, and
    the coarser forms of a date or the 12-hour reading of a time."""
    return _readings(quantity.value, quantity.is_date, quantity.is_time)


def _readings(value: str, is_date: bool, is_time: bool) -> list[str]:
    values = [value]
    if is_date:
        values.extend(_coarser_dates(value))
    elif is_time:
        hour, minutes = value.split(":")
        values.append(f"{(int(hour) - 1) % 12 + 1:02d}:{minutes}")
    return values


def _coarser_dates(value: str) -> list[str]:
    if value.startswith("--"):
        return []
    parts = value.split("-")
    coarser = [parts[0]]
    if len(parts) == 3:
        coarser += [f"{parts[0]}-{parts[1]}", f"--{parts[1]}-{parts[2]}"]
    return coarser


def _time_value(match: re.Match[str]) -> str:
    hour = int(match.group("h"))
    minutes = match.groupdict().get("m") or "00"
    meridiem = (match.group("mer") or "").lower().replace(".", "").replace(" ", "")
    if meridiem == "pm" and hour < 12:
        hour += 12
    elif meridiem == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minutes}"


def _time_fields(match: re.Match[str]) -> _Fields:
    return match.group(), match.span(), _time_value(match), False, False, False, True, False


def _word_fields(match: re.Match[str]) -> _Fields:
    if match.group("tens"):
        ones = match.group("ones")
        value = NUMBER_WORDS[match.group("tens").lower()] + (
            NUMBER_WORDS[ones.lower()] if ones else 0
        )
    else:
        value = NUMBER_WORDS[match.group("small").lower()]
    if match.group("hundred"):
        value *= 100
    unit = (match.group("unit") or "").lower().replace(" ", "")
    in_cents = unit in ("cent", "cents")
    return (match.group(), match.span(), normalize_number(str(value), in_cents=in_cents),
            unit.startswith(("dollar", "cent")), unit == "percent", False, False, True)
