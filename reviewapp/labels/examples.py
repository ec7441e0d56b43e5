"""Worked examples from overturned claims (few-shot beyond the anchors a profile's prompt has).

An admin picks claims whose human label differs from the judge's; `example_set_create` freezes
them into an ExampleSet for one profile version: each example is a snapshot (claim text, a passage
excerpt, both labels, the reason), so the set never changes when its source claims do. A Policy
can then select the set; `worked_examples_for` turns it into what `judges` puts in the prompt.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max
from pydantic import ValidationError

from judges.examples import (
    MAX_CLAIM_CHARS,
    MAX_EXAMPLES,
    MAX_EXCERPT_CHARS,
    MAX_REASON_CHARS,
    WorkedExample as JudgeExample,
    WorkedExamples,
)
from judges.passages import index_passage
from judges.profiles import UnknownProfile, get_profile
from judges.text import key_terms
from reviewapp.models import Claim, ExampleSet, WorkedExample
from reviewapp.labels.selectors import overturned_claims
from reviewapp.audit import audit_record

EXCERPT_CONTEXT = (
    160  # characters kept either side of the evidence (or best sentence) in an excerpt
)


class ExampleSetError(ValueError):
    """The pick cannot become an example set; the message says why, for the admin."""


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _window(text: str, start: int, end: int) -> str:
    """The span with context either side, cut at word boundaries, with … where text was cut."""
    lo, hi = max(0, start - EXCERPT_CONTEXT), min(len(text), end + EXCERPT_CONTEXT)
    if lo > 0:
        lo = text.find(" ", lo, start) + 1 or lo
    if hi < len(text):
        cut = text.rfind(" ", end, hi)
        hi = cut if cut > 0 else hi
    excerpt = ("…" if lo > 0 else "") + text[lo:hi].strip() + ("…" if hi < len(text) else "")
    return _clip(excerpt, MAX_EXCERPT_CHARS)


def passage_excerpt(claim: Claim) -> tuple[str, str]:
    """(passage id, excerpt) for a claim: around its first located evidence span, else around the
    sentence of the passage sharing most words and numbers with the claim."""
    for evidence in claim.evidence.all():
        if evidence.passage is not None and evidence.start is not None:
            return evidence.passage.pid, _window(
                evidence.passage.text, evidence.start, evidence.end
            )
    terms = key_terms(claim.text)
    best, best_span, best_count = None, None, -1
    for passage in claim.answer.passages.all():
        index = index_passage(passage.text)
        count = len(terms & index.terms)
        if count > best_count:
            best, best_count, best_span = passage, count, index.best_sentence(terms)
    if best is None:
        return "", ""
    start, end = best_span or (0, 0)
    return best.pid, _window(best.text, start, end)


def default_reason(claim: Claim) -> str:
    """The reviewer's note, else a plain statement of the overturn."""
    return _clip(claim.note, MAX_REASON_CHARS) if claim.note.strip() else (
        f"Reviewers changed the judge's {claim.label} to {claim.human_label}.")


def example_set_create(
    *,
    user,
    profile: str,
    claim_ids: list[int],
    reasons: dict[int, str] | None = None,
    note: str = "",
) -> ExampleSet:
    """Freeze the picked overturned claims into the next example set of `profile` ("name" for its
    latest version, or "name@version").

    `reasons` overrides a claim's reason (by claim id); blank means the reviewer's note."""
    try:
        spec = get_profile(profile)
    except UnknownProfile as exc:
        raise ExampleSetError(str(exc)) from None
    if not claim_ids:
        raise ExampleSetError("Pick at least one overturned claim.")
    if len(set(claim_ids)) > MAX_EXAMPLES:
        raise ExampleSetError(
            f"Pick at most {MAX_EXAMPLES} claims: a prompt carries no more worked examples."
        )
    # Any judge's overturned claims may teach any profile: the mistake is in the claim, not the
    # prompt.
    candidates = (
        overturned_claims()
        .filter(pk__in=claim_ids)
        .prefetch_related("evidence__passage", "answer__passages")
    )
    picked = {c.pk: c for c in candidates}
    missing = sorted(set(claim_ids) - set(picked))
    if missing:
        raise ExampleSetError(f"Not overturned claims (any more?): {', '.join(map(str, missing))}.")
    reasons = {claim_id: " ".join(text.split()) for claim_id, text in (reasons or {}).items()}
    too_long = [claim_id for claim_id, text in reasons.items() if len(text) > MAX_REASON_CHARS]
    if too_long:
        raise ExampleSetError(
            f"A reason holds at most {MAX_REASON_CHARS} characters; shorten the one for claim "
            f"{too_long[0]}."
        )
    rows = []
    for position, claim_id in enumerate(dict.fromkeys(claim_ids)):  # in the order picked, once each
        claim = picked[claim_id]
        pid, excerpt = passage_excerpt(claim)
        rows.append(
            dict(
                position=position,
                source_claim=claim,
                claim_text=_clip(claim.text, MAX_CLAIM_CHARS),
                passage_pid=pid,
                passage_excerpt=excerpt or "(no passage)",
                judge_label=claim.label,
                human_label=claim.human_label,
                reason=reasons.get(claim_id) or default_reason(claim),
            )
        )
    try:  # the same caps the judge applies, checked before anything is stored
        _as_judge_examples("ex1", rows)
    except ValidationError as exc:
        raise ExampleSetError(
            f"These examples do not fit in a prompt: {exc.errors()[0]['msg']}"
        ) from None
    return _store(
        user=user, profile=spec.name, base_version=spec.version, rows=rows, note=note.strip()
    )


def _store(*, user, profile: str, base_version: str, rows: list[dict], note: str) -> ExampleSet:
    for attempt in range(3):  # two admins at once: the unique sequence decides, then retry
        try:
            with transaction.atomic():
                last = (
                    ExampleSet.objects.filter(profile=profile).aggregate(n=Max("sequence"))["n"]
                    or 0
                )
                example_set = ExampleSet.objects.create(
                    profile=profile,
                    base_version=base_version,
                    sequence=last + 1,
                    created_by=user,
                    note=note,
                )
                WorkedExample.objects.bulk_create(
                    WorkedExample(example_set=example_set, **row) for row in rows
                )
                audit_record(
                    actor=user,
                    actor_label=user.get_username(),
                    action="example_set.created",
                    obj=example_set,
                    note=note,
                    after={
                        "set": str(example_set),
                        "claims": [row["source_claim"].pk for row in rows],
                    },
                )
                return example_set
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _as_judge_examples(tag: str, rows) -> WorkedExamples:
    return WorkedExamples(
        tag=tag,
        items=tuple(
            JudgeExample(
                claim=row["claim_text"],
                passage=row["passage_excerpt"],
                label=row["human_label"],
                judge_label=row["judge_label"],
                reason=row["reason"],
            )
            for row in rows
        ),
    )


def worked_examples_for(example_set: ExampleSet) -> WorkedExamples:
    """The frozen set as the judge library takes it."""
    rows = example_set.examples.values(
        "claim_text", "passage_excerpt", "human_label", "judge_label", "reason"
    )
    return _as_judge_examples(example_set.tag, rows)


def example_set_in_force(policy, profile: str) -> ExampleSet | None:
    """The policy's example set, when it was made for the profile version about to judge (a client
    asking for another profile, or another version of it, gets that profile's plain prompt)."""
    example_set = policy.example_set
    if example_set is None:
        return None
    try:
        spec = get_profile(profile)
    except UnknownProfile:
        return None
    return (
        example_set
        if (spec.name, spec.version) == (example_set.profile, example_set.base_version)
        else None
    )


def example_set_named(name: str) -> ExampleSet:
    """A set by its name as runs and pages show it: "fare_policy@v3+ex2"."""
    profile, _, version = name.partition("@")
    base, _, tag = version.partition("+")
    found = ExampleSet.objects.filter(
        profile=profile,
        base_version=base,
        sequence=int(tag[2:]) if tag[:2] == "ex" and tag[2:].isdigit() else -1,
    ).first()
    if found is None:
        known = ", ".join(str(s) for s in ExampleSet.objects.all()[:20]) or "none yet"
        raise ExampleSetError(f"no example set named {name!r} (NAME@VERSION+exN); sets: {known}")
    return found


def example_set_of(identity) -> ExampleSet | None:
    """The set a judge identity carries (its prompt version ends in +exN), for the run to name."""
    if not identity.examples:
        return None
    return example_set_named(f"{identity.profile}@{identity.prompt_version}")


def example_set_problem(example_set: ExampleSet, *, profile: str, backend: str) -> str:
    """Why a judge of this profile and backend would not carry the set ("" when it would), so a form
    refuses the choice instead of saving one that is silently ignored."""
    if backend == "offline":
        return ("The offline judge reads no prompt, so it cannot carry worked examples: "
                "choose the openai backend, or no examples.")
    try:
        spec = get_profile(profile)
    except UnknownProfile:
        return ""  # the profile field says what is wrong
    if (spec.name, spec.version) != (example_set.profile, example_set.base_version):
        return (
            f"{example_set} was made for {example_set.base_spec}; the judge profile is"
            f" {spec.name}@{spec.version}. Choose that profile, or another set."
        )
    return ""
