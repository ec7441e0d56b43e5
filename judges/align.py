"""Align a claim with the source sentence it was taken from, and read the differences.

A claim that copies a source sentence but changes one word is the hallucination a word count
misses: "Pets are allowed" shares every content word with "Pets are not allowed". So the claim is
aligned token by token (difflib opcodes over normalized tokens) with ONE source sentence, or an
adjacent pair when the claim needs both, and what differs is read:

* a negation on one side only (not, no, never, n't, without, cannot, none, neither/nor, "fail
  to"; negative-prefix antonyms come from the lexicon, never from a prefix rule): CONTRADICTED;
* a name in an aligned slot where the source holds another capitalized name: CONTRADICTED; a
  name the sentence has elsewhere still counts when every one of its occurrences there is aligned
  with another word of the claim ("the Fox News elections, ... Fox News had" for "the United
  States elections, ... Fox News had"), and a name of the neighbouring sentence of a pair never
  fills a slot of the other ("next to [Fengjia Night Market]" for "next to [Feng Chia
  University]");
* a number, date or month in an aligned slot that differs, or a number bound to another unit
  ("23 lb" where the source says "23 kg"), or a noun bound to another number: CONTRADICTED;
* a word and its opposite from OPPOSITES (higher/lower, before/after, allowed/prohibited,
  always/never, all/none, ...): CONTRADICTED; a word and a weaker or stronger one from SCALES
  (all/some, always/sometimes, must/may, will/might, ...): PARTIALLY_SUPPORTED;
* roles exchanged: "X P Y" where the source has "Y P X" with the same pivot words P ("Buchenwald
  in Jehovah's Witnesses", "Rome to Vienna"), or the same content words in the other order
  around the same verb ("A beat B" for "B beat A"): CONTRADICTED. A passive ("B was acquired by
  A"), a list or "and"/"between", and a bare copula ("X is Y") are no swap;
* a content word of the claim in a slot where the source has other content words: PARTIALLY_
  SUPPORTED (the source says something else there, perhaps in other words); an absolute (all,
  only, always, every) or a number the source sentence does not have: PARTIALLY_SUPPORTED and
  UNSUPPORTED.

Words of another sentence never support a slot: the claim is aligned with the one sentence (or
adjacent pair) chosen, and `coverage` counts only that sentence's words. Explanations quote the
source's own words ("P1 says 'Porto' where the claim says 'Lisbon'"), never stems or scores.

OPPOSITES, SCALES and NEGATIONS are the one lexicon of opposing words: the offline judge and the
deterministic checks read them from here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property, lru_cache

from judges import lexicon
from judges.novelty import is_new_word
from judges.text import (
    MONTHS,
    NUMBER_WORDS,
    STOPWORDS,
    WORD_LETTERS,
    Span,
    fold_accents,
    normalize_number,
    rough_pieces,
    stem,
)
from judges.types import worse_label

# --- the lexicon -------------------------------------------------------------------------------

# Negation words; "n't", "cannot" and "fail to" are read as "not" by the tokenizer.
NEGATIONS = frozenset("not no never without none nor neither".split())

# Words that say opposite things about the same slot: direction, order, comparison, permission,
# limits, outcome, quantifier extremes, and the few negative-prefix antonyms worth listing (a
# prefix rule would read "under"/"interest" as negations). Converses are not opposites: "the pass
# is sold at every station" and "the pass can be bought at any station" say one thing.
_OPPOSITE_PAIRS = """
    increase:decrease increase:reduce increase:drop increase:cut rise:fall rise:decline raise:lower
    gain:loss grow:shrink expand:shrink strengthen:weaken improve:worsen
    before:after earlier:later earliest:latest early:late first:last
    more:less more:fewer most:least many:few higher:lower highest:lowest high:low larger:smaller
    largest:smallest large:small big:small biggest:smallest above:below over:under greater:less
    longer:shorter long:short older:younger oldest:youngest old:young old:new maximum:minimum
    max:min upper:lower up:down inside:outside internal:external domestic:international
    public:private urban:rural majority:minority full:empty open:closed opened:closed
    allowed:prohibited allowed:forbidden allowed:banned permitted:prohibited permitted:forbidden
    allow:prohibit allow:forbid allow:ban permit:prohibit required:optional mandatory:optional
    compulsory:optional mandatory:voluntary compulsory:voluntary legal:illegal valid:invalid
    possible:impossible able:unable available:unavailable eligible:ineligible likely:unlikely
    include:exclude included:excluded including:excluding accept:reject accepted:rejected
    approve:reject approved:rejected agree:disagree win:lose won:lost winner:loser victory:defeat
    success:failure succeeded:failed pass:fail passed:failed true:false positive:negative
    start:end started:ended begin:end began:ended import:export
    arrive:depart north:south east:west northern:southern eastern:western left:right
    male:female man:woman men:women boy:girl husband:wife father:mother son:daughter
    brother:sister king:queen always:never all:none everyone:nobody everything:nothing
    everywhere:nowhere same:different
"""
# Pairs on one scale, stronger first: a claim with one where its source has the other says more
# (or less) than the source, not the opposite.
_SCALE_PAIRS = """
    all:some all:many all:most all:several every:some always:sometimes always:often always:usually
    always:occasionally usually:sometimes often:sometimes never:rarely never:seldom none:few
    most:some many:some must:may must:can must:should must:might required:recommended
    will:may will:might will:could definitely:probably certainly:probably certain:likely
"""


def _norm_word(lowered: str) -> str:
    """How a lowercased word is compared: a stopword as it is, any other word by its stem."""
    return lowered if lowered in STOPWORDS else stem(lowered)


def _pairs(spec: str) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for pair in spec.split():
        left, right = (_norm_word(word) for word in pair.split(":"))
        found.setdefault(left, set()).add(right)
        found.setdefault(right, set()).add(left)
    return {word: frozenset(others) for word, others in found.items()}


OPPOSITES: dict[str, frozenset[str]] = _pairs(_OPPOSITE_PAIRS)
SCALES: dict[str, frozenset[str]] = _pairs(_SCALE_PAIRS)
# Absolutes a claim adds to overgeneralize.
ABSOLUTES = frozenset(
    "all always never only every entire entirely completely solely exclusively none".split()
)

# Units a number is written with; two numbers with different units here say different things.
# Spellings of one unit share a key.
_UNIT_SPELLINGS = {
    "kg": "kg kgs kilogram kilograms kilo kilos",
    "g": "g gram grams",
    "lb": "lb lbs pound pounds",
    "oz": "oz ounce ounces",
    "km": "km kms kilometer kilometers kilometre kilometres",
    "m": "m meter meters metre metres",
    "cm": "cm centimeter centimeters centimetre centimetres",
    "mm": "mm millimeter millimeters",
    "mi": "mi mile miles",
    "ft": "ft foot feet",
    "in": "inch inches",
    "l": "l liter liters litre litres",
    "ml": "ml milliliter milliliters",
    "gal": "gal gallon gallons",
    "s": "sec secs second seconds",
    "min": "min mins minute minutes",
    "h": "hr hrs hour hours",
    "d": "day days",
    "wk": "week weeks",
    "mo": "month months",
    "yr": "yr yrs year years",
    "decade": "decade decades",
    "century": "century centuries",
    "%": "% percent per-cent",
    "pp": "percentage",
    "$": "$ dollar dollars usd",
    "€": "€ euro euros eur",
    "£": "£ pound-sterling gbp",
    "¥": "¥ yen jpy",
    "cent": "cent cents",
    "mph": "mph",
    "kmh": "kmh kph",
    "c": "celsius",
    "f": "fahrenheit",
    "mb": "mb megabyte megabytes",
    "gb": "gb gigabyte gigabytes",
    "million": "million millions",
    "billion": "billion billions",
    "thousand": "thousand thousands",
    "hundred": "hundred hundreds",
}
UNITS: dict[str, str] = {
    spelling: key for key, spellings in _UNIT_SPELLINGS.items() for spelling in spellings.split()
}
_CURRENCY = frozenset("$€£¥")


# --- tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    rf"\[[\dP,;\s]+\]|[^\W\d_]*\d+(?:[.,]\d+)*[^\W\d_]*|"
    rf"[$€£¥%]|{WORD_LETTERS}(?:['’]{WORD_LETTERS})*"
)
_OPENERS = frozenset(".!?:;\"“(\n-–—•*[")
_CONTRACTION = re.compile(r"(?i)^(.+?)n['’]t$")
_CONTRACTED_VERB = {"ca": "can", "wo": "will", "sha": "shall"}
_SPLIT_NEGATION = frozenset({"n't", "n’t"})


@dataclass(frozen=True)
class Token:
    norm: str  # what is compared: a stem, a stopword, a number's value, a unit key, "month:6"
    span: Span  # offsets of the word it comes from in the text aligned
    kind: str  # "word", "name", "number", "negation", "unit"
    content: bool  # a content word, number or name: what coverage counts


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[Token, ...]:
    """The tokens of `text` in order: words normalized by `_norm_word`, numbers by value, number
    words and months as numbers, contractions split ("don't" gives "do" and "not", both spanning
    the word), units by their key."""
    found: list[Token] = []
    for match in _TOKEN.finditer(text):
        word, span = match.group(), match.span()
        if word[0] == "[":
            continue  # a citation marker
        if any(c.isdigit() for c in word) and not word.isdigit() and not word[0].isdigit() or (
                word[0].isdigit() and not word[-1].isdigit()):
            # Digits glued to letters ("F1", "P2", "3rd", "10am") name or order things: compared as
            # words.
            found.append(Token(word.lower(), span, "word", True))
            continue
        if word[0].isdigit():
            found.append(Token(_number_norm(word), span, "number", True))
            continue
        if word in _CURRENCY or word == "%":
            found.append(Token(UNITS[word], span, "unit", True))
            continue
        raw = re.split(r"['’]s$", word)[0]
        lowered = fold_accents(raw.lower())
        contraction = _CONTRACTION.match(lowered)
        if lowered in _SPLIT_NEGATION:  # tokenized text ("could n't"): the verb is the token before
            found.append(Token("not", span, "negation", False))
        elif contraction or lowered == "cannot":
            verb = "can" if lowered == "cannot" else contraction.group(1)
            found.append(Token(_CONTRACTED_VERB.get(verb, verb), span, "word", False))
            found.append(Token("not", span, "negation", False))
        elif lowered in NUMBER_WORDS:
            found.append(Token(str(NUMBER_WORDS[lowered]), span, "number", True))
        elif lowered in MONTHS and raw[0].isupper():
            found.append(Token(f"month:{MONTHS[lowered]}", span, "number", True))
        elif lowered in NEGATIONS:
            found.append(Token(lowered, span, "negation", False))
        elif lowered in UNITS and found and found[-1].kind == "number":
            found.append(Token(UNITS[lowered], span, "unit", True))
        elif len(lowered) < 2 and lowered not in STOPWORDS:
            continue
        else:
            norm = _norm_word(lowered)
            # A stopword in capitals among lowercase words is an acronym ("US cinemas", "IT staff").
            acronym = lowered in STOPWORDS and len(raw) > 1 and raw.isupper() and not text.isupper()
            content = lowered not in STOPWORDS or acronym
            found.append(
                Token(
                    norm, span, "name" if content and _is_name(text, span, raw) else "word", content
                )
            )
    return tuple(_year_range_ends(text, _fail_to(found)))


_RANGE_DASH = re.compile(r"\s*(?:-{1,2}|–|—)\s*")


def _year_range_ends(text: str, found: list[Token]) -> list[Token]:
    """A year range's second year written with two digits ("2007–11", "1991 -- 94") is read as
    the year it names (2011, 1994), as the number check reads it (judges.text: _YEAR_RANGE), so
    "2007-2011" copies it."""
    for k in range(1, len(found)):
        first, last = found[k - 1], found[k]
        if (
            first.kind == "number"
            and last.kind == "number"
            and len(text[slice(*first.span)]) == 4
            and text[slice(*first.span)][:2] in ("19", "20")
            and len(text[slice(*last.span)]) == 2
            and _RANGE_DASH.fullmatch(text, first.span[1], last.span[0])
            and text[slice(*last.span)] > text[slice(*first.span)][2:]
        ):
            found[k] = Token(
                text[slice(*first.span)][:2] + text[slice(*last.span)], last.span, "number", True
            )
    return found


def _number_norm(digits: str) -> str:
    try:
        return normalize_number(digits)
    except ArithmeticError:  # "1.2.3": compared as written
        return digits


def _is_name(text: str, span: Span, raw: str) -> bool:
    """Written like a name: capitalized not merely because it opens a sentence, or with inner
    capitals (McManus, NBA)."""
    if not raw[0].isupper():
        return False
    if len(raw) > 1 and (raw.isupper() or any(c.isupper() for c in raw[1:])):
        return True
    if span[0] >= 2 and text[span[0] - 1] in "-–" and text[span[0] - 2].isalpha():
        return True  # the second half of a compound ("Hanna-Barbera"), not a word after a dash
    before = text[:span[0]].rstrip()
    return bool(before) and before[-1] not in _OPENERS


def _fail_to(found: list[Token]) -> list[Token]:
    """"fail(s/ed) to" negates what follows: its "fail" is a negation."""
    return [
        Token("not", token.span, "negation", False)
        if token.norm == "fail" and i + 1 < len(found) and found[i + 1].norm == "to" else token
        for i, token in enumerate(found)
    ]


# --- alignments --------------------------------------------------------------------------------

CONTRADICTED = "CONTRADICTED"
PARTIALLY_SUPPORTED = "PARTIALLY_SUPPORTED"
UNSUPPORTED = "UNSUPPORTED"


@dataclass(frozen=True)
class Difference:
    # negation_added, negation_dropped, number, unit, entity, opposite, swap, scale, substitution,
    # added
    kind: str
    claim_span: Span | None  # offsets into the claim
    source_span: Span | None  # offsets into the source text given to `align`
    label: str  # CONTRADICTED, PARTIALLY_SUPPORTED or UNSUPPORTED
    claim_words: str
    source_words: str

    def explain(self, where: str) -> str:
        """A sentence a reviewer reads at a glance; `where` names the source ("P1")."""
        claim, source = self.claim_words, self.source_words
        if self.kind == "negation_dropped":
            return f"{where} says '{source}'."
        if self.kind == "negation_added":
            return f"The claim says '{claim}' where {where} says '{source}'." if source else (
                f"The claim says '{claim}'; {where} does not negate it.")
        if self.kind == "swap":
            return f"{where} says '{source}': the claim has them the other way round."
        if self.kind in ("added", "qualifier"):
            return f"{where} does not say '{claim}'."
        return f"{where} says '{source}' where the claim says '{claim}'."


@dataclass(frozen=True)
class Alignment:
    source_span: Span  # the sentence (or adjacent pair) of the source the claim was aligned with
    matched: int  # content tokens of the claim matched in order
    coverage: float  # share of the claim's content tokens found in that sentence (or pair)
    differences: tuple[Difference, ...]
    claim_tokens: tuple[Token, ...] = field(repr=False, default=())
    source_norms: frozenset[str] = field(repr=False, default=frozenset())

    def coverage_besides(self, difference: Difference) -> float:
        """The coverage of the claim's content tokens outside the difference's claim span: how
        closely the rest of the claim copies the source (1.0 when nothing is left)."""
        span = difference.claim_span
        rest = [t for t in self.claim_tokens
                if t.content and (span is None or not (span[0] <= t.span[0] < span[1]))]
        return sum(1 for t in rest if t.norm in self.source_norms) / len(rest) if rest else 1.0

    def uncovered(self, claim: str) -> list[str]:
        """The claim's content words (as written) that the aligned sentence lacks."""
        return list(dict.fromkeys(claim[slice(*t.span)] for t in self.claim_tokens
                                  if t.content and t.norm not in self.source_norms))

    @property
    def contradictions(self) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.label == CONTRADICTED)

    @property
    def label(self) -> str:
        """The lowest label a difference gives (SUPPORTED when there is none)."""
        return worse_label("SUPPORTED", *(d.label for d in self.differences))


SLOT_REACH = 2  # tokens from an aligned word within which two replaced tokens share a slot
SLOT_TOKENS = 4  # a replaced stretch longer than this on either side is another statement
SWAP_REACH = 6  # tokens between two words exchanged around their verb
ROLE_TOKENS = 5  # tokens of a stretch exchanged with another around the same pivot words
PIVOT_TOKENS = 4  # pivot words a stretch is exchanged around
SWAP_OCCURRENCES = 8  # places of the source a stretch is looked for at
SWAP_TRIES = 20_000  # pivots tried for one claim, at most
PAIR_GAIN = 2  # content tokens an adjacent pair must match beyond the best single sentence


def align(claim: str, source: str, sentences: Sequence[Span] | None = None) -> Alignment | None:
    """The alignment of `claim` with the sentence of `source` (`sentences`, by default its
    `rough_pieces`) that it was most likely taken from, or an adjacent pair of them when the pair
    matches PAIR_GAIN more of the claim's content tokens in order than any one sentence. None when
    no content token of the claim is in the source."""
    claim_tokens = tokens(claim)
    if not any(t.content for t in claim_tokens):
        return None
    spans = list(sentences) if sentences is not None else rough_pieces(source)
    if not spans:
        return None
    singles = [_tokens_in(source, span) for span in spans]
    counts = [_matched_content(claim_tokens, found) for found in singles]
    top = max(range(len(spans)), key=counts.__getitem__)  # the first sentence matching most
    if not counts[top]:
        return None
    best: tuple[int, tuple[Span, ...], tuple[Token, ...]] = (
        counts[top],
        (spans[top],),
        singles[top],
    )
    for k in range(len(spans) - 1):
        # A claim may state two sentences in either order ("X because Y" for "Y. X.").
        for order in (singles[k] + singles[k + 1], singles[k + 1] + singles[k]):
            matched = _matched_content(claim_tokens, order)
            if matched >= counts[top] + PAIR_GAIN and matched > best[0]:
                best = (matched, (spans[k], spans[k + 1]), order)
    matched, pieces, source_tokens = best
    return _read(claim, claim_tokens, source, pieces, source_tokens, matched)


def _tokens_in(source: str, window: Span) -> tuple[Token, ...]:
    start, end = window
    return tuple(Token(t.norm, (t.span[0] + start, t.span[1] + start), t.kind, t.content)
                 for t in tokens(source[start:end]))


def _matched_content(claim_tokens: Sequence[Token], source_tokens: Sequence[Token]) -> int:
    matcher = SequenceMatcher(
        None, [t.norm for t in claim_tokens], [t.norm for t in source_tokens], autojunk=False
    )
    return sum(1 for block in matcher.get_matching_blocks()
               for t in claim_tokens[block.a:block.a + block.size] if t.content)


def _read(claim: str, claim_tokens: tuple[Token, ...], source: str, pieces: tuple[Span, ...],
          source_tokens: tuple[Token, ...], matched: int) -> Alignment:
    window = (pieces[0][0], pieces[-1][1])
    reader = _Reader(claim, claim_tokens, source, source_tokens, pieces)
    content = [t for t in claim_tokens if t.content]
    source_norms = {t.norm for t in source_tokens}
    coverage = sum(1 for t in content if t.norm in source_norms) / len(content)
    return Alignment(
        source_span=window,
        matched=matched,
        coverage=coverage,
        differences=reader.differences(),
        claim_tokens=claim_tokens,
        source_norms=frozenset(source_norms),
    )


class _Reader:
    """Reads the differences of one claim-source alignment."""

    def __init__(
        self,
        claim: str,
        claim_tokens: tuple[Token, ...],
        source: str,
        source_tokens: tuple[Token, ...],
        pieces: Sequence[Span] = (),
    ):
        self.claim, self.source = claim, source
        self.a, self.b = _skip_answer_particle(claim, claim_tokens), _skip_answer_particle(
            source, source_tokens
        )
        matcher = SequenceMatcher(
            None, [t.norm for t in self.a], [t.norm for t in self.b], autojunk=False
        )
        self.opcodes = matcher.get_opcodes()
        equal = [op for op in self.opcodes if op[0] == "equal"]
        # The stretch of the source the claim is aligned with (a source negation just before it
        # still counts: "not allowed" against "allowed in ...").
        self.region = (max(0, equal[0][3] - 2), equal[-1][4]) if equal else (0, 0)
        self.claim_to_source = {op[1] + k: op[3] + k for op in equal for k in range(op[2] - op[1])}
        self.source_to_claim = {j: i for i, j in self.claim_to_source.items()}
        self.equal_ends = {(op[2], op[4]) for op in equal}
        self.equal_starts = {(op[1], op[3]) for op in equal}
        self.claim_norms = frozenset(t.norm for t in self.a)
        self.source_norms = frozenset(t.norm for t in self.b)
        # Which sentence of the source (the one, or one of the adjacent pair) each source token is
        # in.
        self.piece_of = [
            next((k for k, (start, end) in enumerate(pieces) if start <= t.span[0] < end), 0)
            for t in self.b
        ]
        self._unaligned: dict[int | None, frozenset[str]] = {}
        self.claim_names = frozenset(t.norm for t in self.a if t.kind == "name")
        self.source_names = {
            (self.piece_of[j], t.norm) for j, t in enumerate(self.b) if t.kind == "name"
        }

    def differences(self) -> tuple[Difference, ...]:
        found: list[Difference] = []
        found += self._negation()
        found += self._slots()
        found += self._bindings()
        found += self._swap()
        unique: dict[tuple[str, Span | None], Difference] = {}
        for difference in found:
            unique.setdefault((difference.kind, difference.claim_span), difference)
        return tuple(unique.values())

    # --- negation

    def _unmatched(self) -> tuple[list[int], list[int]]:
        """Claim and source token positions outside the equal blocks (the source's inside the
        aligned region)."""
        claim_side: list[int] = []
        source_side: list[int] = []
        low, high = self.region
        for tag, i1, i2, j1, j2 in self.opcodes:
            if tag == "equal":
                continue
            claim_side.extend(range(i1, i2))
            source_side.extend(j for j in range(j1, j2) if low <= j < high)
        return claim_side, source_side

    def _negation(self) -> list[Difference]:
        claim_side, source_side = self._unmatched()
        claim_negations = [i for i in claim_side if self.a[i].kind == "negation"]
        source_negations = [j for j in source_side if self.b[j].kind == "negation"]
        if len(claim_negations) % 2 == len(source_negations) % 2:
            return []
        # The negated word must be one both sides have in the same slot: the claim then denies
        # (or asserts) what the source asserts (or denies); a "not" of another clause says nothing.
        claim_negations = [
            i for i in claim_negations if self._negated_is_matched(self.a, i, self.claim_to_source)
        ]
        source_negations = [j for j in source_negations
                            if self._negated_is_matched(self.b, j, self.source_to_claim)]
        if claim_negations and not source_negations:
            i = claim_negations[0]
            phrase = self._claim_phrase(i)
            counterpart = self._source_counterpart(i)
            return [Difference("negation_added", phrase, counterpart, CONTRADICTED,
                               self._cut(self.claim, phrase), self._cut(self.source, counterpart))]
        if source_negations and not claim_negations:
            j = source_negations[0]
            phrase = self._source_phrase(j)
            return [
                Difference(
                    "negation_dropped",
                    None,
                    phrase,
                    CONTRADICTED,
                    "",
                    self._cut(self.source, phrase),
                )
            ]
        return []

    @staticmethod
    def _negated_is_matched(found: Sequence[Token], k: int, matched: dict[int, int]) -> bool:
        """Whether the content word a negation at `k` negates (the next one) is aligned."""
        following = next((m for m in range(k + 1, len(found)) if found[m].content), None)
        return following is not None and following in matched

    def _claim_phrase(self, i: int) -> Span:
        """The claim from token i to its next content token."""
        end = next(
            (k for k in range(i + 1, len(self.a)) if self.a[k].content), min(i + 1, len(self.a) - 1)
        )
        return self.a[i].span[0], self.a[end].span[1]

    def _source_phrase(self, j: int) -> Span:
        end = next(
            (k for k in range(j + 1, len(self.b)) if self.b[k].content), min(j + 1, len(self.b) - 1)
        )
        return self.b[j].span[0], self.b[end].span[1]

    def _source_counterpart(self, i: int) -> Span | None:
        """The source words aligned with the claim's words after token i (its next content
        token)."""
        for k in range(i + 1, len(self.a)):
            if k in self.claim_to_source:
                j = self.claim_to_source[k]
                end = next((m for m in range(j, len(self.b)) if self.b[m].content), j)
                return self.b[j].span[0], self.b[end].span[1]
        return None

    # --- slots: replaced and added words

    def _slots(self) -> list[Difference]:
        found: list[Difference] = []
        for op in self.opcodes:
            tag, i1, i2, j1, j2 = op
            if tag == "replace":
                opposed = self._opposed(op)
                found += opposed or self._replaced(op)
            # difflib's opcodes turn the claim into the source: "delete" is what only the claim has.
            elif tag == "delete" and (i1, j1) in self.equal_ends and (i2, j2) in self.equal_starts:
                found += self._added(list(self.a[i1:i2]), kind="qualifier")
            elif tag == "delete":
                found += self._added(list(self.a[i1:i2]))
            elif tag == "insert":
                found += self._junction(op)
        return found

    def _piece_at(self, i: int) -> int | None:
        """The source sentence claim token i is aligned with (None when it is aligned with none)."""
        j = self.claim_to_source.get(i)
        return None if j is None else self.piece_of[j]

    def _junction(self, op: tuple[str, int, int, int, int]) -> list[Difference]:
        """Where the claim passes from one sentence of an adjacent pair to the other while the
        sentence it leaves (or resumes) has words it skipped, the other sentence's words stand in
        their slot: "next to [Fengjia Night Market]" read from "Fengjia Night Market is a night
        market. The market is located next to [Feng Chia University]." is the second sentence with
        its name changed, not the two fused."""
        _, i1, _, j1, j2 = op
        if not 0 < i1 < len(self.a):
            return []
        before, after = self._piece_at(i1 - 1), self._piece_at(i1)
        if before is None or after is None or before == after:
            return []
        # Leaving sentence `before` with its rest skipped, or resuming `after` past a skipped head.
        for piece, forward in ((before, True), (after, False)):
            skipped = [j for j in range(j1, j2) if self.piece_of[j] == piece]
            if (
                not skipped
                or len(skipped) > SLOT_TOKENS
                or not any(self.b[j].content for j in skipped)
            ):
                continue
            other = after if forward else before
            run = range(i1, len(self.a)) if forward else range(i1 - 1, -1, -1)
            taken = list(itertools.takewhile(lambda i: self._piece_at(i) == other, run))[
                :SLOT_TOKENS
            ]
            if not taken:
                continue
            # Only a name for a name: numbers and other words of two sentences fused are read by
            # the rest of the claim's alignment.
            k1, k2 = min(taken), max(taken) + 1
            in_source, in_claim = self._unaligned_source(piece), self._unaligned_claim
            found = self._entity(
                [t for t in self.a[k1:k2] if t.content and t.norm not in in_source],
                [
                    self.b[j]
                    for j in skipped
                    if self.b[j].content and self.b[j].norm not in in_claim
                ],
            )
            if found:
                return found
        return []

    def _same_slot(self, i: int, j: int, op: tuple[str, int, int, int, int]) -> bool:
        """Whether claim token i and source token j, both inside a replaced stretch, stand in the
        same slot: as far (give or take one token) from an aligned word on the same side, and
        near it ("costs [$3]" and "costs [$86] and is valid ..."; not "was established in [1998]"
        and "is Canada's largest ... [451]")."""
        _, i1, i2, j1, j2 = op
        if (i1, j1) in self.equal_ends and abs((i - i1) - (j - j1)) <= 1 and i - i1 <= SLOT_REACH:
            return True
        return ((i2, j2) in self.equal_starts and abs((i2 - 1 - i) - (j2 - 1 - j)) <= 1
                and i2 - 1 - i <= SLOT_REACH)

    def _slot_pair(
        self, op: tuple[str, int, int, int, int], claim_test, source_test
    ) -> tuple[int, int] | None:
        """The first claim and source tokens of a replaced stretch that pass the tests and stand in
        the same slot."""
        _, i1, i2, j1, j2 = op
        for i in range(i1, i2):
            if claim_test(self.a[i]):
                for j in range(j1, j2):
                    if source_test(self.b[j]) and self._same_slot(i, j, op):
                        return i, j
        return None

    def _opposed(self, op: tuple[str, int, int, int, int]) -> list[Difference]:
        if max(op[2] - op[1], op[4] - op[3]) > SLOT_TOKENS and self._between_copied(op):
            # Between two copied stretches, a longer one on either side is another statement, not
            # one slot changed ("courts (excluding the Constitutional Court), forming ... that has
            # the Supreme Court" for "courts, which includes the Supreme Court").
            return []
        for pairs, kind, label in (
            (OPPOSITES, "opposite", CONTRADICTED),
            (SCALES, "scale", PARTIALLY_SUPPORTED),
        ):
            for i in range(op[1], op[2]):
                c = self.a[i]
                # Only the slot counts: "less and more gentile" for "more and more gentile" has
                # both words on both sides, one of them in the slot of the other.
                others = pairs.get(c.norm, frozenset())
                if not others:
                    continue
                pair = self._slot_pair(op, lambda t: t is c, lambda t: t.norm in others)
                if pair:
                    return [self._difference(kind, [c], [self.b[pair[1]]], label)]
        return []

    def _between_copied(self, op: tuple[str, int, int, int, int]) -> bool:
        """Whether the stretch lies between two aligned stretches that each hold a content word (a
        shared "a" or "the" anchors nothing)."""
        at = self.opcodes.index(op)
        if at == 0 or at == len(self.opcodes) - 1:
            return False
        before, after = self.opcodes[at - 1], self.opcodes[at + 1]
        return (before[0] == after[0] == "equal"
                and any(t.content for t in self.a[before[1]:before[2]])
                and any(t.content for t in self.a[after[1]:after[2]]))

    def _replaced(self, op: tuple[str, int, int, int, int]) -> list[Difference]:
        _, i1, i2, j1, j2 = op
        claim_part, source_part = list(self.a[i1:i2]), list(self.b[j1:j2])
        # A number or name of the claim that the sentence has elsewhere is a reordering ("in June
        # 2011, ... added ten objects" told as "added ten objects ... in June 2011"), not a change,
        # but only where the sentence has it once more, aligned with no other word of the claim:
        # "the Fox News elections, ... Fox News had" for "the United States elections, ... Fox News
        # had" puts a name the sentence has in a slot where it has another.
        in_source, in_claim = self._unaligned_source(), self._unaligned_claim
        for kind in ("number", "unit"):
            # Only a quantity of one sort fills another's slot: a count for a count, a year for a
            # year ("has six volumes" is not "(2004-2010)"), a month for a month.
            pair = self._slot_pair(op, lambda t: t.kind == kind and t.norm not in in_source,
                                   lambda t: t.kind == kind and t.norm not in in_claim)
            if pair and (_quantity_sort(self.claim, self.a[pair[0]])
                         == _quantity_sort(self.source, self.b[pair[1]])):
                return [self._difference(kind, [self.a[pair[0]]], [self.b[pair[1]]], CONTRADICTED)]
        claim_new = [t for t in claim_part if t.content and t.norm not in in_source]
        source_new = [t for t in source_part if t.content and t.norm not in in_claim]
        # A name is read in the slot's own sentence: one of the neighbouring sentence of a pair
        # never fills it ("popularized by [Eduard Bernstein]" for "by [Karl Kautsky]", whose
        # neighbour names Bernstein). Numbers and other words of two sentences fused are not.
        in_sentence = self._unaligned_source(self.piece_of[j1]) if j1 < len(self.b) else in_source
        entity = self._entity(
            [t for t in claim_part if t.content and t.norm not in in_sentence], source_new
        )
        if entity and len(claim_part) <= SLOT_TOKENS and len(source_part) <= SLOT_TOKENS and (
                (i1, j1) in self.equal_ends or (i2, j2) in self.equal_starts):
            return entity
        if (
            i2 == len(self.a)
            and (i1, j1) in self.equal_ends
            and len(source_part) > len(claim_part) + 1
        ):
            # The claim ends here, a clause of a longer sentence: a name it ends with stands in the
            # slot of the sentence's next words ("hydrocarbons (Vietnam)" for "hydrocarbons (PAHs)
            # are ..."), not of the whole rest of the sentence.
            entity = self._entity(
                claim_new, [t for t in source_part[: len(claim_part) + 1] if t in source_new]
            )
            if entity:
                return entity
        if not claim_new or not source_new:
            return self._added(claim_part) if claim_new else []
        if len(claim_part) > SLOT_TOKENS or len(source_part) > SLOT_TOKENS or not (
                (i1, j1) in self.equal_ends or (i2, j2) in self.equal_starts):
            return self._added(claim_part)  # a different statement, not one slot changed
        entity = self._entity(claim_new, source_new)
        if entity:
            return entity
        related = self._related(claim_new, source_new)
        if related is not None:
            return related
        return [
            self._difference("substitution", claim_part, source_part, PARTIALLY_SUPPORTED)]

    def _entity(self, claim_new: list[Token], source_new: list[Token]) -> list[Difference]:
        """One name put in the slot of another: every word that differs on both sides is a name
        ("Lisbon" for "Porto"; "Orange Line" for "Senior ID card" is a different statement)."""
        # A word is a name where its own text writes it as one somewhere: "Thailand" opening a
        # sentence that also says "the identity of Thailand" ("the war" after "the Hundred Years'
        # War" in the sentence before stays a word).
        claim_named = [t.kind == "name" or t.norm in self.claim_names for t in claim_new]
        source_named = [
            t.kind == "name" or (self.piece_of[self._index(t)], t.norm) in self.source_names
            for t in source_new
        ]
        if (
            claim_new
            and source_new
            and all(
                named or self.claim[t.span[0]].isupper() for t, named in zip(claim_new, claim_named)
            )
            and any(claim_named + source_named)
            and all(named or self._capitalized(t) for t, named in zip(source_new, source_named))
            and (not self._one_name(claim_new, source_new))
        ):
            return [self._difference("entity", claim_new, source_new, CONTRADICTED)]
        return []

    def _one_name(self, claim_new: list[Token], source_new: list[Token]) -> bool:
        """Whether the two sides name one thing: initials for the words they stand for ("TDSB" for
        "Toronto District School Board")."""
        return (_abbreviates(self.source, source_new, self.claim, claim_new)
                or _abbreviates(self.claim, claim_new, self.source, source_new))

    def _related(self, claim_new: list[Token], source_new: list[Token]) -> list[Difference] | None:
        """One word put in the slot of another that the lexicon relates (judges.lexicon): its
        antonym (an adjective's or adverb's: a verb's may be its converse) says the opposite, and
        another member of the same class says something else ("weekends" for "weekdays", "paris"
        for "london" in lowercased text, where no capital marks a name). A word in other forms or
        a synonym is the same word: a paraphrase, no difference at all."""
        if len(claim_new) != 1 or len(source_new) != 1:
            return None
        claim_word = self._cut(self.claim, claim_new[0].span).lower()
        source_word = self._cut(self.source, source_new[0].span).lower()
        try:
            if source_word in lexicon.antonyms(claim_word, adjectives_only=True) or (
                    claim_word in lexicon.antonyms(source_word, adjectives_only=True)):
                return [self._difference("opposite", claim_new, source_new, CONTRADICTED)]
            if lexicon.related(claim_word, source_word) in ("same", "synonym"):
                return []
            if lexicon.in_one_class(claim_word, source_word):
                return [self._difference("entity", claim_new, source_new, CONTRADICTED)]
        except lexicon.LexiconUnavailable:
            pass
        return None

    def _unaligned_source(self, piece: int | None = None) -> frozenset[str]:
        """The norms of the source tokens (of sentence `piece`, else of both) that no claim token is
        aligned with."""
        if piece not in self._unaligned:
            self._unaligned[piece] = frozenset(
                t.norm for j, t in enumerate(self.b)
                if (piece is None or self.piece_of[j] == piece) and j not in self.source_to_claim)
        return self._unaligned[piece]

    @cached_property
    def _unaligned_claim(self) -> frozenset[str]:
        """The norms of the claim tokens aligned with no source token."""
        return frozenset(t.norm for i, t in enumerate(self.a) if i not in self.claim_to_source)

    def _added(self, claim_part: list[Token], kind: str = "added") -> list[Difference]:
        """Words of the claim the sentence lacks; `kind` "qualifier" when they stand inside a
        stretch copied from the sentence ("is [temporarily] the capital")."""
        new = [t for t in claim_part if t.norm not in self.source_norms]
        numbers = [t for t in new if t.kind == "number"]
        if numbers:
            return [self._difference("added", numbers, [], UNSUPPORTED)]
        absolutes = [t for t in new if t.norm in ABSOLUTES]
        words = [t for t in new if t.content]
        if absolutes or words:
            return [self._difference(kind, absolutes or words, [], PARTIALLY_SUPPORTED)]
        return []

    def _index(self, token: Token) -> int:
        return next(j for j, t in enumerate(self.b) if t is token)

    def _capitalized(self, token: Token) -> bool:
        return self.source[token.span[0]].isupper()

    # --- numbers bound to units and nouns

    def _bindings(self) -> list[Difference]:
        """A number the source has with another unit ("23 lb" where the source says "23 kg"), or
        a counted noun the source has with another number ("5 buses" where it says "3 buses")."""
        claim_pairs = _number_pairs(self.a)
        source_pairs = _number_pairs(self.b)
        source_set = {(n.norm, u.norm) for n, u in source_pairs}
        for n, u in claim_pairs:
            if (n.norm, u.norm) in source_set:
                continue
            if u.kind == "unit":
                other = next(
                    (
                        (sn, su)
                        for sn, su in source_pairs
                        if sn.norm == n.norm and su.kind == "unit"
                    ),
                    None,
                )
                if other:
                    return [self._difference("unit", [n, u], list(other), CONTRADICTED)]
            other = next(
                ((sn, su) for sn, su in source_pairs if su.norm == u.norm and sn.norm != n.norm),
                None,
            )
            if other and any(sn.norm == n.norm for sn, _ in source_pairs):
                return [self._difference("number", [n, u], list(other), CONTRADICTED)]
        return []

    # --- roles exchanged

    def _swap(self) -> list[Difference]:
        """Roles exchanged: two stretches of words in the other order around the same words ("X in
        Y" for "Y in X"), or two content words in the other order around a content word both sides
        have between them ("Lakers beat Celtics" for "Celtics beat Lakers"), unless one side is
        passive."""
        return self._exchanged_around() or self._crossed_around_pivot()

    def _exchanged_around(self) -> list[Difference]:
        """The claim's "X P Y" where the source has "Y P X": one to ROLE_TOKENS tokens on either
        side of the same one to PIVOT_TOKENS tokens ("the Labour Corps recruited from the British
        Isles" for "the British Isles recruited from the Labour Corps"; "Buchenwald in Jehovah's
        Witnesses"). A passive says the same roles with other pivot words ("B was acquired by A"),
        so it never matches. Order means nothing across "and", "or", "with", "between" (lists,
        symmetric relations) nor across a bare copula ("X is Y", "Y is X" name one thing)."""
        claim, source = tuple(t.norm for t in self.a), tuple(t.norm for t in self.b)
        # X and Y cross, so the aligner cannot have kept both in place: a stretch worth reading
        # holds a claim token it left unaligned. The source's stretches are indexed once, and the
        # work is capped (SWAP_TRIES), so a long repetitive sentence costs no more than a short one.
        unaligned = [i for i in range(len(claim)) if i not in self.claim_to_source]
        reach = 2 * ROLE_TOKENS + PIVOT_TOKENS
        starts = sorted({i for u in unaligned for i in range(max(0, u - reach + 1), u + 1)})
        if not starts:
            return []
        at: dict[tuple[str, ...], list[int]] = {}
        for length in range(1, ROLE_TOKENS + 1):
            for j in range(len(source) - length + 1):
                found = at.setdefault(source[j:j + length], [])
                if len(found) < SWAP_OCCURRENCES:
                    found.append(j)
        said: dict[int, frozenset[tuple[str, ...]]] = {}
        tries = 0
        for i in starts:
            for lx in range(1, ROLE_TOKENS + 1):
                x = claim[i:i + lx]
                if len(x) < lx or not (self.a[i].content and self.a[i + lx - 1].content):
                    continue  # a stretch of words begins and ends with a content word
                # Where the source has X: it must end there, after "Y P".
                for q in at.get(x, ()):
                    for lp in range(1, PIVOT_TOKENS + 1):
                        tries += 1
                        if tries > SWAP_TRIES:
                            return []
                        pivot = claim[i + lx:i + lx + lp]
                        if (
                            len(pivot) < lp
                            or q - lp < 0
                            or source[q - lp : q] != pivot
                            or not self._orders(pivot)
                        ):
                            continue
                        for ly in range(1, ROLE_TOKENS + 1):
                            end = i + lx + lp + ly
                            y, start = claim[i + lx + lp:end], q - lp - ly
                            if len(y) < ly or start < 0 or source[start:q - lp] != y or y == x:
                                continue
                            if not (self.a[i + lx + lp].content and self.a[end - 1].content):
                                continue
                            if not any(i <= u < end for u in unaligned):
                                continue
                            length = end - i
                            if length not in said:
                                said[length] = frozenset(
                                    source[j : j + length] for j in range(len(source) - length + 1)
                                )
                            if claim[i:end] in said[length]:
                                continue  # the source says it this way too
                            claim_span = (self.a[i].span[0], self.a[end - 1].span[1])
                            source_span = (self.b[start].span[0], self.b[q + lx - 1].span[1])
                            if self._listed(claim_span, source_span, pivot):
                                continue
                            return [
                                Difference(
                                    "swap",
                                    claim_span,
                                    source_span,
                                    CONTRADICTED,
                                    self._cut(self.claim, claim_span),
                                    self._cut(self.source, source_span),
                                )
                            ]
        return []

    def _listed(self, claim_span: Span, source_span: Span, pivot: Sequence[str]) -> bool:
        """Whether the exchanged words are items of a list ("tea, coffee, juice"): a comma between
        them, unless a negation gives the order ("Paris, not London")."""
        return (
            "," in self._cut(self.claim, claim_span) or "," in self._cut(self.source, source_span)
        ) and not NEGATIONS & set(pivot)

    @staticmethod
    def _orders(pivot: Sequence[str]) -> bool:
        """Whether words around `pivot` have roles: not across "and"/"or"/"with"/"between", nor a
        bare copula."""
        return not (_UNORDERED & set(pivot)) and not set(pivot) <= _BE | _ARTICLES

    def _crossed_around_pivot(self) -> list[Difference]:
        """Two content words, each once on either side, in the other order around a content word
        both sides have between them, within SWAP_REACH tokens."""
        def unique_positions(found: Sequence[Token]) -> dict[str, int]:
            count: dict[str, int] = {}
            for t in found:
                count[t.norm] = count.get(t.norm, 0) + 1
            return {t.norm: k for k, t in enumerate(found) if t.content and count[t.norm] == 1}

        in_claim, in_source = unique_positions(self.a), unique_positions(self.b)
        shared = sorted((k, norm) for norm, k in in_claim.items() if norm in in_source)
        for x in range(len(shared)):
            for y in range(x + 1, len(shared)):
                (cx, nx), (cy, ny) = shared[x], shared[y]
                if cy - cx > SWAP_REACH:
                    break  # `shared` is in claim order: every later word is farther still
                sx, sy = in_source[nx], in_source[ny]
                if sy >= sx:
                    continue
                if sx - sy > SWAP_REACH:
                    continue  # clauses moved about, not two roles exchanged around one verb
                # A number or date between them ("bottom of League One in the 2013-14 season" for
                # "season 2013-14 bottom of League One") places the statement, it has no roles.
                pivots = [norm for k, norm in shared[x + 1:y]
                          if sy < in_source[norm] < sx and self.a[k].kind != "number"]
                claim_between, source_between = self.a[cx + 1:cy], self.b[sy + 1:sx]
                between = [t.norm for t in claim_between] + [t.norm for t in source_between]
                if (
                    not pivots
                    or self._passive(pivots[0], in_claim, in_source)
                    or not self._orders(between)
                ):
                    continue
                if _copula(claim_between) != _copula(source_between):
                    continue  # "X is a 2014 film" told as "a 2014 film titled X": one thing, named
                claim_span = (self.a[cx].span[0], self.a[cy].span[1])
                source_span = (self.b[sy].span[0], self.b[sx].span[1])
                if not self._listed(claim_span, source_span, between):
                    return [
                        Difference(
                            "swap",
                            claim_span,
                            source_span,
                            CONTRADICTED,
                            self._cut(self.claim, claim_span),
                            self._cut(self.source, source_span),
                        )
                    ]
        return []

    def _passive(self, pivot: str, in_claim: dict[str, int], in_source: dict[str, int]) -> bool:
        """Whether one side is passive ("was abolished", "beaten by") and the other not: the
        passive states the same roles in the other order."""
        def passive(found: Sequence[Token], k: int) -> bool:
            return any(t.norm == "by" for t in found[k + 1 : k + 3]) or (
                k > 0 and found[k - 1].norm in _BE
            )
        return passive(self.a, in_claim[pivot]) != passive(self.b, in_source[pivot])

    # --- helpers

    def _difference(
        self, kind: str, claim_part: Sequence[Token], source_part: Sequence[Token], label: str
    ) -> Difference:
        claim_span = (claim_part[0].span[0], claim_part[-1].span[1]) if claim_part else None
        source_span = (source_part[0].span[0], source_part[-1].span[1]) if source_part else None
        return Difference(kind, claim_span, source_span, label, self._cut(self.claim, claim_span),
                          self._cut(self.source, source_span))

    @staticmethod
    def _cut(text: str, span: Span | None) -> str:
        """The text of `span`, with a currency sign right before it and a "%" right after it."""
        if not span:
            return ""
        start, end = span
        if start and text[start - 1] in _CURRENCY:
            start -= 1
        if text[end:end + 1] == "%":
            end += 1
        return text[start:end]


def _number_pairs(found: Sequence[Token]) -> list[tuple[Token, Token]]:
    """Each number with what it counts: the unit or content word right after it, else a currency
    sign right before it."""
    pairs = []
    for k, t in enumerate(found):
        if t.kind != "number":
            continue
        after = found[k + 1] if k + 1 < len(found) else None
        before = found[k - 1] if k else None
        if after is not None and (
            after.kind == "unit" or (after.content and after.kind != "number")
        ):
            pairs.append((t, after))
        elif before is not None and before.kind == "unit":
            pairs.append((t, before))
    return pairs


_ANSWER_PARTICLES = frozenset({"yes", "no"})
_BE = frozenset("is are was were be been being".split())
_ARTICLES = frozenset({"the", "a", "an"})
# Words across which the order of two things means nothing ("A and B", "between A and B").
_UNORDERED = frozenset(
    {"and", "or", "nor", "with", "between", "vs", "versus", "both", "either", "neither"}
)




def _quantity_sort(text: str, token: Token) -> str:
    """What sort of quantity a number token is: "month", "year" (a whole number 1000-2199 written
    without separators, or a year range's short end) or "count" (any other number; a unit token is
    its own sort)."""
    if token.kind != "number":
        return token.kind
    if token.norm.startswith("month:"):
        return "month"
    year = token.norm.isdigit() and len(token.norm) == 4 and "1000" <= token.norm < "2200"
    return "year" if year and text[slice(*token.span)].isdigit() else "count"


_INITIALS_SKIP = frozenset({"of", "the", "and", "for", "de", "&"})
_CAPITAL_WORD = re.compile(r"[A-Z][\w'’-]*|of|the|and|for|de|&")


def _abbreviates(text: str, found: Sequence[Token], other: str,
                 other_found: Sequence[Token]) -> bool:
    """Whether one of `found` (in `text`) is written in capitals (two to eight letters) and spells
    the initials of a run of capitalized words of `other` that holds every token of
    `other_found`."""
    for token in found:
        written = text[slice(*token.span)]
        if not (2 <= len(written) <= 8 and written.isalpha() and written.isupper()):
            continue
        words = [m for m in _CAPITAL_WORD.finditer(other)]
        for start in range(len(words)):
            initials, end = "", start
            while end < len(words) and len(initials) < len(written):
                word = words[end].group()
                if word not in _INITIALS_SKIP:
                    initials += word[0]
                end += 1
            if initials != written or words[start].group() in _INITIALS_SKIP:
                continue
            run = (words[start].start(), words[end - 1].end())
            # consecutive words only: nothing but spaces between them
            gaps = (other[words[k].end():words[k + 1].start()] for k in range(start, end - 1))
            if any(gap.strip() for gap in gaps):
                continue
            if all(run[0] <= t.span[0] and t.span[1] <= run[1] for t in other_found):
                return True
    return False


def _copula(found: Sequence[Token]) -> bool:
    """Whether the tokens hold a form of "be" followed by an article: "X is a Y" names what X is."""
    return any(t.norm in _BE and k + 1 < len(found) and found[k + 1].norm in _ARTICLES
               for k, t in enumerate(found))


def _skip_answer_particle(text: str, found: tuple[Token, ...]) -> tuple[Token, ...]:
    """"No, children ride free" answers a question: its "No" negates nothing that follows (unlike
    the "No" of "No fees apply")."""
    if len(found) > 1 and found[0].norm in _ANSWER_PARTICLES:
        if text[found[0].span[1]:].lstrip()[:1] in (",", ".", "!", ";", ":", "-", "—"):
            return found[1:]
    return found


# --- does a quote say the claim? ---------------------------------------------------------------

# A quote said to support a claim must hold this share of the claim's content tokens: a judge that
# quotes the most similar sentence of a passage for an invented claim quotes words the claim lacks.
QUOTE_COVERAGE = 0.6


@dataclass(frozen=True)
class Shortfall:
    """Why no quote says the claim word for word: the label that evidence leaves the claim at (None
    when there is no evidence against it, only words the texts lack), the reviewer's reason, and
    the best share of the claim's content words one text holds."""

    label: str | None  # CONTRADICTED, PARTIALLY_SUPPORTED, or None: nothing says otherwise
    reason: str
    coverage: float = 0.0
    lacking: tuple[str, ...] = ()  # the claim's words (as written) the best text lacks


# A word added inside a stretch copied from the sentence ("is temporarily the capital") counts
# when the rest of the claim is (nearly) all the sentence's: then it is the one thing added.
QUALIFIER_COVERAGE = 0.9


def hedges(words: str) -> bool:
    """Whether added words only qualify what they stand in: adverbs ("temporarily", "partly",
    "mostly") or absolutes. An added noun or adjective ("the minimum voting age" for "the minimum
    age") usually names what the sentence already means. An adverb that only restates the time a
    verb's tense gives ("currently at the bottom" for "bottom side", "previously attempted" for
    "had attempted") qualifies nothing."""
    found = re.findall(r"[a-z]+", words.lower())
    return bool(found) and all(
        (word.endswith("ly") and word not in TENSE_ADVERBS) or word in ABSOLUTES for word in found)


TENSE_ADVERBS = frozenset({"currently", "presently", "previously"})


# Differences that are evidence against a claim whose every word the text has: a weaker or
# stronger word on one scale ("some" where the text says "all"); and a hedge or an absolute put
# into a sentence otherwise copied (`hedges`, QUALIFIER_COVERAGE).
_EVIDENT_KINDS = frozenset({"scale"})


def cased(text: str) -> bool:
    """Whether `text` writes capitals at all: lowercased text (as CNN/DailyMail ships it) marks no
    name by case, so its names are read by novelty against the passages (`moved_in`)."""
    return any(c.isupper() for c in text)


def moved_in(
    claim: str, alignment: Alignment, known: Callable[[str], bool], minimum: float
) -> Difference | None:
    """For text written without capitals (lowercased, as CNN/DailyMail ships it), where no capital
    marks a name: a slot of a sentence the claim otherwise copies (`minimum` of its other words),
    filled with words the passages have elsewhere (`known` stems) but this sentence does not ("...
    emerged in the middle east" where the sentence says "the united states" and another names the
    middle east): another thing the passages name, put in this slot, read by novelty against the
    passages, not by case. New wording (words no passage has) is a paraphrase."""
    for difference in alignment.differences:
        if difference.kind != "substitution" or difference.claim_span is None:
            continue
        slot = [t for t in tokens(claim[slice(*difference.claim_span)]) if t.content]
        if (slot and all(known(t.norm) and t.norm not in alignment.source_norms for t in slot)
                and alignment.coverage_besides(difference) >= minimum - 1e-9):
            return Difference("entity", difference.claim_span, difference.source_span, CONTRADICTED,
                              difference.claim_words, difference.source_words)
    return None


def new_in_slot(claim: str, alignment: Alignment, passages_have: Callable[[str], bool],
                minimum: float) -> Difference | None:
    """For text written without capitals, where no case marks a name: a slot of a sentence the
    claim otherwise copies (`minimum` of its other words), where the sentence has other content
    words and every content word the claim puts there is one that no passage has in any form
    (judges.novelty, against the passages' stems `passages_have`): "macaques at [london stock
    exchange]" for "macaques at [jigokudani monkey park]". The counterpart of `moved_in` (words
    the passages have elsewhere). In cased text a capital marks a name and this reads nothing: on
    the dev files' tune halves a new word in a slot there was the writer's own wording far more
    often than another thing ("address the media" for "speak", "CEO" for "chief executive")."""
    if cased(claim):
        return None
    for difference in alignment.differences:
        if (
            difference.kind != "substitution"
            or difference.claim_span is None
            or not difference.source_words
        ):
            continue
        start, end = difference.claim_span
        slot = [t for t in alignment.claim_tokens
                if t.content and start <= t.span[0] < end and t.norm not in alignment.source_norms]
        if (
            slot
            and all(is_new_word(claim[slice(*t.span)], t.norm, passages_have) for t in slot)
            and (
                (_names_in(claim, slot) or _all_names(difference.source_words))
                and alignment.coverage_besides(difference)
                >= max(minimum, QUALIFIER_COVERAGE) - 1e-9
            )
        ):
            return Difference("entity", difference.claim_span, difference.source_span, UNSUPPORTED,
                              difference.claim_words, difference.source_words)
    return None


def _names_in(text: str, found: Sequence[Token]) -> bool:
    """Whether one of the tokens reads as a name without capitals (judges.lexicon.name_like)."""
    try:
        return any(
            t.content and t.norm not in STOPWORDS and lexicon.name_like(text[slice(*t.span)])
            for t in found
        )
    except lexicon.LexiconUnavailable:
        return False


def _all_names(text: str) -> bool:
    """Whether every content word of `text` reads as a name without capitals (its slot held a
    name)."""
    found = [t for t in tokens(text) if t.content]
    try:
        return bool(found) and all(
            t.kind != "number" and lexicon.name_like(text[slice(*t.span)]) for t in found
        )
    except lexicon.LexiconUnavailable:
        return False


def evident_difference(alignment: Alignment, minimum: float, claim: str = "",
             known: Callable[[str], bool] | None = None,
             passages_have: Callable[[str], bool] | None = None) -> Difference | None:
    """A difference that is evidence against the claim though the text has most of its words: a
    scale word (_EVIDENT_KINDS) while the rest copies the text, a hedge put into a copied
    sentence, or, given the passages' `known` stems (a caseless answer), a slot `moved_in`; given
    `passages_have` (the passages' stems), a slot filled with a word no passage has (`new_in_slot`).
    """
    for difference in alignment.differences:
        besides = alignment.coverage_besides(difference)
        if (difference.kind in _EVIDENT_KINDS and besides >= minimum - 1e-9) or (
            difference.kind == "qualifier"
            and besides >= QUALIFIER_COVERAGE
            and hedges(difference.claim_words)
        ):
            return difference
    moved = moved_in(claim, alignment, known, minimum) if known is not None else None
    if moved is None and passages_have is not None:
        return new_in_slot(claim, alignment, passages_have, minimum)
    return moved


def quote_shortfall(
    claim: str,
    quotes: Sequence[tuple[str, str]],
    minimum: float = QUOTE_COVERAGE,
    *,
    quoted: bool = True,
    absence_is_evidence: bool = False,
    known: Callable[[str], bool] | None = None,
    passages_have: Callable[[str], bool] | None = None,
) -> Shortfall | None:
    """Why none of `quotes` (pairs of where, text: verified passage text said to support `claim`,
    "P1" naming its passage) says the claim, or None when one does: it covers `minimum` of the
    claim's content and disagrees with it on no number, name, negation or opposite.

    Only evidence gives the shortfall a label: a difference read by the aligner (CONTRADICTED only
    when the rest of the claim copies that text: a sentence about something else that happens to
    hold another number contradicts nothing; a weaker or stronger word on one scale), or texts that
    share none of the claim's words. Words the texts lack are no evidence that the claim is false
    (paraphrase and synthesis are what writers do): the label is None and the reason names them,
    unless `absence_is_evidence` (the request addresses the judge: every word must be there).
    `known`: the stems the passages have, for a caseless answer (`moved_in`).
    `quoted`: the texts are the judge's quotes; else the passage sentences closest to the claim,
    and the reason speaks of passage sentences, not of a quote."""
    if not any(t.content for t in tokens(claim)):
        return None
    best: tuple[Alignment, str] | None = None
    for where, quote in quotes:
        # A long quote is read sentence by sentence: words of another sentence say nothing here.
        alignment = align(claim, quote) if quote.strip() else None
        if alignment is None:
            continue
        if not alignment.contradictions and alignment.coverage >= minimum - 1e-9 and (
                evident_difference(alignment, minimum, claim, known, passages_have) is None):
            return None
        if best is None or alignment.coverage > best[0].coverage:
            best = (alignment, where)
    if best is None:
        if quoted and quotes:
            return Shortfall(
                PARTIALLY_SUPPORTED,
                f"the quote from {quotes[0][0]} shares none of the claim's words",
            )
        return Shortfall(PARTIALLY_SUPPORTED, "no passage sentence shares any of the claim's words")
    alignment, where = best
    coverage = alignment.coverage
    for difference in alignment.contradictions:
        if alignment.coverage_besides(difference) >= minimum - 1e-9:
            return Shortfall(CONTRADICTED, difference.explain(where).rstrip("."), coverage)
    evident = evident_difference(alignment, minimum, claim, known, passages_have)
    if evident is not None:
        label = CONTRADICTED if evident.label == CONTRADICTED else PARTIALLY_SUPPORTED
        return Shortfall(label, evident.explain(where).rstrip("."), coverage)
    lacking = tuple(alignment.uncovered(claim))
    if not lacking:  # every word is there, but a difference says otherwise
        label = PARTIALLY_SUPPORTED if absence_is_evidence else None
        return Shortfall(label, alignment.differences[0].explain(where).rstrip("."), coverage)
    said = f"the quote from {where} does not say " if quoted else "no passage sentence says "
    return Shortfall(PARTIALLY_SUPPORTED if absence_is_evidence else None,
                     said + ", ".join(f"'{w}'" for w in lacking[:4]), coverage, lacking)
