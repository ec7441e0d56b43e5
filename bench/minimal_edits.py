"""Minimal edits of true sentences: each edit changes one slot of a sentence copied from a passage
(a number, a year, a negation, a name, a unit, a quantifier or comparative, who does what to whom,
a qualifier), so the edited sentence is false or unsupported while sharing almost every word with
its source. A judge must flag every edit and keep the verbatim controls (the sentence copied
exactly, or with harmless framing) SUPPORTED.

An edit applies only where the sentence has the slot; `edit(kind, sentence, ...)` returns None
otherwise. Every edit is deterministic given its `random.Random`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

EDIT_KINDS: tuple[str, ...] = (
    "number",
    "year",
    "negation_added",
    "negation_dropped",
    "entity",
    "unit",
    "flip",
    "swap",
    "qualifier",
)
CONTROL_KINDS: tuple[str, ...] = ("verbatim", "framed")
KINDS: tuple[str, ...] = EDIT_KINDS + CONTROL_KINDS


@dataclass(frozen=True)
class Edit:
    kind: str
    source: str  # the sentence as the passage has it
    text: str  # the sentence as the answer has it
    before: str  # the slot in the source ("" for an insertion or a control)
    after: str  # what the answer has in its place


@dataclass(frozen=True)
class Context:
    """What an edit may borrow from: the names found in the same document and in the corpus."""

    document_names: Sequence[str] = ()
    corpus_names: Sequence[str] = ()
    passage_text: str = ""


def _replace(kind: str, sentence: str, match: re.Match[str] | tuple[int, int], new: str) -> Edit:
    start, end = match if isinstance(match, tuple) else match.span()
    return Edit(kind, sentence, sentence[:start] + new + sentence[end:], sentence[start:end], new)


def _pick(rng: random.Random, items: Sequence):
    return items[rng.randrange(len(items))] if items else None


def _case_like(model: str, word: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# --- numbers and years ---------------------------------------------------------------------------

YEAR = re.compile(r"(?<![\d.,$€£])\b(1[5-9]\d\d|20\d\d)\b(?![\d.,]\d)")
NUMBER = re.compile(
    r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.,]*\d)(?!st\b|nd\b|rd\b|th\b|s\b)"
)


def _changed_number(written: str, rng: random.Random, avoid: str) -> str | None:
    digits = written.replace(",", "")
    whole, _, fraction = digits.partition(".")
    for _ in range(8):
        if fraction:
            nudged = (int(fraction) + rng.randint(1, 8)) % 10 ** len(fraction)
            new = f"{whole}.{nudged:0{len(fraction)}d}"
        else:
            value = int(whole)
            new = str(
                value + max(1, round(value * rng.choice((0.2, 0.3, 0.5)))) * rng.choice((1, -1))
            )
            if new.startswith("-") or new == "0":
                new = str(value + rng.randint(1, 9))
        if "," in written:
            head, _, tail = new.partition(".")
            new = f"{int(head):,}" + (f".{tail}" if tail else "")
        if new != written and not re.search(rf"(?<![\d.,]){re.escape(new)}(?![\d,]*\d)", avoid):
            return new
    return None


def edit_number(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    spans = [m for m in NUMBER.finditer(sentence) if not YEAR.fullmatch(m.group())]
    match = _pick(rng, spans)
    if match is None:
        return None
    new = _changed_number(match.group(), rng, context.passage_text)
    return _replace("number", sentence, match, new) if new else None


def edit_year(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    match = _pick(rng, list(YEAR.finditer(sentence)))
    if match is None:
        return None
    year = int(match.group())
    choices = [year + d for d in (-3, -2, -1, 1, 2, 3) if str(year + d) not in context.passage_text]
    new = _pick(rng, choices or [year + 1])
    return _replace("year", sentence, match, str(new))


# --- negation ----------------------------------------------------------------------------------

# An auxiliary followed by a word that is not already a negation: where "not" goes in English.
AUXILIARY = re.compile(
    r"\b(is|are|was|were|will|would|should|could|must|may|might|does|did|has been|have been|had"
    r" been)"
    r" (?!not\b|never\b|no\b|n't)(?=[a-z])",
)
NEGATION = re.compile(
    r"\b(?:(?P<aux>is|are|was|were|will|would|should|could|must|may|might|does|did|do|has|have|had)"
    r" not|(?P<cannot>[Cc]annot)|(?P<contracted>is|are|was|were|does|did|do|has|have|had|could|"
    r"should|would)n't"
    r"|(?P<wont>[Ww]on't)|(?P<cant>[Cc]an't))\b",
)


def edit_negation_added(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    match = _pick(rng, list(AUXILIARY.finditer(sentence)))
    if match is None:
        return None
    aux = match.group(1)
    head, _, rest = aux.partition(" ")
    negated = f"{head} not {rest} " if rest else f"{head} not "
    return _replace("negation_added", sentence, match, negated)


def edit_negation_dropped(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    match = _pick(rng, list(NEGATION.finditer(sentence)))
    if match is None:
        return None
    groups = match.groupdict()
    if groups["aux"] or groups["contracted"]:
        new = groups["aux"] or groups["contracted"]
    elif groups["cannot"] or groups["cant"]:
        new = _case_like(match.group(), "can")
    else:
        new = _case_like(match.group(), "will")
    return _replace("negation_dropped", sentence, match, new)


# --- names ----------------------------------------------------------------------------------------

_NOT_NAMES = frozenset(
    "The A An In On At It Its He She His Her They Their Them This That These Those There Then When"
    " While After Before During For From By As With Without Of And Or But If To I We You Our Your"
    " Some Many Most All Each Every No Not One Two Three However Also Although Because Since"
    " Although Yes According January February March April May June July August September October"
    " November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)
NAME = re.compile(r"\b[A-Z][a-zA-Z'’\-]+(?: [A-Z][a-zA-Z'’\-]+)*")


def names(text: str, known: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """Spans of capitalised word runs that look like names: function words and months are not
    names, and a sentence's first word alone counts only when `known` names it (it is written
    with a capital elsewhere in the document)."""
    spans = []
    for match in NAME.finditer(text):
        start, end = match.span()
        words = match.group().split(" ")
        while words and words[0] in _NOT_NAMES:
            start += len(words.pop(0)) + 1
        if not words:
            continue
        before = text[:start].rstrip()
        sentence_start = not before or before[-1] in ".!?:\"“"
        if sentence_start and len(words) == 1 and words[0] not in known:
            continue
        spans.append((start, end))
    return spans


def name_pool(text: str) -> list[str]:
    return sorted({text[start:end] for start, end in names(text)})


def _replacement_name(
    current: str, sentence: str, context: Context, rng: random.Random
) -> str | None:
    words = len(current.split(" "))
    for pool in (context.document_names, context.corpus_names):
        options = [
            name
            for name in pool
            if len(name.split(" ")) == words
            and name.lower() not in sentence.lower()
            and current.lower() not in name.lower()
            and not set(name.split(" ")) & set(current.split(" "))
        ]
        if options:
            return _pick(rng, sorted(options))
    return None


def edit_entity(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    spans = names(sentence, frozenset(context.document_names))
    for _ in range(len(spans)):
        span = _pick(rng, spans)
        new = _replacement_name(sentence[span[0]:span[1]], sentence, context, rng)
        if new:
            return _replace("entity", sentence, span, new)
        spans = [s for s in spans if s != span]
    return None


# Words inside a longer name ("Union of South Africa") and words after which order means nothing.
_NAME_JOINERS = frozenset({"of", "the", "de", "la", "von", "van", "du", "del", "da", "and"})
_UNORDERED = frozenset({"and", "or", "nor", "between", "vs", "versus", "with"})


def edit_swap(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    """Two names exchanged across a short verb phrase ("A defeated B" -> "B defeated A"); never
    across "and", "or", "with" or "between", where the order means nothing, nor across anything but
    lowercase words."""
    spans = names(sentence, frozenset(context.document_names))
    pairs = []
    for (a_start, a_end), (b_start, b_end) in zip(spans, spans[1:]):
        middle = sentence[a_end:b_start]
        words = middle.split()
        if not 1 <= len(words) <= 4 or not all(w.isalpha() and w.islower() for w in words):
            continue
        if not set(words) - _NAME_JOINERS or _UNORDERED & set(words):
            continue
        if sentence[a_start:a_end].lower() == sentence[b_start:b_end].lower():
            continue
        pairs.append((a_start, a_end, b_start, b_end))
    chosen = _pick(rng, pairs)
    if chosen is None:
        return None
    a_start, a_end, b_start, b_end = chosen
    first, second = sentence[a_start:a_end], sentence[b_start:b_end]
    text = sentence[:a_start] + second + sentence[a_end:b_start] + first + sentence[b_end:]
    return Edit("swap", sentence, text, sentence[a_start:b_end], text[a_start:b_end])


# --- units, flips and qualifiers
# -------------------------------------------------------------------

# Each pair is swapped both ways; only after a number, where the word is a unit.
UNIT_PAIRS: tuple[tuple[str, str], ...] = (
    ("kg", "lb"),
    ("kilograms", "pounds"),
    ("km", "miles"),
    ("kilometres", "miles"),
    ("kilometers", "miles"),
    ("metres", "feet"),
    ("meters", "feet"),
    ("m", "ft"),
    ("cm", "inches"),
    ("centimetres", "inches"),
    ("litres", "gallons"),
    ("liters", "gallons"),
    ("%", " percentage points"),
    ("percent", "percentage points"),
    ("dollars", "euros"),
    ("minutes", "hours"),
    ("seconds", "minutes"),
    ("days", "weeks"),
    ("months", "years"),
    ("hours", "days"),
    ("weeks", "months"),
    ("tons", "kilograms"),
    ("tonnes", "kilograms"),
    ("mph", "km/h"),
    ("million", "billion"),
    ("acres", "hectares"),
    ("square miles", "square kilometres"),
)
_UNITS = {a: b for a, b in UNIT_PAIRS} | {
    b.strip(): a for a, b in UNIT_PAIRS if b.strip() not in dict(UNIT_PAIRS)
}
UNIT = re.compile(
    r"(?<=\d)(?: ?)("
    + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
    + r")(?![\w])"
)
CURRENCY = re.compile(r"[$€£](?= ?\d)")
_CURRENCIES = {"$": "€", "€": "$", "£": "$"}


def edit_unit(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    slots = [(m, _UNITS[m.group(1)]) for m in UNIT.finditer(sentence)]
    slots += [(m, _CURRENCIES[m.group()]) for m in CURRENCY.finditer(sentence)]
    chosen = _pick(rng, slots)
    if chosen is None:
        return None
    match, new = chosen
    if match.re is UNIT:
        start, end = match.span(1)
        new = new.strip() if sentence[start - 1:start] == " " or not new.startswith(" ") else new
        return _replace("unit", sentence, (start, end), new)
    return _replace("unit", sentence, match, new)


FLIPS: tuple[tuple[str, str], ...] = (
    ("all", "some"),
    ("always", "never"),
    ("never", "always"),
    ("more", "less"),
    ("less", "more"),
    ("fewer", "more"),
    ("higher", "lower"),
    ("lower", "higher"),
    ("larger", "smaller"),
    ("smaller", "larger"),
    ("greater", "smaller"),
    ("before", "after"),
    ("after", "before"),
    ("must", "may"),
    ("can", "cannot"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("decreased", "increased"),
    ("most", "least"),
    ("largest", "smallest"),
    ("smallest", "largest"),
    ("highest", "lowest"),
    ("lowest", "highest"),
    ("first", "last"),
    ("last", "first"),
    ("earlier", "later"),
    ("later", "earlier"),
    ("above", "below"),
    ("below", "above"),
    ("maximum", "minimum"),
    ("minimum", "maximum"),
    ("older", "younger"),
    ("younger", "older"),
    ("oldest", "youngest"),
    ("longest", "shortest"),
    ("best", "worst"),
    ("won", "lost"),
    ("majority", "minority"),
    ("north", "south"),
    ("south", "north"),
    ("east", "west"),
    ("west", "east"),
    ("rose", "fell"),
    ("many", "few"),
    ("often", "rarely"),
    ("required", "optional"),
    ("allowed", "forbidden"),
    ("include", "exclude"),
    ("includes", "excludes"),
)
_FLIPS = dict(FLIPS)
FLIP = re.compile(
    r"\b(" + "|".join(sorted(_FLIPS, key=len, reverse=True)) + r")\b(?!['’]t| not)", re.IGNORECASE
)


def edit_flip(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    match = _pick(
        rng, [m for m in FLIP.finditer(sentence) if not m.group().isupper() or len(m.group()) == 1]
    )
    if match is None:
        return None
    return _replace(
        "flip", sentence, match, _case_like(match.group(), _FLIPS[match.group().lower()])
    )


# Adverbs that narrow or hedge a statement the source makes plainly.
QUALIFIERS: tuple[str, ...] = (
    "only",
    "temporarily",
    "rarely",
    "partly",
    "allegedly",
    "unofficially",
    "briefly",
)
QUALIFIABLE = re.compile(
    r"\b(is|are|was|were|has been|have been|had been|will be|can be) (?=[a-z])"
)


def edit_qualifier(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    match = _pick(rng, list(QUALIFIABLE.finditer(sentence)))
    if match is None:
        return None
    lowered = sentence.lower()
    qualifier = _pick(rng, [q for q in QUALIFIERS if not re.search(rf"\b{q}\b", lowered)])
    return _replace("qualifier", sentence, match, f"{match.group(1)} {qualifier} ")


# --- controls
# --------------------------------------------------------------------------------------

FRAMINGS: tuple[str, ...] = (
    "According to the passage, {}",
    "The source states that {}",
    "As the text explains, {}",
)
_LOWER_FIRST = frozenset(
    "The A An In On At It Its This These Those There They He She His Her Their During After Before"
    " For By As When While Some Many Most All Each".split()
)


def edit_verbatim(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    return Edit("verbatim", sentence, sentence, "", "")


def edit_framed(sentence: str, rng: random.Random, context: Context) -> Edit | None:
    first = sentence.split(" ", 1)[0]
    common = first in _LOWER_FIRST or re.search(
        rf"\b{re.escape(first.lower())}\b", context.passage_text
    )
    body = sentence[0].lower() + sentence[1:] if common else sentence
    frame = _pick(rng, FRAMINGS)
    return Edit("framed", sentence, frame.format(body), "", frame.split("{}")[0])


EDITORS: dict[str, Callable[[str, random.Random, Context], Edit | None]] = {
    "number": edit_number,
    "year": edit_year,
    "negation_added": edit_negation_added,
    "negation_dropped": edit_negation_dropped,
    "entity": edit_entity,
    "unit": edit_unit,
    "flip": edit_flip,
    "swap": edit_swap,
    "qualifier": edit_qualifier,
    "verbatim": edit_verbatim,
    "framed": edit_framed,
}


def edit(kind: str, sentence: str, rng: random.Random, context: Context = Context()) -> Edit | None:
    """The sentence with one slot of `kind` changed, or None when it has no such slot."""
    return EDITORS[kind](sentence, rng, context)


# --- text styles
# -----------------------------------------------------------------------------------

STYLES: tuple[str, ...] = ("plain", "tokenized")

# CNN/DailyMail as it ships (See et al. 2017, the PTB tokenizer of Stanford CoreNLP, lowercased):
# "could n't", "do n't", " 's", "-lrb-" / "-rrb-" for parentheses, spaces around punctuation,
# `` and '' for double quotes. Numbers keep their commas and points ("181,674,817", "3.5").
_PTB_CONTRACTION = re.compile(r"(?i)\b(\w+?)(n['’]t)\b")
_PTB_CLITIC = re.compile(r"(?i)(?<=\w)(['’](?:s|re|ve|ll|d|m))\b")
_PTB_PUNCT = re.compile(r"(?<!\d)([,:;])|([,:;])(?!\d)|([!?\[\]{}])|(\.\.\.)")
# A sentence's final period: before the line's end or a capital, not after an initialism ("U.S.").
_PTB_PERIOD = re.compile(r"(?<![.\s][A-Za-z])(?<=[\w)\]\"'])\.(?=\s*$|\s+[A-Z\"'`(])")


def tokenized(text: str) -> str:
    """`text` lowercased and PTB-tokenized the way CNN/DailyMail ships its articles. Deterministic;
    whitespace runs become one space (a newline stays a newline)."""
    lines = []
    for line in text.split("\n"):
        line = line.replace("“", '"').replace("”", '"').replace("’", "'").replace("‘", "'")
        line = re.sub(r'(^|(?<=[\s(\[{]))"', " `` ", line)
        line = line.replace('"', " '' ")
        line = line.replace("(", " -lrb- ").replace(")", " -rrb- ")
        line = re.sub(r"\$(?=\s*\d)", "$ ", line)
        line = _PTB_CONTRACTION.sub(
            lambda m: {"can": "ca", "won": "wo"}.get(m.group(1).lower(), m.group(1))
            + " "
            + m.group(2),
            line,
        )
        line = _PTB_CLITIC.sub(r" \1", line)
        line = _PTB_PUNCT.sub(lambda m: f" {m.group()} ", line)
        line = _PTB_PERIOD.sub(" .", line)
        line = re.sub(r"(?<=\w)%", " %", line)
        lines.append(" ".join(line.lower().split()))
    return "\n".join(lines)
