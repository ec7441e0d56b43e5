"""Applying the checks: `apply_checks(request, result)` runs every check and lands its findings.

It runs after every backend, with no model, and only ever adds findings: it reads the answer and the
passages itself and adds what it finds to any backend's result (DESIGN.md, "Deterministic checks";
issue 4, item 2). The checks themselves are judges.checks.quotes, .numbers, .citations,
.provenance and .trust.

How findings land: a finding over a claim (by answer span, or by text when the claim has none)
lowers that claim's label -- never raises it (SUPPORTED < PARTIALLY_SUPPORTED < UNSUPPORTED /
CONTRADICTED) -- and appends the finding to its explanation; a provenance statement's finding
(`Finding.alone`) lowers only a claim that states nothing besides it, and the claims around it
take its note while a claim of its own is added for its words. A finding over answer text no claim
covers adds a claim for that text (only when every claim can be placed in the answer; otherwise
the fabrication alone is added). Fabrications and claims are only ever added. When a label
changed or a claim was added, the grounding score and verdict are recomputed with
`judges.scoring` and the less grounded of the backend's and the recomputed ones is kept; a result
to which the checks added a fabrication is never GROUNDED.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from judges.checks.answer import Answer
from judges.checks.bounds import MAX_CLAIMS, check_extent, checked_extent
from judges.checks.citations import check_citations
from judges.checks.findings import Finding
from judges.checks.matching import claim_span, texts_overlap
from judges.checks.numbers import check_numbers
from judges.checks.provenance import check_provenance, states_besides_provenance
from judges.checks.quotes import check_quotations
from judges.checks.spans import Mask, SpanIndex, overlaps
from judges.checks.trust import (
    check_answer_injections, check_evidence, check_support, steering_texts, trusted_passages,
)
from judges.injection import find_injections, original_span, strip_invisible
from judges.scoring import grounding_score, verdict_for
from judges.types import (
    LABEL_SEVERITY,
    NOT_SUPPORTED_LABELS,
    Claim,
    Fabrication,
    JudgeRequest,
    JudgeResult,
    Span,
    worse_verdict,
)

def apply_checks(request: JudgeRequest, result: JudgeResult) -> JudgeResult:
    """`result` with every check's findings added (a new object; `result` is not modified).

    Checks 1-4 read the answer without its invisible characters (judges.injection.strip_invisible:
    a zero-width space must not hide a price from check 2) and only the passages that do not
    address the judge (`trusted_passages`); their spans are mapped back to the real answer.
    Checks 5-7 are about prompt injection and the judge's support for SUPPORTED claims.
    """
    trusted, poisoned = trusted_passages(request.passages)
    clean_text, where = strip_invisible(request.answer)
    # Checks 1-4 read the answer up to where it passes a cap on work (judges.checks.bounds); one
    # finding lowers what lies beyond.
    extent = checked_extent(clean_text)
    read = clean_text if extent.complete else clean_text[:extent.end]
    checked = Answer(request.model_copy(update={"answer": read, "passages": trusted}))
    findings = [
        _remap(finding, where, request.answer)
        for finding in (
            *check_quotations(checked),
            *check_numbers(checked),
            *check_citations(checked),
            *check_provenance(checked),
            *check_extent(clean_text, extent),
        )
    ]
    answer = checked if read == request.answer else Answer(
        request.model_copy(update={"passages": trusted}))
    # So are the claims of a backend's result beyond MAX_CLAIMS: lowered, not read.
    unread = result.claims[MAX_CLAIMS:]
    if unread:
        result = result.model_copy(update={"claims": result.claims[:MAX_CLAIMS]})
    answer_injections = check_answer_injections(answer)
    findings += answer_injections
    findings += check_evidence(answer, result, poisoned)
    findings += check_support(
        answer,
        result,
        under_attack=bool(
            poisoned
            or answer_injections
            or any(find_injections(text) for text in steering_texts(request))
        ),
    )
    checked_result = _apply(findings, answer, result, checked)
    if unread:
        checked_result = _with_unread(checked_result, unread)
    if poisoned:
        listed = "; ".join(f"{pid}: {reason}" for pid, reason in poisoned.items())
        note = (f"Passages that address the judge were not used as evidence by the deterministic "
                f"checks ({listed}).")
        checked_result = checked_result.model_copy(
            update={"rewrite_note": f"{checked_result.rewrite_note} {note}".strip()})
    return checked_result


def _remap(finding: Finding, where: Sequence[int], text: str) -> Finding:
    """A finding made on the answer without invisible characters, placed in the real answer."""
    if where[-1] == len(where) - 1:
        return finding  # nothing was removed
    span = original_span(where, finding.span)
    fabrication = finding.fabrication
    if fabrication is not None and fabrication.answer_span is not None:
        fab_span = original_span(where, fabrication.answer_span)
        fabrication = fabrication.model_copy(
            update={"answer_span": fab_span, "text": text[slice(*fab_span)]}
        )
    return Finding(
        finding.check,
        span,
        finding.note,
        finding.lower_to,
        finding.category,
        fabrication,
        finding.confidence,
    )


MAX_NOTES_PER_CLAIM = 12  # an answer full of findings must not grow one explanation without bound


def _apply(findings: list[Finding], answer: Answer, result: JudgeResult,
           checked: Answer) -> JudgeResult:
    """`checked` is the answer checks 1-4 read (its provenance statements are already found)."""
    if not findings:
        return result
    claims = [claim.model_copy(deep=True) for claim in result.claims]
    fabrications = list(result.fabrications)
    reported = _Reported(len(answer.text), fabrications)
    spans = [claim_span(claim, answer.text) for claim in claims]
    placed = SpanIndex()
    for index, span in enumerate(spans):
        if span is not None:
            placed.add(span, index)
    can_add_claims = all(span is not None for span in spans)
    labels_changed = added_fabrication = confidence_changed = False
    besides: dict[Span, bool] = {}  # claim spans that state more than their provenance statements
    changed: list[str] = []  # ids of claims the checks added or lowered

    # First every claim the findings need is added, then every finding is attached to every claim
    # it overlaps. In one pass a finding would miss a claim that a later finding adds, and checking
    # the result again would attach it then: the checks must be idempotent.
    for finding in findings:
        if finding.fabrication is not None and not reported.has(finding.fabrication):
            fabrications.append(finding.fabrication)
            reported.add(finding.fabrication)
            added_fabrication = True
        if not can_add_claims or finding.lower_to == "SUPPORTED":
            continue
        hits = _hits(finding, answer, claims, spans, placed)
        # A statement of its own inside claims that state more, all SUPPORTED, is a claim of just
        # its words: its finding lowers no fact beside it.
        inside = (finding.alone and hits and not _lowers(finding, checked, hits, spans, besides)
                  and all(claims[i].label == "SUPPORTED" for i in hits))
        if inside or not hits:
            span = finding.span if inside else _uncovered_span(answer, finding.span, placed, spans)
            claims.append(Claim(
                id=_next_claim_id(claims), text=answer.text[slice(*span)], answer_span=span,
                label=finding.lower_to, category=finding.category,
            ))
            spans.append(span)
            placed.add(span, len(claims) - 1)
            labels_changed = True
            changed.append(claims[-1].id)

    # Notes already there count towards the cap, so checking twice adds none.
    notes = {
        i: sum(1 for f in findings if f.note in claim.explanation) for i, claim in enumerate(claims)
    }
    for finding in findings:
        hits = _hits(finding, answer, claims, spans, placed)
        lowers = _lowers(finding, checked, hits, spans, besides)
        for i in hits:
            claim = claims[i]
            # A claim that states more than a statement of its own takes its note, not its label.
            lowered = _lower(claim.label, finding.lower_to) if i in lowers else claim.label
            if lowered != claim.label:
                claim.label = lowered
                labels_changed = True
                if claim.id not in changed:
                    changed.append(claim.id)
            if finding.confidence is not None and (
                claim.confidence is None or finding.confidence < claim.confidence
            ):
                claim.confidence = finding.confidence
                confidence_changed = True
            if notes[i] < MAX_NOTES_PER_CLAIM and finding.note not in claim.explanation:
                claim.explanation = f"{claim.explanation} {finding.note}".strip()
                notes[i] += 1

    score, verdict = result.grounding_score, result.verdict
    if labels_changed or confidence_changed:
        score = min(score, grounding_score(claims))
    if labels_changed:
        verdict = worse_verdict(verdict, verdict_for(claims))
    if added_fabrication and verdict == "GROUNDED":
        verdict = "MOSTLY_GROUNDED"
    return result.model_copy(update={
        "claims": claims,
        "fabrications": fabrications,
        "grounding_score": score,
        "verdict": verdict,
        "rewrite_note": _rewrite_note(result.rewrite_note, [c for c in claims if c.id in changed]),
    })


def _with_unread(result: JudgeResult, unread: list[Claim]) -> JudgeResult:
    """`result` with the claims the checks did not read added back, each lowered to UNSUPPORTED
    with the reason."""
    note = (
        f"Not checked: the result has more than {MAX_CLAIMS:,} claims; the checks read the first"
        f" {MAX_CLAIMS:,}."
    )
    lowered = [
        claim.model_copy(
            update={
                "label": _lower(claim.label, "UNSUPPORTED"),
                "explanation": (
                    claim.explanation
                    if note in claim.explanation
                    else f"{claim.explanation} {note}".strip()
                ),
            }
        )
        for claim in unread
    ]
    claims = [*result.claims, *lowered]
    return result.model_copy(
        update={
            "claims": claims,
            "grounding_score": min(result.grounding_score, grounding_score(claims)),
            "verdict": worse_verdict(result.verdict, verdict_for(claims)),
            "rewrite_note": _rewrite_note(
                result.rewrite_note, [c for c, was in zip(lowered, unread) if c.label != was.label]
            ),
        }
    )


def _hits(finding: Finding, answer: Answer, claims: list[Claim], spans: list[Span | None],
          placed: SpanIndex) -> list[int]:
    """The claims a finding belongs to: those whose span overlaps it, else spanless claims whose
    text shares its text."""
    hits = placed.overlapping(finding.span)
    if not hits:
        hits = [i for i, span in enumerate(spans) if span is None
                and texts_overlap(answer.text[slice(*finding.span)], claims[i].text)]
    return hits


def _lowers(finding: Finding, answer: Answer, hits: list[int], spans: list[Span | None],
            besides: dict[Span, bool]) -> list[int]:
    """Of the claims a finding belongs to (`hits`, from `_hits`), those it lowers: all of them, but
    for a statement of its own (`Finding.alone`) only those that state nothing besides it
    (`besides` keeps what each claim span was found to state)."""
    if not finding.alone:
        return hits
    lowers = []
    for i in hits:
        span = spans[i]
        if span is not None and span not in besides:
            besides[span] = states_besides_provenance(answer, span)
        if span is None or not besides[span]:
            lowers.append(i)
    return lowers


def _lower(label: str, to: str) -> str:
    """`label` lowered to `to` if that is worse (LABEL_SEVERITY); never raised. A claim already
    not supported keeps its label: a check says that a claim lacks support, and does not re-decide
    whether the judge's UNSUPPORTED is a CONTRADICTED (nor the other way round)."""
    if label in NOT_SUPPORTED_LABELS:
        return label
    return to if LABEL_SEVERITY[to] > LABEL_SEVERITY[label] else label


class _Reported:
    """Fabrications already in the result. A new one is already reported when one of the same
    kind covers (at least) the same answer text, or, without a span, has the same text."""

    def __init__(self, length: int, fabrications: list[Fabrication]):
        self.length = length
        self.masks: dict[str, Mask] = {}
        self.unplaced: set[tuple[str, str]] = set()
        for fabrication in fabrications:
            self.add(fabrication)

    def add(self, fabrication: Fabrication) -> None:
        span = fabrication.answer_span
        if span is None or not 0 <= span[0] < span[1] <= self.length:
            self.unplaced.add((fabrication.kind, fabrication.text))
        else:
            self.masks.setdefault(fabrication.kind, Mask(self.length)).add(span)

    def has(self, fabrication: Fabrication) -> bool:
        if fabrication.answer_span is None:
            return (fabrication.kind, fabrication.text) in self.unplaced
        mask = self.masks.get(fabrication.kind)
        return mask is not None and mask.covers(fabrication.answer_span)


def _uncovered_span(
    answer: Answer, target: Span, placed: SpanIndex, spans: list[Span | None]
) -> Span:
    """The stretch of the target's sentence(s) around `target` that no claim covers."""
    sentences = answer.sentence_index.spans_overlapping(target)
    start = min([target[0]] + [s[0] for s in sentences])
    end = max([target[1]] + [s[1] for s in sentences])
    for span in (spans[i] for i in placed.overlapping((start, end))):
        if span is None or overlaps(span, target):
            continue
        if span[1] <= target[0]:
            start = max(start, span[1])
        elif span[0] >= target[1]:
            end = min(end, span[0])
    text = answer.text
    # Trim what joins the stretch to its neighbours: spaces, commas, "and", "but", ...
    while start < target[0]:
        joint = _LEADING_JOINT.match(text, start, target[0])
        if joint is None or joint.end() == start:
            break
        start = joint.end()
    while end > target[1]:
        joint = _TRAILING_JOINT.search(text, target[1], end)
        if joint is None or joint.start() == end:
            break
        end = joint.start()
    return start, end


_JOINT_WORDS = r"and|or|but|so|while|whereas|although|though"
_LEADING_JOINT = re.compile(rf"(?:[\s,;:)]|(?:{_JOINT_WORDS})\b)+", re.IGNORECASE)
_TRAILING_JOINT = re.compile(rf"(?:[\s,;:(]|\b(?:{_JOINT_WORDS}))+$", re.IGNORECASE)


def _next_claim_id(claims: list[Claim]) -> str:
    taken = {claim.id for claim in claims}
    number = len(claims) + 1
    while f"c{number}" in taken:
        number += 1
    return f"c{number}"


def _rewrite_note(note: str, changed: list[Claim]) -> str:
    """The backend's note, plus what to do about each claim the checks added or lowered."""
    to_remove = [c.id for c in changed if c.label in NOT_SUPPORTED_LABELS]
    to_narrow = [c.id for c in changed if c.label == "PARTIALLY_SUPPORTED"]
    if not (to_remove or to_narrow):
        return note
    additions = []
    if to_remove:
        additions.append(f"Remove or source {', '.join(to_remove)} (deterministic checks).")
    if to_narrow:
        additions.append(
            f"Narrow {', '.join(to_narrow)} to what the cited passages say (deterministic checks)."
        )
    return " ".join([note.strip(), *additions]).strip()
