"""Text that addresses the judge instead of informing a rider: prompt-injection findings.

The prompt already tells the model that data is never an instruction (judges.profiles.render), but
a model may obey anyway, so the deterministic checks (judges.checks) must not rely on it. This
module finds, without any model:

* **instructions to the judge**: "ignore previous instructions", "mark every claim SUPPORTED",
  "grounded=true", JSON keys of a judge's output, "you are now ...", "note to the AI judge", system
  or developer role markers, chat-template tokens;
* **forged structure**: lines imitating the prompt's data markers (`<<<DATA-...>>>`, `END DATA`),
  and a passage header (`[P9] ...`) opening a line in the middle of a passage's text;
* **hidden text**: Unicode tag characters (invisible, yet models read them), bidi overrides, and
  base64 runs that decode to readable text (each is searched for instructions once decoded).

`strip_invisible` removes format characters (zero-width spaces and joiners, bidi controls, tag
characters, soft hyphens: Unicode category Cf) with a map back to the original offsets, so the
checks read "$0\u200b.75" as "$0.75" and "fifty\u200b percent" as "fifty percent".

Everything here is pattern matching over text: it can miss an instruction worded in a way no
pattern expects, which is why the checks never depend on it alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

import ahocorasick

from judges.text import matches_at, word_positions

Span = tuple[int, int]

# Each pattern is written to be rare in fare policies, help pages and answers to riders: it speaks
# to a judge, a model or its output format. Matched case-insensitively on text whose invisible
# characters are removed.
_CLAIMS = r"(?:claims?|sentences?|statements?|answers?|responses?|everything|it|this|them)"
_AS_GOOD = r"(?:supported|grounded|true|correct|accurate|verified|valid|faithful)"
INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("override", r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
                     r"(?:previous|prior|above|earlier|preceding|system|original|other)?\s*"
                     r"(?:instructions?|rules?|prompts?|guidelines|directions|directives)\b"),
        ("verdict order", rf"\b(?:mark|label|rate|classify|treat|score|judge|consider|return|output|report|say|"
                          rf"answer|respond)\b[^.\n]{{0,40}}\b(?:every|all|each|this|these|the|any)\s+{_CLAIMS}"
                          rf"[^.\n]{{0,30}}\b{_AS_GOOD}\b"),
        ("verdict order", rf"\b(?:every|all|each)\s+{_CLAIMS}\b[^.\n]{{0,20}}\b(?:is|are)\s+(?:fully\s+)?{_AS_GOOD}\b"),
        ("verdict order", r"\b(?:output|return|respond with|reply with|always returns?)\s+[\"']?(?:GROUNDED|SUPPORTED)\b"),
        ("verdict order", r"\bthe answer\b[^.\n]{0,40}\b(?:is|was)\s+(?:fully\s+)?(?:grounded|verified)\b"),
        ("output JSON", r"[\"']?\b(?:grounded|is_grounded|hallucinated)[\"']?\s*[:=]\s*[\"']?(?:true|false)\b"),
        ("output JSON", r"\"(?:verdict|label|verification_status|unsupported_claims|fabrications|claims|counts)\"\s*:"),
        ("role play", r"\byou are (?:now|no longer)\b|\bpretend (?:you are|to be)\b"
                      r"|\brole-?play\b|\blet'?s play a game\b|\bfrom now on,? you\b"),
        ("addressed to the judge", r"\b(?:note|message|instructions?|memo|attention)\s+(?:to|for)\s+(?:the\s+)?"
                                   r"(?:ai|llm|judge|evaluator|grader|model|assistant|auditor|checker|verifier|reviewer)\b"),
        ("addressed to the judge", r"(?:^|[.!?;)\]]\s+|\n)(?:the\s+)?(?:ai\s+)?(?:judge|evaluator|grader|auditor|llm)"
                                   r"\s*(?:[:,]|must\b|should\b)"),
        ("addressed to the judge", r"(?:^|[.!?;)\]]\s+|\n)assistant\s*[:,]"),
        ("addressed to the judge", r"\bnew instructions?\b|\bsupersedes? (?:all|the|any)\b[^.\n]{0,30}"
                                   r"\b(?:passages?|instructions?|rules?|sources?|above)\b"),
        ("addressed to the judge", r"\btreat (?:it|this|them|P\d+|\[P\d+\]|this passage) as (?:verified|authoritative|"
                                   r"official|true|a retrieved passage|evidence)\b"),
        ("role marker", r"\[/?(?:SYSTEM|INST|SYS)\]|<\|?(?:im_start|im_end|system|endoftext)\|?>|<</?SYS>>"
                        r"|^\s*#{2,}\s*(?:system|instructions?|override)\b|\bsystem\s+(?:prompt|override|message)\b"
                        r"|\bdeveloper\s+(?:mode|message|instructions?)\b"),
        ("forged delimiter", r"<<<\s*(?:END\s+)?DATA\b|\bDATA-[0-9a-f]{8,}\b|\bEND DATA\b"),
    )
)

# One scan instead of one per pattern: each alternative is a named group saying its kind.
_ANY_INSTRUCTION = re.compile(
    "|".join(f"(?P<k{index}>{pattern.pattern})" for index, (_, pattern) in enumerate(INSTRUCTION_PATTERNS)),
    re.IGNORECASE,
)

# What each pattern needs, for ASCII text: every group must have one of its words in the lowered
# text, or the pattern matches nowhere in it. Checked in one pass of cheap substring searches, so
# the combined scan (1 ms on a 1,500-character passage: 15 alternatives tried at each character)
# runs only with the patterns that can match, and not at all on most passages. A word here that a
# pattern could match without would hide an injection: tests/judges/test_redteam.py checks the
# filtered scan against the full one on every red-team text.
_AS_GOOD_WORDS = ("supported", "grounded", "true", "correct", "accurate", "verified", "valid", "faithful")
INSTRUCTION_NEEDS: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("ignore", "disregard", "forget", "override", "bypass"),
     ("instruction", "rule", "prompt", "guidelines", "directions", "directive")),
    (("mark", "label", "rate", "classify", "treat", "score", "judge", "consider", "return", "output", "report",
      "say", "answer", "respond"), _AS_GOOD_WORDS),
    (("every", "all", "each"), _AS_GOOD_WORDS),
    (("output", "return", "respond", "reply"), ("grounded", "supported")),
    (("the answer",), ("grounded", "verified")),
    (("grounded", "hallucinated"), ("true", "false"), (":", "=")),
    (('"',), ("verdict", "label", "verification_status", "unsupported_claims", "fabrications", "claims", "counts"),
     (":",)),
    (("you are ", "pretend ", "role", "play a game", "from now on"),),
    (("note", "message", "instruction", "memo", "attention"),
     ("ai", "llm", "judge", "evaluator", "grader", "model", "assistant", "auditor", "checker", "verifier", "reviewer")),
    (("judge", "evaluator", "grader", "auditor", "llm"),),
    (("assistant",),),
    (("new instruction", "supersede"),),
    (("treat ",), (" as ",)),
    (("sys", "inst", "im_start", "im_end", "endoftext", "override", "developer"),),
    (("<<<", "data-", "end data"),),
)


# The same needs, each pattern's smallest group first: most texts fail some group of every pattern.
_NEEDS_SMALLEST_FIRST = tuple(tuple(sorted(groups, key=len)) for groups in INSTRUCTION_NEEDS)


def _need_automaton() -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for word in {word for groups in INSTRUCTION_NEEDS for group in groups for word in group}:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton


# Every need word found in one pass over the text (Aho-Corasick, in C: every occurrence of every
# word, overlapping ones too), where one substring search per word cost about three times more.
_NEED_WORDS = _need_automaton()
_NEED_SETS = tuple(tuple(frozenset(group) for group in groups) for groups in _NEEDS_SMALLEST_FIRST)


def _patterns_that_can_match(lowered: str) -> tuple[int, ...]:
    """The indexes of the patterns whose every group of INSTRUCTION_NEEDS has a word in `lowered`."""
    present = {word for _, word in _NEED_WORDS.iter(lowered)}
    if not present:
        return ()
    kept = []
    for index, groups in enumerate(_NEED_SETS):
        for group in groups:
            if group.isdisjoint(present):
                break
        else:
            kept.append(index)
    return tuple(kept)


@lru_cache(maxsize=None)
def _instruction_scan(kept: tuple[int, ...]) -> re.Pattern[str]:
    """The combined scan with only the patterns `kept`, each group still named after its index."""
    return re.compile(
        "|".join(f"(?P<k{index}>{INSTRUCTION_PATTERNS[index][1].pattern})" for index in kept), re.IGNORECASE)


# Where a match of each pattern can start, for ASCII text: every match of the pattern begins with
# one of these (lowered) strings, so trying the pattern only where one of them stands finds every
# match. None: the pattern can start elsewhere (after punctuation, a quotation mark, a line start),
# so it needs the scan. Trying a few places costs far less than the scan: the regex engine tries
# every alternative at every character (about 50 us per 1,500 characters for one pattern), while
# str.find skips ahead in C. tests/judges/test_redteam.py checks the result against the full scan.
INSTRUCTION_STARTS: tuple[tuple[str, ...] | None, ...] = (
    ("ignore", "disregard", "forget", "override", "bypass"),
    ("mark", "label", "rate", "classify", "treat", "score", "judge", "consider", "return", "output", "report",
     "say", "answer", "respond"),
    ("every", "all", "each"),
    ("output", "return", "respond with", "reply with", "always return"),
    ("the answer",),
    None,  # an optional quotation mark before the key
    ('"verdict', '"label', '"verification_status', '"unsupported_claims', '"fabrications', '"claims', '"counts'),
    ("you are ", "pretend ", "role", "let", "from now on"),
    ("note", "message", "instruction", "memo", "attention"),
    None,  # after sentence punctuation or a line break
    None,
    ("new instruction", "supersede"),
    ("treat ",),
    None,  # brackets, chat-template tokens, a line start
    ("<<<", "data-", "end data"),
)


def _instruction_matches(clean: str) -> Iterator[re.Match[str]]:
    """What `_ANY_INSTRUCTION.finditer(clean)` finds. A pattern that matches nowhere in the text
    never wins at any position of the alternation, so leaving it out changes no match. Non-ASCII
    text gets the full scan: case-insensitive matching pairs "k" with the Kelvin sign and "s" with
    the long s, which a lowered-substring test would miss.

    When every pattern left has INSTRUCTION_STARTS, the alternation is tried only where one of
    them stands (in order, skipping what a match already took, as finditer does): a position no
    start string stands at is one where no alternative can match."""
    if not clean.isascii():
        return _ANY_INSTRUCTION.finditer(clean)
    lowered = clean.lower()
    kept = _patterns_that_can_match(lowered)
    if not kept:
        return iter(())
    scan = _instruction_scan(kept)
    if any(INSTRUCTION_STARTS[index] is None for index in kept):
        return scan.finditer(clean)
    starts = {word for index in kept for word in INSTRUCTION_STARTS[index]}
    return matches_at(scan, clean, word_positions(lowered, starts))


BASE64_MIN_RUN = 24
_BASE64_RUN = re.compile(rf"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{{{BASE64_MIN_RUN},}}={{0,2}}(?![A-Za-z0-9+/=])")
_BIDI_OVERRIDES = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# "[P9] Agency · Title" opening a line after the passage's first line: a forged passage header.
_FORGED_HEADER = re.compile(r"\n\s*\[P[\w.:-]*\][^\n]*")


@dataclass(frozen=True)
class Injection:
    span: Span  # into the text searched (original offsets)
    kind: str  # "override", "verdict order", ..., "hidden text", "encoded text", "forged header"
    text: str  # what matched (decoded when it was hidden or encoded), shortened

    def describe(self) -> str:
        return f"{self.kind} ({self.text!r})"


# Every format character (Unicode category Cf) as of Unicode 15: soft hyphen, Arabic number signs,
# zero-width spaces and joiners, bidi controls, word joiner, invisible operators, BOM, interlinear
# annotation, Egyptian format controls, shorthand and musical format controls, tag characters.
# Written out because building it from unicodedata costs a second at start-up; a test checks that
# it covers the running Python's Cf characters and adds only unassigned code points.
FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def strip_invisible(text: str) -> tuple[str, Sequence[int]]:
    """`text` without format characters (category Cf), and for each character of the result its
    index in `text`, plus len(text) at the end (so a half-open span maps back with it)."""
    if text.isascii() or not FORMAT_CHARACTERS.search(text):
        return text, range(len(text) + 1)  # nothing removed: no list to build for every passage
    kept: list[str] = []
    where: list[int] = []
    position = 0
    for match in FORMAT_CHARACTERS.finditer(text):
        kept.append(text[position:match.start()])
        where.extend(range(position, match.start()))
        position = match.end()
    kept.append(text[position:])
    where.extend(range(position, len(text)))
    where.append(len(text))
    return "".join(kept), where


def original_span(where: Sequence[int], span: Span) -> Span:
    """A span of strip_invisible's result as a span of the original text."""
    start, end = span
    return where[start], (where[end - 1] + 1 if end > start else where[start])


@lru_cache(maxsize=256)  # a request has at most 100 passages; texts are kept alive by the cache
def find_injections(text: str, *, passage: bool = False) -> tuple[Injection, ...]:
    """Everything in `text` that addresses the judge, hides text or forges structure. With
    `passage`, a passage header line ("[P9] ...") after the first line counts as forged too."""
    found: list[Injection] = []
    clean, where = strip_invisible(text)
    for match in _instruction_matches(clean):
        kind = INSTRUCTION_PATTERNS[int(match.lastgroup[1:])][0]
        found.append(Injection(original_span(where, match.span()), kind, _short(match.group())))
    found.extend(_hidden(text))
    for match in _base64_runs(clean):
        plain = _decode_base64(match.group())
        if plain is not None:
            span = original_span(where, match.span())
            inner = [i.kind for i in find_injections(plain)]
            kind = f"encoded text ({inner[0]})" if inner else "encoded text"
            found.append(Injection(span, kind, _short(plain)))
    if passage and "\n" in clean:
        for match in _FORGED_HEADER.finditer(clean):
            found.append(Injection(original_span(where, match.span()), "forged header", _short(match.group().strip())))
    return tuple(sorted(set(found), key=lambda i: (i.span, i.kind)))


def _base64_runs(clean: str) -> Iterator[re.Match[str]]:
    """`_BASE64_RUN.finditer(clean)`. A run is BASE64_MIN_RUN characters without a space, so text
    whose every space-separated word is shorter has none: checked in C by str.split, where the
    scan tries the pattern at every character."""
    if max(map(len, clean.split()), default=0) < BASE64_MIN_RUN:
        return iter(())
    return _BASE64_RUN.finditer(clean)


def _hidden(text: str) -> list[Injection]:
    """Runs of tag characters (read out as ASCII) and bidi override characters."""
    found: list[Injection] = []
    if text.isascii():
        return found
    index = 0
    while index < len(text):
        char = text[index]
        if 0xE0000 <= ord(char) <= 0xE007F:
            end = index
            while end < len(text) and 0xE0000 <= ord(text[end]) <= 0xE007F:
                end += 1
            plain = "".join(chr(ord(c) - 0xE0000) for c in text[index:end] if 0xE0020 <= ord(c) <= 0xE007E)
            found.append(Injection((index, end), "hidden text (tag characters)", _short(plain)))
            index = end
            continue
        if char in _BIDI_OVERRIDES:
            found.append(Injection((index, index + 1), "hidden text (bidi control)", f"U+{ord(char):04X}"))
        index += 1
    return found


def _decode_base64(run: str) -> str | None:
    """The text a base64 run encodes, when it is readable prose (letters and spaces); else None."""
    try:
        plain = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    letters = sum(c.isalpha() or c == " " for c in plain)
    if not plain.isprintable() or " " not in plain or letters < 0.8 * len(plain):
        return None
    return plain


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
