"""The offline judge: deterministic word-and-number overlap, no model, no network.

It is the default when no model endpoint is configured, so the app runs on a bare machine. It is
deliberately simple and honest about what it measures:

* every answer sentence that states something is one claim (hedges, redirects and lead-ins
  ending in ":" are not claims);
* a claim's label comes from how many of its key terms (content words and numbers) the single
  best passage contains: at least 80% is SUPPORTED, at least 50% PARTIALLY_SUPPORTED, less is
  UNSUPPORTED;
* numbers must match exactly after normalization ("$86" == "86.00"); a number that no passage
  contains makes the claim UNSUPPORTED and is reported as a fabrication, however well the words
  match.

Only passage text is searched. Header fields (title, agency, section, source, fetched date) are
never evidence for a policy fact. The judge cannot see meaning, so it never says CONTRADICTED: a
changed price shows up as a number no passage contains.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from judges.passages import PassageIndex, index_passage
from judges.scoring import grounding_score, verdict_for
from judges.text import NumberMention, Span, content_words, key_terms, numbers, split_sentences
from judges.types import Claim, Evidence, Fabrication, JudgeInfo, JudgeRequest, JudgeResult, Passage

OFFLINE_PROFILE = "offline"
OFFLINE_VERSION = "v1"
OFFLINE_MODEL = "rules"

SUPPORTED_AT = 0.8
PARTIALLY_SUPPORTED_AT = 0.5

# Words of hedging, courtesy and "ask the agency" redirects. A sentence made only of these (plus
# the agency's own name) tells the rider nothing checkable, so it is not a claim.
HEDGE_WORDS = frozenset(
    """
    advice advise agency assistance best call check confirm consult contact current customer
    department detail directly feel happy help hope info information know latest like line
    need note office online page phone question reach recommend representative service site
    staff suggest support sure team telephone time touch visit want web website
    """.split()
)

# Capitalized on purpose: "may" the verb is not May the month.
_MONTH_NAME = (
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b\.?"
)

# Ordered: the first rule that matches names the category, so "Seniors pay $1.35" is a price
# claim, "Seniors need a Medicare card" a document claim and "Seniors ride at half fare" an age one.
CATEGORY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quote", re.compile(r"[\"“”][^\"“”]{3,}[\"“”]")),
    ("price", re.compile(
        r"[$€£]\s?\d|\b\d+(?:\.\d+)?\s*(?:dollars?|cents?)\b|\b(?:free|costs?|price[sd]?)\b", re.I)),
    ("document", re.compile(
        r"\bIDs?\b|\b(?:card|proof|documents?|documentation|certificate|passport|license)s?\b", re.I)),
    ("age", re.compile(
        r"\b(?:ages?|aged|years? old|seniors?|child(?:ren)?|kids?|youth|minors?|infants?)\b", re.I)),
    ("provenance", re.compile(r"\b(?:fetched|retrieved|source|according to|published|last updated)\b", re.I)),
    ("date", re.compile(r"\b(?:19|20)\d\d\b|\b(?:deadline|expires?|until|effective)\b|" + _MONTH_NAME)),
    ("program", re.compile(r"\b(?:programs?|discounts?|reduced fares?|half fare|pass(?:es)?)\b", re.I)),
    ("process", re.compile(
        r"\b(?:apply|applie[sd]|applica|submi|visit|regist|enrol|renew|sign\w* up|mail)\w*", re.I)),
)


@dataclass(frozen=True)
class _Source:
    passage: Passage
    index: PassageIndex


@dataclass(frozen=True)
class _Match:
    source: _Source | None  # the passage containing the most of the claim's terms
    recall: float  # share of the claim's terms that passage contains
    missing_terms: list[str]


def judge_offline(request: JudgeRequest) -> JudgeResult:
    started = time.perf_counter()
    sources = [_Source(passage, index_passage(passage.text)) for passage in request.passages]
    known_numbers = frozenset().union(*(source.index.numbers for source in sources))
    redirect_words = HEDGE_WORDS | _agency_words(request.passages)

    claims: list[Claim] = []
    fabrications: list[Fabrication] = []
    for span in split_sentences(request.answer):
        sentence = request.answer[span[0]:span[1]]
        mentions = numbers(sentence)
        if not _is_claim(sentence, mentions, redirect_words):
            continue
        invented = [mention for mention in mentions if mention.value not in known_numbers]
        claim = _judge_sentence(f"c{len(claims) + 1}", sentence, span, sources, invented)
        claims.append(claim)
        fabrications.extend(_fabrication(mention, sentence, span) for mention in invented)

    return JudgeResult(
        verdict=verdict_for(claims),
        grounding_score=grounding_score(claims),
        claims=claims,
        fabrications=fabrications,
        rewrite_note=rewrite_note(claims),
        judge=JudgeInfo(
            profile=OFFLINE_PROFILE,
            prompt_version=OFFLINE_VERSION,
            backend="offline",
            model=OFFLINE_MODEL,
            latency_ms=round((time.perf_counter() - started) * 1000),
            attempts=1,
        ),
    )


# --- what counts as a claim -----------------------------------------------------------------


def _is_claim(sentence: str, mentions: list[NumberMention], redirect_words: frozenset[str]) -> bool:
    words = content_words(sentence)
    has_number = bool(mentions)
    if not words and not has_number:
        return False
    if sentence.rstrip().endswith(":") and not has_number:
        return False  # a lead-in such as "Here is what the policy says:" introduces claims
    return has_number or not set(words) <= redirect_words


def _agency_words(passages: list[Passage]) -> frozenset[str]:
    # "Contact Metro for details" is a redirect when Metro is the agency the passages come from.
    return frozenset(word for p in passages if p.agency for word in content_words(p.agency))


# --- labelling ---------------------------------------------------------------------------------


def _judge_sentence(
    claim_id: str, sentence: str, span: Span, sources: list[_Source], invented: list[NumberMention]
) -> Claim:
    terms = key_terms(sentence)
    match = _best_passage(terms, sources)
    return Claim(
        id=claim_id,
        text=sentence,
        answer_span=span,
        label=_label(match.recall, invented),
        category=category_for(sentence),
        evidence=_evidence(terms, match),
        explanation=_explanation(match, invented),
        confidence=round(match.recall, 2),
    )


def _best_passage(terms: frozenset[str], sources: list[_Source]) -> _Match:
    best, best_found = None, frozenset()
    for source in sources:  # strictly greater: ties go to the earlier passage
        found = terms & source.index.terms
        if len(found) > len(best_found):
            best, best_found = source, found
    recall = len(best_found) / len(terms) if terms else 0.0
    return _Match(best, recall, sorted(terms - best_found))


def _label(recall: float, invented: list[NumberMention]) -> str:
    if invented:
        return "UNSUPPORTED"
    if recall >= SUPPORTED_AT:
        return "SUPPORTED"
    if recall >= PARTIALLY_SUPPORTED_AT:
        return "PARTIALLY_SUPPORTED"
    return "UNSUPPORTED"


def category_for(sentence: str) -> str:
    return next((name for name, pattern in CATEGORY_RULES if pattern.search(sentence)), "other")


# --- evidence and explanations -----------------------------------------------------------------


def _evidence(terms: frozenset[str], match: _Match) -> list[Evidence]:
    """The passage sentence that shares the most terms with the claim, quoted exactly.

    Given for partial and unsupported claims too: the closest source sentence is what a reviewer
    needs to confirm or overturn the label. Nothing is quoted when no term matches.
    """
    if match.source is None:
        return []
    span = match.source.index.best_sentence(terms)
    if span is None:
        return []
    passage = match.source.passage
    return [Evidence(passage_id=passage.id, quote=passage.text[span[0]:span[1]], span=span, match="exact")]


def _explanation(match: _Match, invented: list[NumberMention]) -> str:
    parts = []
    if match.source is None:
        parts.append("None of its key words or numbers appear in any passage.")
    else:
        percent = round(match.recall * 100)
        parts.append(f"{percent}% of its key words and numbers appear in {match.source.passage.id}.")
        invented_values = {mention.value for mention in invented}
        missing = [term for term in match.missing_terms if term not in invented_values]
        if missing:
            parts.append("Not there: " + ", ".join(_shown(missing)) + ".")
    for mention in invented:
        parts.append(f"'{mention.text}' appears in no passage.")
    return " ".join(parts)


def _shown(terms: list[str], limit: int = 6) -> list[str]:
    return [f"'{t}'" for t in terms[:limit]] + ([f"{len(terms) - limit} more"] if len(terms) > limit else [])


def _fabrication(mention: NumberMention, sentence: str, sentence_span: Span) -> Fabrication:
    offset = sentence_span[0]
    return Fabrication(
        kind="date" if _is_date(mention, sentence) else "statistic",
        text=mention.text,
        answer_span=(offset + mention.span[0], offset + mention.span[1]),
        reason=f"'{mention.text}' appears in no passage.",
    )


def _is_date(mention: NumberMention, sentence: str) -> bool:
    before = sentence[: mention.span[0]].rstrip()
    after = sentence[mention.span[1]:].lstrip()
    next_to_month = bool(re.search(_MONTH_NAME + "$", before) or re.match(_MONTH_NAME, after))
    return mention.looks_like_year or next_to_month


def rewrite_note(claims: list[Claim]) -> str:
    """The smallest edit that would make the answer grounded, naming claims by id."""
    to_remove = [c.id for c in claims if c.label in ("UNSUPPORTED", "CONTRADICTED")]
    to_narrow = [c.id for c in claims if c.label == "PARTIALLY_SUPPORTED"]
    notes = []
    if to_remove:
        notes.append(f"Remove or source {', '.join(to_remove)}.")
    if to_narrow:
        notes.append(f"Narrow {', '.join(to_narrow)} to what the passages say.")
    return " ".join(notes)
