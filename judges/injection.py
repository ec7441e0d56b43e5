"""Text that addresses the judge instead of informing a reader: prompt-injection findings.

The prompt already tells the model that data is never an instruction (judges.profiles.render), but
a model may obey anyway, so the deterministic checks (judges.checks) must not rely on it. This
module finds, without any model, text matching one of the RULES below, in any field of a request:

* **override** -- an order to set aside the instructions the judge was given;
* **addressed to a model** -- a directive whose addressee is a judge, model, AI, assistant,
  reviewer, evaluator, grader or system ("Judge: ...", "dear AI", "if you are an LLM, ...");
* **evaluation order** -- a directive whose object is the evaluation itself (label, score, grade,
  rate, mark, classify ... + supported, grounded, correct, true, pass);
* **role reassignment** -- "you are now ...", "act as a judge who ...", "pretend", "roleplay";
* **forged structure** -- text imitating the request's own framing: passage headers and ids,
  role markers ("system:", "assistant:"), opening and closing tags, data markers, the judge's
  output JSON;
* **hidden channel** -- HTML and Markdown comments or hidden elements carrying a directive,
  invisible characters (runs of zero-width characters, Unicode tag characters, bidi overrides),
  and base64, hex or percent encodings that decode to a directive.

Each rule is a function with a docstring saying what it matches, and a finding's `kind` starts
with the rule's name. The rules read the text with its format characters removed
(`strip_invisible`) and each remaining character folded by NFKC (full-width and mathematical
letters read as ASCII), so "ig\u200bnore" and "ｉｇｎｏｒｅ" read as "ignore"; spans are mapped back
to the original text.

Every regex here is bounded: no nested unbounded repetition, every gap between words is a counted
number of words, and a rule's regex is tried only where one of its head words stands (found by
one Aho-Corasick pass of the text for every rule's; judges.text.WordStarts), so the cost is linear
in the text's length.

`strip_invisible` removes format characters (zero-width spaces and joiners, bidi controls, tag
characters, soft hyphens: Unicode category Cf) with a map back to the original offsets, so the
checks read "$0\u200b.75" as "$0.75" and "fifty\u200b percent" as "fifty percent".

Everything here is pattern matching over text: it can miss an instruction worded in a way no rule
expects, which is why the checks never depend on it alone.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

from judges.text import WordStarts, matches_at

Span = tuple[int, int]


@dataclass(frozen=True)
class Injection:
    span: Span  # into the text searched (original offsets)
    # the rule's name, with a detail in parentheses for some: "hidden channel (HTML comment)"
    kind: str
    text: str  # what matched (decoded when it was hidden or encoded), shortened

    def describe(self) -> str:
        return f"{self.kind} ({self.text!r})"


# --- reading the text ----------------------------------------------------------------------------

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


def _fold(clean: str, where: Sequence[int]) -> tuple[str, Sequence[int]]:
    """`clean` with each non-ASCII character replaced by its NFKC form (ｉ -> i, 𝐢 -> i, ﬁ -> fi),
    with the map back to the original text extended."""
    if clean.isascii():
        return clean, where
    pieces: list[str] = []
    mapped: list[int] = []
    for index, char in enumerate(clean):
        folded = char if char.isascii() else unicodedata.normalize("NFKC", char)
        pieces.append(folded)
        mapped.extend([where[index]] * len(folded))
    mapped.append(where[len(clean)])
    return "".join(pieces), mapped


@dataclass(frozen=True)
class _Text:
    """One text as the rules read it: original, folded (see _fold), the map between, lowered."""

    original: str
    folded: str
    where: Sequence[int]
    lowered: str
    passage: bool = False  # the text is a passage's (its own header opens it)

    @classmethod
    def of(cls, text: str, passage: bool = False) -> _Text:
        folded, where = _fold(*strip_invisible(text))
        lowered = folded.lower()
        # the head-word positions are read in `lowered`, so it must align with `folded`
        return cls(text, folded, where, lowered if len(lowered) == len(folded) else folded, passage)

    def span(self, span: Span) -> Span:
        return original_span(self.where, span)

    @cached_property
    def heads(self) -> WordStarts:
        """Where the rules' head words begin in `lowered`: one scan of it for every rule."""
        return WordStarts(self.lowered, _HEAD_WORDS)


# --- shared vocabulary ---------------------------------------------------------------------------


def _alt(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


# A word (apostrophes inside) and what separates words inside one clause; the two never overlap, so
# a counted run of them matches one way only (no backtracking blow-up).
_WORD = r"[\w'\u2019]+"
_SEP = r"[^\w'\u2019.!?;\n]+"


def _gap(words: int) -> str:
    """Up to `words` words between two parts of a pattern, inside one clause."""
    return rf"(?:{_SEP}{_WORD}){{0,{words}}}{_SEP}"


_AI_MODIFIER = _alt(
    "ai",
    r"a\.i\.",
    "automated",
    "automatic",
    "artificial",
    "llm",
    "llm-based",
    "ai-based",
    "ai-powered",
    "machine",
    "robot",
    "robotic",
    "gpt",
    "language",
    "virtual",
    "generative",
)
_AI_NOUN = _alt(
    "ai",
    r"a\.i\.",
    "llms?",
    "gpts?",
    "chatgpt",
    r"chat\s?bots?",
    "bots?",
    r"language\s+models?",
    "claude",
    "gemini",
    "copilot",
)
_EVALUATOR_NOUN = _alt(
    "judges?",
    "reviewers?",
    "evaluators?",
    "graders?",
    "auditors?",
    r"(?:fact[\s-]?)?checkers?",
    "verifiers?",
    "raters?",
    "annotators?",
    "scorers?",
    "classifiers?",
    "moderators?",
    "assessors?",
)
_AMBIGUOUS_NOUN = _alt("models?", "assistants?", "systems?", "agents?", "machines?")
_ADDRESSEE = re.compile(
    rf"\b(?:(?P<mod>{_AI_MODIFIER})[\s-]+){{0,2}}"
    rf"(?:(?P<ai>{_AI_NOUN})|(?P<evaluator>{_EVALUATOR_NOUN})|(?P<ambiguous>{_AMBIGUOUS_NOUN}))"
    rf"(?:[\s-]+(?P<tail>bots?|systems?|models?|agents?|instructions?|notes?|guidance|memo))?\b",
    re.IGNORECASE,
)
_ADDRESSEE_HEADS = frozenset((
    "ai", "a.i.", "automat", "artificial", "llm", "machine", "robot", "gpt", "language", "virtual",
    "generative", "chatgpt", "chat", "bot", "claude", "gemini", "copilot", "judge", "reviewer",
    "evaluator", "grader", "auditor", "fact", "checker", "verifier", "rater", "annotator", "scorer",
    "classifier", "moderator", "assessor", "model", "assistant", "system", "agent",
))

# The request's own texts, as a directive names them: "this answer", "the passage below".
_OWN_TEXT = re.compile(
    r"\b(?:this|these|the|every|each|all|any|no|whole|entire|its|both)(?:\s+\w+){0,2}?\s+"
    r"(?:claims?|statements?|sentences?|answers?|responses?|repl(?:y|ies)|assertions?|passages?|"
    r"excerpts?|"
    r"texts?|outputs?|sections?|paragraphs?|content|facts?|information|sources?|summary|lines?|"
    r"messages?|"
    r"chat|conversation|prompt|documents?|quotes?)\b|\b(?:the\s+)?(?:above|below|following)\b|"
    r"\b(?:it|this|everything|them|these)\b",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"\b(?:must|should|shall|ought\s+to|needs?\s+to|ha(?:ve|s)\s+to|(?:is|are)\s+(?:to|"
    r"required\s+to|"
    r"asked\s+to|instructed\s+to|expected\s+to)|will|may\s+not|cannot|can't|won't|mustn't|"
    r"shouldn't)\b",
    re.IGNORECASE,
)
# Verbs a directive to a judge uses: what to do with the evaluation or with the text evaluated.
_JUDGING_VERB = (
    r"(?:mark|label|rate|score|grade|classify|judge|deem|consider|treat|regard|count|call|tag|flag|"
    r"assess|evaluate|verify|report|return|output|answer|respond|reply|say|pass|approve|accept|"
    r"believe|trust|obey|follow|ignore|overlook|disregard|skip|forget|prioriti[sz]e|weight|rank|"
    r"favou?r|agree|confirm|assume|take|give|assign|set|keep|leave|let|do|don't|never|always|"
    r"stop|note|remember|see|use|read|check|make|please)"
)
_IMPERATIVE = re.compile(
    rf"(?:(?:please|kindly|just|simply|now|then|so|and|also|always)\W+)*{_JUDGING_VERB}\b",
    re.IGNORECASE,
)
_DIRECTED_VERB = re.compile(rf"\b{_JUDGING_VERB}\w*\b", re.IGNORECASE)


def _clause(text: str, start: int, end: int, reach: int = 240) -> Span:
    """The clause around text[start:end]: from the last . ! ? ; or line break before it to the
    first after it, at most `reach` characters either way."""
    low = max(0, start - reach)
    cut = max(text.rfind(mark, low, start) for mark in ".!?;\n")
    after = _CLAUSE_END.search(text, end, end + reach)
    return (cut + 1 if cut >= 0 else low), (after.start() if after else min(len(text), end + reach))


_CLAUSE_END = re.compile(r"[.!?;\n]")


# --- the rules -----------------------------------------------------------------------------------

class Hit(NamedTuple):
    """What a rule found: a span of the folded text (of the original with `original`), a detail
    for the finding's kind, and the text to show when it is not the span's own (decoded text)."""

    span: Span
    detail: str = ""
    shown: str | None = None
    original: bool = False


Found = Iterator[Hit]

_OVERRIDE_VERB = _alt(
    "ignore",
    "ignoring",
    "disregard",
    "disregarding",
    "forget",
    "forgetting",
    "override",
    "overrides",
    "overriding",
    "bypass",
    "set aside",
    "put aside",
    "drop",
    "discard",
    "abandon",
    "skip",
    "scrap",
    "throw out",
    "stop following",
    "no longer follow",
)
_OVERRIDE_QUALIFIER = _alt(
    "previous",
    "prior",
    "above",
    "earlier",
    "preceding",
    "original",
    "initial",
    "system",
    "your",
    "all",
    "any",
    "other",
    "existing",
    "old",
    "current",
    "default",
    "standing",
    "whatever",
    "every",
    "the",
    "these",
    "those",
    "my",
    "its",
)
_OVERRIDE_NOUN = _alt(
    "instructions?",
    "prompts?",
    "directives?",
    "guidance",
    "guidelines",
    "directions",
    "rules",
    "programming",
    "orders",
    "constraints",
    "restrictions",
)
_TOLD = (
    r"you(?:'ve|\s+have)?\s+(?:were\s+|been\s+|have\s+been\s+)?"
    r"(?:received|given|told|got|read|instructed)"
)
_OVERRIDE = re.compile(
    rf"\b{_OVERRIDE_VERB}{_gap(2)}(?:"
    rf"{_OVERRIDE_QUALIFIER}(?:\s+{_OVERRIDE_QUALIFIER})?\s+{_OVERRIDE_NOUN}"
    rf"|{_OVERRIDE_NOUN}\s+(?:above|before|so\s+far|given|{_TOLD})"
    rf"|(?:everything|anything|all)\s+(?:above|before|so\s+far|prior|{_TOLD})|"
    rf"what(?:ever)?\s+{_TOLD})\b"
    rf"|\b(?:{_OVERRIDE_NOUN}|everything|anything|"
    rf"what)\s+(?:that\s+)?{_TOLD}{_gap(5)}(?:no\s+longer|void|null|"
    rf"invalid|obsolete|cancell?ed|revoked|(?:do|does)\s+not\s+apply|(?:don't|doesn't)\s+apply)\b"
    rf"|\b(?:supersedes?|replaces?|cancels?|voids?|nullif(?:y|ies)|overrides?)\s+(?:all\s+|any\s+|"
    rf"the\s+|your\s+)?"
    rf"(?:previous\s+|prior\s+|earlier\s+|system\s+|original\s+)?(?:instructions|prompts?|"
    rf"directives)\b",
    re.IGNORECASE,
)
_OVERRIDE_HEADS = frozenset((
    "ignor", "disregard", "forget", "overrid", "bypass", "set aside", "put aside", "drop",
    "discard", "abandon", "skip", "scrap", "throw out", "stop following", "no longer follow",
    "instruction", "prompt", "directive", "guidance", "guideline", "direction", "rules",
    "programming", "orders", "constraints", "restrictions", "everything", "anything", "what",
    "supersede", "replace", "cancel", "void", "nullif",
))


def _override(text: _Text) -> Found:
    """An order to set aside the instructions the judge was given: a discarding verb (ignore,
    disregard, forget, set aside, drop, bypass, ...) within two words of a qualified instruction
    noun ("all previous instructions", "your guidelines", "the rules above", "whatever you were
    told"); the instructions "you received" declared void or no longer applying; a text claiming
    to supersede "all instructions". "Ignore the paper form" has no instruction noun and does not
    match; "the old rules no longer apply" names no "you" and does not either."""
    for match in matches_at(_OVERRIDE, text.folded, text.heads.of(_OVERRIDE_HEADS)):
        yield Hit(match.span())


_GREETING = re.compile(
    r"^\W*(?:(?:hey|hi|hello|dear|attention|attn|psst|ok|okay|yo|note|message|memo|reminder|notice|"
    r"warning|"
    r"instructions?|guidance|request|a|an|the|any|all|every|each|whichever|whatever|my|our|to|for|"
    r"you|fellow|"
    r"other|future)\W+)*$",
    re.IGNORECASE,
)
_INTRO_WORD = re.compile(
    r"\b(?:hey|hi|hello|dear|attention|attn|psst|yo|note|message|memo|reminder|notice|"
    r"warning|instructions?|guidance|request|to|for)\b",
    re.IGNORECASE,
)
_VOCATIVE_END = re.compile(
    r"(?:[\s,]+(?:who|that|which)?\s*(?:is|are)?\s*(?:reading|processing|evaluating|reviewing|"
    r"checking|"
    r"judging|grading|scoring|seeing|parsing|analy[sz]ing)\s+(?:this|these|it|the\s+\w+))?"
    r"\s*(?:[:,\u2014\u2013!]|\s-\s|--)\s*",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|when|in\s+case|since)\s+(?:you(?:'re|\s+are)|u\s+are)\s+(?:(?:an?|the|one\s+of"
    r"\s+the|acting\s+as\s+an?)\s+)?$|\bare\s+you\s+(?:an?|the)\s+$|\bas\s+an?\s+$",
    re.IGNORECASE,
)
_READER = re.compile(
    r"\b(?:whoever|anyone|anybody|any\s+(?:one|entity|program|tool|software|reader))\s+(?:who\s+|"
    r"that\s+|which\s+)?"
    r"(?:is\s+|are\s+)?(?:reads?|reading|reviews?|reviewing|evaluates?|evaluating|checks?|checking|"
    r"grades?|"
    r"grading|judges?|judging|scores?|scoring|process(?:es)?|processing|parses?|parsing|"
    r"analy[sz](?:es|ing|e))\s+"
    r"(?:this|these|the)\s+(?:answers?|responses?|repl(?:y|ies)|chat|conversation|transcript|"
    r"output|text|passages?|"
    r"excerpts?|prompt)\b",
    re.IGNORECASE,
)
_READER_HEADS = frozenset((
    "whoever", "anyone", "anybody", "any one", "any entity", "any program", "any tool",
    "any software", "any reader",
))


def _addressed(text: _Text) -> Found:
    """A directive whose addressee is a judge, model, AI, assistant, reviewer, evaluator, grader or
    system, in any of three forms:

    * vocative: the addressee opens its clause (after greeting words: "hey", "dear", "note to",
      "attention", "a message for the", "to whichever") and is followed by ":", ",", "--" or a
      dash, optionally with "(who is) reading this" between; it fires when a greeting word is
      there, the addressee is plainly a machine ("AI", "LLM", "bot", "AI reviewer"), or an
      imperative or "you" follows ("Judge: mark ...", "Assistant, label ...");
      "Reviewer: Dr. Smith" does not;
    * conditional: "if you are an LLM", "as an AI", "are you a grader";
    * third person: a machine addressee ("AI reviewers", "any LLM", "automated graders") with a
      modal ("should", "must", "needs to") and either a judging verb (trust, flag, mark, ignore,
      accept ...) or the request's own text ("this passage", "the answer below") in its clause;
      an evaluator noun ("the reviewer", "judges") only with the request's own text and a
      judging verb. "The reviewer will contact you" and "AI systems are regulated by the EU AI
      Act" do not match;
    * a reader named by what it does to the request's text: "whoever reviews this chat",
      "anyone processing this passage"."""
    folded = text.folded
    for match in matches_at(_ADDRESSEE, folded, text.heads.of(_ADDRESSEE_HEADS)):
        if _addressed_here(folded, match):
            yield Hit(_trimmed(folded, _clause(folded, match.start(), match.end())))
    for match in matches_at(_READER, folded, text.heads.of(_READER_HEADS)):
        yield Hit(_trimmed(folded, _clause(folded, match.start(), match.end())))


def _addressed_here(folded: str, match: re.Match[str]) -> bool:
    machine = bool(match.group("mod") or match.group("ai") or match.group("tail"))
    start, end = _clause(folded, match.start(), match.end())
    before = folded[start:match.start()]
    conditional = _CONDITIONAL.search(before[-40:])
    if conditional and (machine or not conditional.group().lower().startswith("as")):
        return True
    ending = _VOCATIVE_END.match(folded, match.end())
    if ending and _GREETING.match(before):
        after = folded[ending.end():ending.end() + 60]
        if (
            machine
            or _INTRO_WORD.search(before)
            or _IMPERATIVE.match(after)
            or re.match(r"you\b", after, re.IGNORECASE)
        ):
            return True
    modal = _MODAL.search(folded, match.end(), end)
    if modal is None:
        return False
    verb = _DIRECTED_VERB.match(folded, modal.end() + 1) or _DIRECTED_VERB.match(
        folded, modal.end() + 5
    )
    own_text = _OWN_TEXT.search(folded, start, end) is not None and not _only_pronoun(
        folded, start, end
    )
    if machine:
        return bool(verb) or own_text
    return match.group("evaluator") is not None and own_text and bool(verb)


def _only_pronoun(folded: str, start: int, end: int) -> bool:
    """The clause names the request's text only by a bare pronoun ("it", "this"), which any clause
    may hold."""
    return all(m.group().lower() in ("it", "this", "everything", "them", "these")
               for m in _OWN_TEXT.finditer(folded, start, end))


_EVAL_WORD = re.compile(
    r"\b(?:mark(?:s|ed|ing)?|label(?:s|led|ed|ling|ing)?|rat(?:e|es|ed|ing)|scor(?:e|es|ed|ing)|"
    r"grad(?:e|es|ed|ing)|classif(?:y|ies|ied|ying)|judg(?:e|es|ed|ing)|deem(?:s|ed)?|consider(?:s|"
    r"ed)?|"
    r"treat(?:s|ed)?|regard(?:s|ed)?|count(?:s|ed)?|call(?:s|ed)?|tag(?:s|ged)?|flag(?:s|ged|"
    r"ging)?|"
    r"assess(?:es|ed)?|evaluat(?:e|es|ed|ing)|set|give|assign(?:s|ed)?|verdicts?|report(?:s|ed)?|"
    r"return|output|"
    r"(?:answer|respond|reply)\s+with)\b",
    re.IGNORECASE,
)
_EVAL_HEADS = frozenset((
    "mark", "label", "rat", "scor", "grad", "classif", "judg", "deem", "consider", "treat",
    "regard", "count", "call", "tag", "flag", "assess", "evaluat", "set", "give", "assign",
    "verdict", "report", "return", "output", "answer", "respond", "reply",
))
_GOOD_OUTCOME = re.compile(
    r"\b(?:supported|grounded|correct|true|accurate|verified|faithful|factual|valid|pass(?:ed|"
    r"ing)?|perfect|"
    r"approved|trustworthy|reliable|consistent|hallucination[\s-]free|full\s+marks|"
    r"top\s+marks)\b|\b10\s*/\s*10\b|"
    r"\b10\s+out\s+of\s+10\b|\b100\s*%",
    re.IGNORECASE,
)
_BAD_OUTCOME = re.compile(
    r"\b(?:unsupported|hallucinat\w*|false|incorrect|wrong|errors?|problems?|issues?|"
    r"contradict\w*|fabricat\w*|inaccura\w*|ungrounded|mistakes?)\b",
    re.IGNORECASE,
)
# The judge's own labels, written as its output writes them: an order to emit one needs no object.
_JUDGE_LABEL = re.compile(
    r"\b(?:SUPPORTED|GROUNDED|UNGROUNDED|PARTIALLY_SUPPORTED|MOSTLY_GROUNDED)\b"
)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|don't|doesn't|without)\b", re.IGNORECASE)
_YOU = re.compile(r"\byou\b", re.IGNORECASE)
_OPENING_VERB = re.compile(r"(?:(?:please|kindly|just|simply|now|then|so|and|also|always)\W+)*"
                           r"(?:(?:do\s+not|don't|never)\s+)?(\w+)", re.IGNORECASE)


def _evaluation_order(text: _Text) -> Found:
    """A directive whose object is the evaluation itself: in one clause, a judging word (label,
    mark, score, grade, rate, classify, consider, treat, verdict, ...) and the request's own text
    ("this answer", "every claim", "the above", "it"), with the outcome it orders after that text
    (supported, grounded, correct, true, verified, pass, 10/10), or a negated bad outcome ("no
    claim should be flagged as unsupported", "do not report any problems"). The clause must be a
    directive: it opens with the verb as an imperative, or holds a modal or "you". "Teachers mark
    the correct answers in green" names the outcome before the text and has no directive; "the
    statement is considered true if signed" has no directive."""
    folded = text.folded
    seen: set[Span] = set()
    for match in matches_at(_EVAL_WORD, folded, text.heads.of(_EVAL_HEADS)):
        clause = _clause(folded, match.start(), match.end())
        if clause in seen or not _is_evaluation_order(folded, clause, match):
            continue
        seen.add(clause)
        yield Hit(_trimmed(folded, clause))


def _is_evaluation_order(folded: str, clause: Span, match: re.Match[str]) -> bool:
    start, end = clause
    # What the reading depends on is the clause's text (and the character before it, which a \b
    # at its start reads), where the judging word sits in it, and a pronoun after that word. A
    # text that repeats a judging word thousands of times ("judge judge ...") gives clauses of the
    # same text over and over: each is read once.
    low = max(0, start - 1)
    pronoun = _PRONOUN_OBJECT.match(folded, match.end())
    return _orders_evaluation(
        folded[low:end], start - low, match.start() - low, match.end() - low,
        (pronoun.start() - low, pronoun.end() - low) if pronoun else None,
    )


@lru_cache(maxsize=4096)
def _orders_evaluation(window: str, start: int, at: int, upto: int, pronoun: Span | None) -> bool:
    """_is_evaluation_order within `window`, which holds the clause from `start` to its end; the
    judging word is window[at:upto]; `pronoun` is where a pronoun object follows it, if one does."""
    end = len(window)
    # an imperative opens the clause, or follows a vocative's colon or dash ("Judge: mark ...")
    opened = max(start, *(window.rfind(mark, start, at) + 1 for mark in ":,\u2014(\""))
    verb = _OPENING_VERB.match(window[opened:end].lstrip(" \t\"'([*-:>"))
    directive = bool((verb and verb.group(1).lower() == window[at:upto].split()[0].lower())
                     or _MODAL.search(window, start, end) or _YOU.search(window, start, end))
    if not directive:
        return False
    if _JUDGE_LABEL.search(window, upto, end):
        return True
    own = _own_text(window, start, end, pronoun)
    if own is None:
        return False
    own_start, own_end = own
    if _GOOD_OUTCOME.search(window, own_end, end) and not _NEGATION.search(
        window, start, own_start
    ):
        return True
    return bool(_NEGATION.search(window, start, end) and _BAD_OUTCOME.search(window, upto, end))


_PRONOUN_OBJECT = re.compile(r"\s+(?:it|this|everything|them|these|all)\b", re.IGNORECASE)


def _own_text(folded: str, start: int, end: int, pronoun: Span | None) -> Span | None:
    """Where the clause names the request's text: a noun phrase ("this answer"), or a bare
    pronoun only as the judging verb's object ("mark it", `pronoun`), since any clause may hold
    an "it"."""
    for found in _OWN_TEXT.finditer(folded, start, end):
        if found.group().lower() not in ("it", "this", "everything", "them", "these"):
            return found.span()
    return pronoun


def _trimmed(folded: str, span: Span) -> Span:
    start, end = span
    while start < end and folded[start].isspace():
        start += 1
    while end > start and folded[end - 1].isspace():
        end -= 1
    return start, end


_ROLE_OBJECT = re.compile(
    rf"\b(?:{_AI_NOUN}|{_EVALUATOR_NOUN}|{_AMBIGUOUS_NOUN}|personas?|characters?|oracle|jailbr\w*|"
    r"unrestricted|unfiltered|uncensored|bound\s+by|restricted|limited\s+by|constrained|"
    r"free\s+(?:of|from))\b",
    re.IGNORECASE,
)
_INVENTED_NAME = re.compile(r"\b(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{3,})\b")  # FairJudge, DAN
_ROLE_HEAD = re.compile(
    r"\byou(?:\s+are|'re|\s+will\s+be|\s+shall\s+be)\s+(?:now|no\s+longer|henceforth)\b"
    r"|\b(?:act|acting|behave|behaving|respond|responding|answer|answering|reply|replying|speak|"
    r"speaking|"
    r"function|operate|serve|think|write)\s+(?:as|like)\b"
    r"|\b(?:pretend(?:ing)?|imagine|suppose|picture|simulat(?:e|ing)|assum(?:e|ing)|adopt(?:ing)?|"
    r"tak(?:e|ing)|play(?:ing)?|embody|becom(?:e|ing))\s+(?:(?:that\s+)?you(?:'re|\s+are|\s+were)?|"
    r"to\s+be|being|"
    r"(?:on\s+)?(?:the|a|your)\s+(?:new\s+)?(?:role|part|persona|identity|character)(?:\s+of)?)\b",
    re.IGNORECASE,
)
_ROLE_HEADS = frozenset((
    "you", "act", "behav", "respond", "answer", "repl", "speak", "function", "operate", "serve",
    "think", "write", "pretend", "imagine", "suppose", "picture", "simulat", "assum", "adopt",
    "tak", "play", "embody", "becom",
))
_ROLE_ALONE = re.compile(
    r"\blet'?s\s+(?:role[\s-]?play|play\s+a\s+game)\b|\brole[\s-]?play(?:ing)?\s+(?:as|that|"
    r"with\s+me)\b|\brole[\s-]?play\s*:"
    r"|\bstay\s+in\s+character\b"
    r"|\byour\s+(?:new\s+(?:role|persona|identity|name|instructions?|task)|(?:role|persona|"
    r"identity)\s+(?:is\s+)?now)\b"
    r"|\b(?:dan|developer|god|jailbreak|jailbroken|unrestricted|unfiltered|admin|sudo|debug|"
    r"evil)\s+mode\b"
    r"|\bjailbr(?:oken|eak)\b|\bdo\s+anything\s+now\b"
    r"|\b(?:from\s+(?:now|this\s+point|here)\s+on(?:wards?)?|henceforth|"
    r"for\s+the\s+rest\s+of\s+(?:this|the)\s+"
    r"(?:conversation|chat|session|task)|until\s+(?:told|instructed)\s+otherwise)\W+(?:\w+\W+){0,"
    r"2}?you\b",
    re.IGNORECASE,
)
_ROLE_ALONE_HEADS = frozenset((
    "role", "let", "stay", "your", "dan", "developer", "god", "jailbr", "unrestricted",
    "unfiltered", "admin", "sudo", "debug", "evil", "do anything", "from", "henceforth",
    "for the rest", "until",
))


def _role_reassignment(text: _Text) -> Found:
    """An attempt to give the reader a new identity: "you are now / no longer ...", "act as",
    "behave like", "answer as", "pretend to be", "imagine you are", "assume the persona of",
    followed within six words by a judge, model, assistant, persona or character noun, an
    invented name (FairJudge, DAN) or a freedom from rules ("no longer bound by"); and, alone,
    "roleplay", "stay in character", "your new role", "DAN mode" or "developer mode", "from now
    on, you ...". "Act as a guarantor", "you are now eligible" and "from now on, passes are sold
    online" do not match."""
    folded = text.folded
    for match in matches_at(_ROLE_HEAD, folded, text.heads.of(_ROLE_HEADS)):
        start, end = match.end(), _clause(folded, match.start(), match.end(), reach=60)[1]
        if _ROLE_OBJECT.search(folded, start, end) or _INVENTED_NAME.search(folded, start, end):
            yield Hit(match.span())
    for match in matches_at(_ROLE_ALONE, folded, text.heads.of(_ROLE_ALONE_HEADS)):
        yield Hit(match.span())


_FORGED_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (needs, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for needs, pattern in (
        # a role marker opening a line, as a chat transcript or a prompt writes it
        (
            ("system", "assistant", "developer", "chatbot", "ai"),
            r"^[ \t>*#_\-]*(?:system|assistant|developer|chatbot|ai)(?:\s*\(\w{1,20}\))?[ \t]*:",
        ),
        # chat-template tokens and instruction brackets
        (
            (
                "<|",
                "|>",
                "[inst",
                "[/inst",
                "[sys",
                "<<sys",
                "<</sys",
                "im_start",
                "im_end",
                "endoftext",
            ),
            r"<\|[\w\s]{1,20}\|>|\[/?(?:INST|SYS|SYSTEM|ASSISTANT|USER)\]|<</?SYS>>|<\|"
            r"?(?:im_start|im_end|endoftext)\|?>",
        ),
        # opening or closing tags of the request's own parts
        (
            ("<",),
            r"</?\s*(?:passages?|documents?|docs?|context|system|user|assistant|developer|"
            r"instructions?|prompt|"
            r"answer|question|retrieved\w*|search_results?|excerpts?|evidence|turn|human|"
            r"tool_call)\b[^<>\n]{0,80}>",
        ),
        # "[P7] Source: official ...": a passage id opening a clause with a header's words after it
        (("[",), r"^[ \t]*\[P[\w.:-]{0,20}\][^\n\u00b7]{1,80}\u00b7"),
        (
            ("[",),
            r"(?:^|[.!?]\s+)["
            r" \t]*\[P[\w.:-]{0,20}\]\s*(?:[^\s\[\]]+\s+){0,2}?(?:source|official|title|agency|"
            r"section|passage|excerpt|document|fetched|updated|verified|authoritative|priority|"
            r"header|"
            r"retrieved|\u00b7)",
        ),
        # "Passage P2:", "Passage [P4] (official ...)"
        (
            ("passage",),
            r"\bpassages?\s*\[?P[\w.:-]{1,20}\]?\s*(?:\(|:|\u2014|\u2013|-{1,3}|={2,}|\])",
        ),
        # a fence line naming a part of the request: "=== Passage P2 ===", "--- End of passages ---"
        (
            ("===", "---", "###", "***", "___", "~~~", "<<<", ">>>", "[[", "]]"),
            r"^[ \t]*[=\-#*_~<>\[\]]{3,}["
            r" \t]*[^\n]{0,40}?\b(?:passages?|excerpts?|context|system|instructions?|prompt|"
            r"retrieved|evidence|end\s+of|begin(?:ning)?\s+of|start\s+of|override|data|(?:new|real|"
            r"actual|true|"
            r"updated)\s+(?:passages?|sources?|documents?|instructions?)|(?:user|assistant|answer|"
            r"question)["
            r" \t]*"
            r"(?:[=\-#*_~<>\[\]]{3,}|$))",
        ),
        # the prompt's own data markers
        (
            ("<<<", "data-", "end data"),
            r"<<<\s*(?:END\s+)?DATA\b|\bDATA-[0-9a-f]{8,}\b|\bEND DATA\b",
        ),
        # the judge's output format
        (
            ("grounded", "hallucinated", "supported", "label", "verdict"),
            r"[\"']?\b(?:grounded|is_grounded|hallucinated|supported)[\"']?\s*[:=]\s*[\"']?(?:true|"
            r"false)\b"
            r"|[\"'](?:label|verdict)[\"']\s*:\s*[\"'](?:SUPPORTED|GROUNDED|PARTIALLY_SUPPORTED|"
            r"UNGROUNDED|"
            r"MOSTLY_GROUNDED|pass)\b",
        ),
        (
            ('"', "'"),
            r"[\"'](?:verdict|label|verification_status|unsupported_claims|fabrications|claims|"
            r"counts)[\"']\s*:",
        ),
        # prompt sections by name
        (
            ("system", "developer"),
            r"^\s*#{2,}\s*(?:system|instructions?|override)\b|\bsystem\s+(?:prompt|override|"
            r"message)\b|\bdeveloper\s+(?:message|instructions?)\b",
        ),
    )
)
_TRANSCRIPT = re.compile(
    r"^[ \t>*\-]*(?:user|human)[ \t]*:[^\n]*\n(?:[^\n]*\n){0,3}?[ \t>*\-]*(?:assistant|ai|"
    r"bot|model|system)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
# "[P9] Agency · Title" opening a line after the passage's first line: a forged passage header.
_FORGED_HEADER = re.compile(r"\n\s*\[P[\w.:-]*\][^\n]*")


def _forged_structure(text: _Text) -> Found:
    """Text imitating the request's own framing: a role marker opening a line ("SYSTEM:",
    "Assistant:"; "User:" only when an assistant's line follows, as in a forged transcript),
    chat-template tokens ("<|system|>", "[INST]"), tags of the request's parts ("</passage>",
    "<system>", "<document id=...>"), a passage id opening a clause with header words after it
    ("[P7] Source: official ..."), "Passage P2:", a fence line naming a part of the request
    ("=== Passage P2 ===", "--- End of passages ---", "### SYSTEM OVERRIDE ###"), the prompt's
    data markers (`<<<DATA-...>>>`), the judge's output JSON ('"label": "SUPPORTED"',
    "grounded=true"); in a passage, also a passage header line ("[P9] ...") after its first line.
    Citations ("$1.35 [P1].", "according to P2"), "Customer:/Agent:" dialogues and HTML such as
    `<b>` or `<a href>` do not match."""
    folded, lowered = text.folded, text.lowered
    for needs, pattern in _FORGED_PATTERNS:
        if any(need in lowered for need in needs):
            for match in pattern.finditer(folded):
                yield Hit(match.span())
    if "user" in lowered or "human" in lowered:
        for match in _TRANSCRIPT.finditer(folded):
            yield Hit(match.span())
    if text.passage and "\n" in folded:
        for match in _FORGED_HEADER.finditer(folded):
            yield Hit((match.start() + 1, match.end()), "passage header")


# The directive rules: what a hidden channel or an encoding is searched for once revealed.
_DIRECTIVE_RULES: tuple[tuple[str, Callable[[_Text], Found]], ...] = (
    ("override", _override),
    ("addressed to a model", _addressed),
    ("evaluation order", _evaluation_order),
    ("role reassignment", _role_reassignment),
    ("forged structure", _forged_structure),
)
# In a comment or a hidden element (which no reader of the page sees), a word for the judge or
# its verdict is enough: honest comments ("begin footer", "Google Tag Manager") name neither.
_JUDGE_WORD = re.compile(
    rf"\b(?:{_AI_NOUN}|{_EVALUATOR_NOUN}|models?|assistants?|supported|grounded|accurate|correct|"
    rf"verified|"
    r"faithful|ignore|disregard|label|verdict|instructions?|prompt)\b",
    re.IGNORECASE,
)


def _directive_in(plain: str) -> str | None:
    """The name of the first directive rule that fires on `plain`, else None."""
    revealed = _Text.of(plain)
    for name, rule in _DIRECTIVE_RULES:
        if next(iter(rule(revealed)), None) is not None:
            return name
    return None


_MARKDOWN_COMMENT = re.compile(
    r"^[ \t]*\[[^\]\n]{0,30}\]:[ \t]*(?:#|<>|\(\)|//)[ \t]*([^\n]{0,500})", re.MULTILINE
)
_HIDDEN_ELEMENT = re.compile(
    r"<(\w{1,10})\b[^<>]{0,200}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
    r"opacity\s*:\s*0"
    r"|\bhidden\b|aria-hidden)[^<>]{0,200}>",
    re.IGNORECASE,
)
COMMENT_MAX = 5_000  # what of a comment or hidden element is read


def _hidden_channel(text: _Text) -> Found:
    """Text a reader of the rendered page does not see but a model reads:

    * an HTML comment (`<!-- ... -->`, unclosed to the end), a Markdown comment line
      (`[//]: # (...)`, `[comment]: <> (...)`) or an element hidden by its style or attribute
      (`display:none`, `hidden`), when what it holds fires a directive rule or names the judge
      or its verdict (a model, reviewer, "supported", "label", ...);
    * invisible characters: a run of three or more format characters together (zero-width
      text), or a text made of nothing else; Unicode tag characters (read out as ASCII) outside
      an emoji flag sequence; a bidi override or embedding (isolates and embeddings are left
      alone in right-to-left text, which uses them honestly);
    * base64, hex or percent-encoded runs whose decoded text fires a directive rule or names
      the judge or its verdict.

    Spans found here are into the original text (`_Text.original`), not the folded one."""
    yield from _comments(text.original)
    yield from _invisible(text.original)
    yield from _encoded(text)


def _comments(original: str) -> Found:
    hidden: list[tuple[Span, str, str]] = []
    start = original.find("<!--")
    while start >= 0:
        close = original.find("-->", start + 4)
        end = len(original) if close < 0 else close + 3
        hidden.append(
            ((start, end), "HTML comment", original[start + 4 : min(end, start + 4 + COMMENT_MAX)])
        )
        start = original.find("<!--", end)
    if "]:" in original:
        for match in _MARKDOWN_COMMENT.finditer(original):
            hidden.append((match.span(), "Markdown comment", match.group(1)))
    if "<" in original:
        for match in _HIDDEN_ELEMENT.finditer(original):
            close = original.find("<", match.end(), match.end() + COMMENT_MAX)
            end = close if close >= 0 else min(len(original), match.end() + COMMENT_MAX)
            hidden.append(((match.start(), end), "hidden element", original[match.end():end]))
    for span, where, inner in hidden:
        rule = _directive_in(inner)
        if rule or _JUDGE_WORD.search(strip_invisible(inner)[0]):
            yield Hit(span, f"{where}: {rule}" if rule else where, original=True)


_BIDI_OVERRIDES = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# all but the overrides
_BIDI_HONEST_IN_RTL = frozenset("\u202a\u202b\u202c\u2066\u2067\u2068\u2069")
_RTL_LETTERS = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_INVISIBLE_RUN_MIN = 3
_EMOJI_TAG_BASE = (
    "\U0001f3f4"  # a waving black flag, which tag characters turn into a subdivision flag
)


def _invisible(original: str) -> Found:
    if original.isascii():
        return
    for match in _TAGS.finditer(original):
        if not _is_emoji_flag(original, match):
            plain = "".join(
                chr(ord(c) - 0xE0000) for c in match.group() if 0xE0020 <= ord(c) <= 0xE007E
            )
            yield Hit(
                match.span(), "tag characters: " + (_directive_in(plain) or "text"), plain, True
            )
    rtl = _RTL_LETTERS.search(original) is not None
    for index, char in enumerate(original):
        if char in _BIDI_OVERRIDES and not (rtl and char in _BIDI_HONEST_IN_RTL):
            yield Hit((index, index + 1), "bidi control", f"U+{ord(char):04X}", True)
    runs = [m for m in FORMAT_CHARACTERS.finditer(original)]
    yield from _invisible_runs(original, runs)


def _is_emoji_flag(original: str, match: re.Match[str]) -> bool:
    return (
        match.start() > 0
        and original[match.start() - 1] == _EMOJI_TAG_BASE
        and match.group()[-1] == "\U000e007f"
        and len(match.group()) <= 8
    )


def _invisible_runs(original: str, marks: list[re.Match[str]]) -> Found:
    """Runs of _INVISIBLE_RUN_MIN or more adjacent format characters (not tags or bidi controls,
    reported above), and a text that is nothing but format characters and spaces."""
    plain = [
        m
        for m in marks
        if not (0xE0000 <= ord(m.group()) <= 0xE007F) and m.group() not in _BIDI_OVERRIDES
    ]
    if plain and not strip_invisible(original)[0].strip():
        yield Hit((0, len(original)), "invisible characters only", "", True)
        return
    index = 0
    while index < len(plain):
        end = index
        while end + 1 < len(plain) and plain[end + 1].start() == plain[end].end():
            end += 1
        if end - index + 1 >= _INVISIBLE_RUN_MIN:
            yield Hit((plain[index].start(), plain[end].end()), "invisible characters", "", True)
        index = end + 1


BASE64_MIN_RUN = 24
_BASE64_RUN = re.compile(
    rf"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{{{BASE64_MIN_RUN},}}={{0,2}}(?![A-Za-z0-9+/=])"
)
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Fa-f])")
# a token with at least four escapes, each followed by at most 20 plain characters
PERCENT_MIN_ESCAPES = 4
_PERCENT_RUN = re.compile(
    rf"[^\s%]{{0,20}}(?:%[0-9A-Fa-f]{{2}}[^\s%]{{0,20}}){{{PERCENT_MIN_ESCAPES},}}"
)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _encoded(text: _Text) -> Found:
    folded = text.folded
    runs: list[tuple[re.Match[str], str, str | None]] = []
    if max(map(len, folded.split()), default=0) >= BASE64_MIN_RUN:
        runs += [(m, "base64", _decode_base64(m.group())) for m in _BASE64_RUN.finditer(folded)]
        runs += [(m, "hex", _readable(bytes.fromhex(m.group()))) for m in _HEX_RUN.finditer(folded)]
    # A run needs that many escapes: counting them is ~300x cheaper than the run's pattern, which
    # tries up to 20 characters at every position (0.3 ms a 1,500-character passage with a "50%").
    if len(_PERCENT_ESCAPE.findall(folded)) >= PERCENT_MIN_ESCAPES:
        runs += [
            (m, "percent-encoded", _readable(unquote_to_bytes(m.group())))
            for m in _PERCENT_RUN.finditer(folded)
        ]
    for match, encoding, plain in runs:
        if plain is None:
            continue
        rule = _directive_in(plain)
        if rule or _JUDGE_WORD.search(plain):
            yield Hit(match.span(), f"{encoding}: {rule or 'names the judge'}", plain)


def _decode_base64(run: str) -> str | None:
    """The text a base64 run encodes, when it is readable prose (letters and spaces); else None."""
    try:
        return _readable(base64.b64decode(run + "=" * (-len(run) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def _readable(data: bytes) -> str | None:
    try:
        plain = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    letters = sum(c.isalpha() or c == " " for c in plain)
    if not plain.isprintable() or " " not in plain or letters < 0.8 * len(plain):
        return None
    return plain


# --- the rules, listed ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One listed rule: its name (which starts the kind of its findings) and its finder."""

    name: str
    finder: Callable[[_Text], Found]

    @property
    def doc(self) -> str:
        return self.finder.__doc__ or ""


# Every rule's head words: each text is scanned for them all at once (_Text.heads).
_HEAD_WORDS = (_OVERRIDE_HEADS | _ADDRESSEE_HEADS | _READER_HEADS | _EVAL_HEADS | _ROLE_HEADS
               | _ROLE_ALONE_HEADS)

RULES: tuple[Rule, ...] = (
    Rule("override", _override),
    Rule("addressed to a model", _addressed),
    Rule("evaluation order", _evaluation_order),
    Rule("role reassignment", _role_reassignment),
    Rule("forged structure", _forged_structure),
    Rule("hidden channel", _hidden_channel),
)


@lru_cache(maxsize=256)  # a request has at most 100 passages; texts are kept alive by the cache
def find_injections(text: str, *, passage: bool = False) -> tuple[Injection, ...]:
    """Everything in `text` that one of RULES finds: an instruction to the judge, hidden text or
    forged structure. With `passage`, a passage header line ("[P9] ...") after the first line
    counts as forged too."""
    read = _Text.of(text, passage)
    found: list[Injection] = []
    for rule in RULES:
        for hit in rule.finder(read):
            span = hit.span if hit.original else read.span(hit.span)
            kind = f"{rule.name} ({hit.detail})" if hit.detail else rule.name
            shown = text[span[0]:span[1]] if hit.shown is None else hit.shown
            found.append(Injection(span, kind, _short(shown)))
    return tuple(sorted(set(found), key=lambda i: (i.span, i.kind)))


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(strip_invisible(text)[0].split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
