"""Checks 5-7, trust: passages and answer text that address the judge are no evidence, and a
SUPPORTED claim must rest on a trusted passage.

Prompt injection (issue 9, item 6; judges.injection finds it). Checks 1-4 read the answer with
its invisible characters removed (zero-width spaces, bidi controls, tag characters: a zero-width
space must not hide "fifty percent" from check 2; spans are mapped back to the real answer) and
only the passages that do not address the judge (`trusted_passages`: a passage whose text or
header holds an instruction to the judge, forged data markers or hidden text keeps its id but
supports nothing; the rewrite note names it). Then:

5. **Injection** -- text in the answer that addresses the judge or hides text: the claims over it
   become UNSUPPORTED (a claim is added for it when none covers it).
6. **Evidence** -- a SUPPORTED claim whose found quotes are all in passages that address the
   judge becomes PARTIALLY_SUPPORTED.
7. **Support** -- a SUPPORTED claim with no quote found in a trusted passage (fare_policy and
   sentence_map give none) must have SUPPORT_MIN of its content words (names double; words of
   quantities and provenance statements are checks 2 and 4's) in one trusted passage sentence, else
   PARTIALLY_SUPPORTED. When anything in the request (question, turns, passages, answer) addresses
   the judge, every SUPPORTED claim, quoted or not, needs all of its content words there.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from judges.checks.citations import SILENCE
from judges.checks.findings import Finding
from judges.checks.matching import claim_span
from judges.checks.provenance import provenance_mentions
from judges.checks.spans import Mask
from judges.injection import find_injections, strip_invisible
from judges.text import content_tokens, quantities, split_sentences, stems
from judges.types import Claim, JudgeRequest, JudgeResult, Passage

if TYPE_CHECKING:
    from judges.checks.answer import Answer


# A SUPPORTED claim the judge gave no verified quote for must have at least this weighted share
# of its content words (names count double) in ONE sentence of one trusted passage, or it is
# lowered to PARTIALLY_SUPPORTED. Its cost (python bench/support_check_cost.py: the offline
# judge's SUPPORTED claims with their quotes taken away): at 0.5 it lowers 3.0% (HAGRID) and 4.9%
# (FaithBench) of them, touching 4.5% and 11.9% of the hallucination-free answers; at 0.6 9.2% and
# 15.1% (12.2% and 34.6% of those answers), at 0.7 18.0% and 28.4%. 0.5 still stops a claim made of
# words no passage sentence has ("bought with the GoldWave mobile wallet").
SUPPORT_MIN = 0.5
# When anything in the request addresses the judge, the judge's SUPPORTED is suspect: every
# SUPPORTED claim, quoted or not, must have ALL its content words in one trusted passage sentence.
SUPPORT_MIN_UNDER_ATTACK = 1.0
SUPPORT_NAME_WEIGHT = 2.0
SUPPORT_MIN_WORDS = 3  # claims with fewer content words ("Yes, it is.") are not checked


def trusted_passages(passages: Sequence[Passage]) -> tuple[list[Passage], dict[str, str]]:
    """The passages with those that address the judge emptied, and why each was.

    A passage whose text or header fields hold an instruction to the judge, forged data markers or
    hidden text was written, at least in part, by someone trying to steer the judge, and nothing
    tells which part: none of it is evidence. It keeps its id (a citation of it is not a citation
    of a missing passage) but its text and header say nothing, so no number, quotation, citation
    or provenance statement is supported by it."""
    trusted: list[Passage] = []
    poisoned: dict[str, str] = {}
    for passage in passages:
        reason = _poison_reason(passage)
        if reason is None:
            trusted.append(passage)
            continue
        poisoned[passage.id] = reason
        trusted.append(passage.model_copy(update={
            "text": " ", "tag": None, "agency": None, "title": None, "section": None,
            "source_url": None, "fetched_at": None,
        }))
    return trusted, poisoned


def _poison_reason(passage: Passage) -> str | None:
    found = find_injections(passage.text, passage=True)
    if found:
        return f"its text has {found[0].describe()}"
    for name in ("tag", "agency", "title", "section", "source_url"):
        value = getattr(passage, name)
        if value and (found := find_injections(value)):
            return f"its {name} has {found[0].describe()}"
    return None


def check_answer_injections(answer: Answer) -> list[Finding]:
    """Text in the answer that addresses the judge (or hides text) is no answer to a rider: the
    claims over it become UNSUPPORTED (a claim is added for it when none covers it)."""
    findings = []
    for injection in find_injections(answer.text):
        findings.append(Finding(
            check="injection", span=injection.span, lower_to="UNSUPPORTED", category="other",
            note=f"Injection check: the answer addresses the judge: {injection.describe()}.",
        ))
    return findings


def check_evidence(answer: Answer, result: JudgeResult, poisoned: dict[str, str]) -> list[Finding]:
    """A SUPPORTED claim whose quotes are all found only in passages that address the judge rests
    on the attacker's text: PARTIALLY_SUPPORTED. (Quotes found nowhere are the profiles' concern:
    judges.locate.distrust_unverified_quotes.)"""
    if not poisoned:
        return []
    findings = []
    for claim in result.claims:
        span = claim_span(claim, answer.text)
        found = [e for e in claim.evidence if e.match != "not_found"]
        if claim.label != "SUPPORTED" or span is None or not found:
            continue
        if all(e.passage_id in poisoned for e in found):
            pids = ", ".join(sorted({e.passage_id for e in found}))
            findings.append(Finding(
                check="evidence", span=span, lower_to="PARTIALLY_SUPPORTED", category=claim.category,
                note=f"Evidence check: the judge's quotes are only in {pids}, which addresses the judge.",
            ))
    return findings


def steering_texts(request: JudgeRequest) -> list[str]:
    """The request's texts that are not evidence but reach the judge: question and prior turns."""
    return [request.question, *(turn.content for turn in request.prior_turns)]


def check_support(answer: Answer, result: JudgeResult, under_attack: bool = False) -> list[Finding]:
    """A SUPPORTED claim without a quote found in a trusted passage (fare_policy and sentence_map
    report none; a talked-round judge quotes the answer itself or the attacker's passage) must
    share most of its content words with one sentence of one trusted passage (SUPPORT_MIN, names
    weighing double): the checks look for the quote the judge did not give. Statements that the
    sources are silent and claims of fewer than SUPPORT_MIN_WORDS content words are not checked.
    Lowers to PARTIALLY_SUPPORTED: a word count is a doubt, not a verdict.

    Claims with a verified quote are left to the judge: measured on the dev sets of README.md's
    "Accuracy", checking them too lowered the offline judge's balanced accuracy (FaithBench 0.651
    -> 0.630, HAGRID 0.782 -> 0.748 at 0.6), as one sentence is a narrower window than its own.
    Below SUPPORT_MIN means strictly below: half the words of "Seniors can ride free on holidays"
    pass outside an attack.

    `under_attack` (something in the request addresses the judge): every SUPPORTED claim is
    checked, quoted or not, at SUPPORT_MIN_UNDER_ATTACK. A judge that may have been talked round
    can quote a real sentence that shares most but not all of a fabricated claim's words
    ("Children under 5 ride free" for "Seniors ride free"); a request that tries to steer the
    judge should reach a human anyway."""
    minimum = SUPPORT_MIN_UNDER_ATTACK if under_attack else SUPPORT_MIN
    findings = []
    for claim in result.claims:
        span = claim_span(claim, answer.text)
        if claim.label != "SUPPORTED" or span is None:
            continue
        if not under_attack and _has_trusted_quote(claim, answer.passages):
            continue
        text = strip_invisible(answer.text[slice(*span)])[0]
        if SILENCE.search(text):
            continue
        weights: dict[str, float] = {}
        # Words inside a quantity ("January" of "January 5, 2027") are check 2's to match, in
        # whatever form the passage writes them; a statement of where the information comes from
        # is check 4's, against the headers, which no passage sentence holds.
        inside = Mask(len(text), [q.span for q in quantities(text)]
                       + [m.span for m in provenance_mentions(text, answer.request)])
        for token in content_tokens(text):
            if inside.touches(token.span):
                continue
            weight = SUPPORT_NAME_WEIGHT if token.is_name else 1.0
            weights[token.stem] = max(weights.get(token.stem, 0.0), weight)
        if len(weights) < SUPPORT_MIN_WORDS:
            continue
        total = sum(weights.values())
        best, best_where = 0.0, None
        for passage in answer.passages:
            for sentence, sentence_stems in _sentence_stems(passage.text):
                share = sum(w for stem, w in weights.items() if stem in sentence_stems) / total
                if share > best:
                    best, best_where = share, (passage.id, sentence)
        if best >= minimum - 1e-9:
            continue
        where = f" (closest: {best_where[0]}, \"{_clip(best_where[1])}\")" if best_where else ""
        findings.append(Finding(
            check="support", span=span, lower_to="PARTIALLY_SUPPORTED", category=claim.category,
            note=(f"Support check: at most {best:.0%} of the claim's words are in any one passage "
                  f"sentence{where}{'; the request addresses the judge, so all must be' if under_attack else ''}."),
        ))
    return findings


def _has_trusted_quote(claim: Claim, passages: Sequence[Passage]) -> bool:
    """The judge quoted text that stands in a passage that does not address the judge."""
    trusted = {p.id for p in passages if p.text.strip()}
    return any(e.match != "not_found" and e.passage_id in trusted for e in claim.evidence)


@lru_cache(maxsize=256)
def _sentence_stems(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    clean = strip_invisible(text)[0]
    return tuple((clean[s:e], stems(clean[s:e])) for s, e in split_sentences(clean))


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
