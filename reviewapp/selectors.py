"""Reads. Views and the API render what these return."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta
from typing import Any, Callable
from uuid import UUID

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import BooleanField, Count, Exists, F, Max, Min, OuterRef, Prefetch, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

import judges
from judges.safe import safe_answer
from judges.types import Claim as ClaimResult
from judges.types import Evidence as EvidenceResult
from reviewapp.models import (Answer, AnswerComment, ApiClient, AuditEvent, Claim, Evidence, Job, JudgeRun,
                              Policy, Review, ReviewPass)
from reviewapp.api.schemas import AnswerState


def answer_status(answer_id: int) -> str | None:
    return Answer.objects.filter(pk=answer_id).values_list("status", flat=True).first()


def answer_for_client(*, client: ApiClient, public_id: str) -> Answer | None:
    """The client's answer by its public id; None for anything else, a primary key included."""
    try:
        public_id = UUID(public_id)
    except ValueError:
        return None
    return Answer.objects.filter(public_id=public_id, client=client).select_related("judged_by").first()


@dataclass(frozen=True)
class ClientAnswerFilters:
    external_id: str | None = None
    status: str | None = None
    verdict: str | None = None
    since: datetime | None = None


class BadCursor(ValueError):
    pass


def client_answers_page(*, client: ApiClient, filters: ClientAnswerFilters, limit: int,
                        cursor: str | None = None) -> tuple[list[Answer], str | None]:
    """The client's own answers, newest first, in keyset pages: (answers, the next page's cursor or
    None). The cursor names the last row by its time and public id, never by its row number, and is
    URL-safe (base64 of the keyset's own cursor)."""
    qs = Answer.objects.filter(client=client)
    if filters.external_id is not None:
        qs = qs.filter(external_id=filters.external_id)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.verdict:
        qs = qs.filter(verdict=filters.verdict)
    if filters.since is not None:
        qs = qs.filter(created_at__gte=filters.since)
    after = ""
    if cursor:
        try:
            after = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        except ValueError:
            after = ""
        if CLIENT_NEWEST.decoded(after) is None:
            raise BadCursor("cursor: not a cursor this API returned (pass next_cursor back unchanged)")
    keys, _, following = keyset_ids(qs, CLIENT_NEWEST, size=limit, after=after)
    rows = {answer.public_id: answer for answer in Answer.objects.filter(public_id__in=keys).select_related("judged_by")}
    token = base64.urlsafe_b64encode(following.encode()).decode().rstrip("=") if following else None
    return [rows[key] for key in keys], token


def posted_answers() -> QuerySet[Answer]:
    """Answers clients posted. Golden-set answers (no client, imported for `evaluate`) are
    measuring material, not traffic: pages and jobs leave them out unless asked."""
    return Answer.objects.exclude(client=None, metadata__has_key="golden")


def rejudge_answer_ids(*, since: date | None, until: date | None, review_status: str, limit: int,
                       include_golden: bool) -> list[int]:
    """The answers a re-judge job takes, newest first: judged or failed ones in the date range."""
    answers = Answer.objects.all() if include_golden else posted_answers()
    answers = answers.filter(status__in=[Answer.Status.JUDGED, Answer.Status.FAILED])
    if since:
        answers = answers.filter(created_at__gte=_day_start(since))
    if until:
        answers = answers.filter(created_at__lt=_day_start(until + timedelta(days=1)))
    if review_status:
        answers = answers.filter(review_status=review_status)
    return list(answers.order_by("-created_at").values_list("pk", flat=True)[:limit])


def judge_in_force(policy) -> str:
    """How the policy judges new answers, as the pages name a run: "offline@v4 (offline)", or
    "claim_audit@v1 (openai, gpt-4o-mini)" (a client may still ask for another profile)."""
    profile = policy.judge_profile or settings.JUDGE_PROFILE
    config = judges.JudgeConfig(backend=policy.judge_backend or settings.JUDGE_BACKEND, profile=profile,
                                model=policy.judge_model or settings.JUDGE_MODEL)
    try:
        judge = judges.identify(config)
    except judges.JudgeError as exc:
        return f"{profile} ({exc})"
    if judge.backend == "offline":  # the offline judge reads no profile and calls no model
        return f"{judge.profile}@{judge.prompt_version} (offline)"
    return f"{judge.profile}@{judge.prompt_version} ({judge.backend}, {judge.model})"


def jobs() -> QuerySet[Job]:
    """Admin jobs, newest first, each with `failed_runs`: the re-judge runs that failed, and
    `answer_ids`: the answers a re-judge ran on (its runs), for the job's row to link to."""
    return Job.objects.select_related("created_by").annotate(
        failed_runs=Count("runs", filter=Q(runs__status=JudgeRun.Status.FAILED)),
        answer_ids=ArrayAgg("runs__answer_id", filter=Q(runs__isnull=False), order_by="runs__answer_id",
                            distinct=True, default=Value([])))


def routed_under_older_policy(current: Policy) -> int:
    """Answers waiting for review or auto-passed under an older policy version than `current`:
    what "Re-route now" would look at again (a policy change routes new judge runs only)."""
    waiting = (Answer.ReviewStatus.IN_REVIEW, Answer.ReviewStatus.AUTO_PASSED)
    return Answer.objects.filter(review_status__in=waiting, policy__version__lt=current.version).count()


def shown_claims(answer: Answer) -> list[Claim]:
    """The claims of the run whose result the answer shows, with their evidence."""
    if answer.judged_by_id is None:
        return []
    return list(
        Claim.objects.filter(run_id=answer.judged_by_id)
        .order_by("position")
        .prefetch_related(Prefetch("evidence", queryset=Evidence.objects.order_by("position")))
    )


def shown_claims_for_review(answer: Answer) -> QuerySet[Claim]:
    """The claims a reviewer sees: the shown run's, plus any a reviewer added."""
    return Claim.objects.filter(answer=answer).filter(
        Q(run_id=answer.judged_by_id) | Q(origin=Claim.Origin.REVIEWER)
    ).exclude(origin=Claim.Origin.REVIEWER, decision="")


def claim_as_result(claim: Claim) -> ClaimResult:
    """A stored claim in the normalized result's shape (DESIGN.md field names)."""
    return ClaimResult(
        id=claim.cid,
        text=claim.text,
        answer_span=(claim.answer_start, claim.answer_end) if claim.answer_start is not None else None,
        label=claim.label,
        category=claim.category,
        evidence=[
            EvidenceResult(
                passage_id=ev.passage_pid,
                quote=ev.quote,
                span=(ev.start, ev.end) if ev.start is not None else None,
                match=ev.match,
                differences=ev.differences,
            )
            for ev in claim.evidence.all()
        ],
        explanation=claim.explanation,
        confidence=claim.confidence,
    )


def latest_failed_run(answer: Answer) -> JudgeRun | None:
    return answer.runs.filter(status=JudgeRun.Status.FAILED).order_by("-started_at", "-id").first()


def claims_as_results(claim_rows: list[dict], evidence_rows: list[dict]) -> list[ClaimResult]:
    """claim_as_result() of claims not read back: the rows the worker is storing (Claim and
    Evidence fields by attname; evidence with the claim's position as claim_position)."""
    evidence: dict[int, list[EvidenceResult]] = {}
    for ev in evidence_rows:
        evidence.setdefault(ev["claim_position"], []).append(EvidenceResult(
            passage_id=ev["passage_pid"], quote=ev["quote"], match=ev["match"],
            span=(ev["start"], ev["end"]) if ev["start"] is not None else None, differences=ev["differences"]))
    return [
        ClaimResult(id=c["cid"], text=c["text"], label=c["label"], category=c["category"],
                    answer_span=(c["answer_start"], c["answer_end"]) if c["answer_start"] is not None else None,
                    evidence=evidence.get(c["position"], []), explanation=c["explanation"], confidence=c["confidence"])
        for c in sorted(claim_rows, key=lambda row: row["position"])
    ]


def answer_state(answer: Answer, claims: list[ClaimResult] | None = None) -> dict[str, Any]:
    """What the API says about an answer: status, verdict, claims, safe answer, error. `claims`:
    those of the run it shows, when the caller has them (claims_as_results)."""
    if claims is None:
        claims = [claim_as_result(c) for c in shown_claims(answer)]
    run = answer.judged_by
    findings = run.findings if run else {}
    failed = latest_failed_run(answer) if answer.status == Answer.Status.FAILED else None
    return {
        "id": answer.public_id,
        "external_id": answer.external_id,
        "session_id": answer.session_id or None,
        "status": answer.status,
        "verdict": answer.verdict or None,
        "grounding_score": answer.grounding_score,
        "claims": [c.model_dump(mode="json") for c in claims],
        "fabrications": findings.get("fabrications", []),
        "omissions": findings.get("omissions", []),
        "rewrite_note": findings.get("rewrite_note", ""),
        "safe_answer": safe_answer(answer.answer, claims) if run else None,
        "error": failed.error if failed else None,
        "judge": _judge_info(run) if run else None,
        "review": {"status": answer.review_status, "reason": answer.routing_reason or None},
        "created_at": answer.created_at,
        "judged_at": answer.judged_at,
    }


def answer_state_json(answer: Answer, claims: list[ClaimResult] | None = None) -> dict[str, Any]:
    """answer_state() as the API and the webhooks send it (JSON types)."""
    return AnswerState.model_validate(answer_state(answer, claims)).model_dump(mode="json")


def _judge_info(run: JudgeRun) -> dict[str, Any]:
    return {
        "profile": run.profile,
        "prompt_version": run.prompt_version,
        "examples": run.prompt_version.partition("+")[2] or None,  # "v3+ex2" -> "ex2"
        "backend": run.backend,
        "model": run.model,
        "latency_ms": run.latency_ms,
        "attempts": run.attempts,
        "usage": {"prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens},
    }


# --- the review queue ------------------------------------------------------------------------

QUEUE_PAGE_SIZE = 50


@dataclass(frozen=True)
class QueueFilters:
    """Filters on answers, for the queue (waiting ones) and /answers/ (every posted one)."""

    label: str = ""
    category: str = ""
    client: str = ""
    since: date | None = None
    until: date | None = None
    profile: str = ""  # name or name@version
    mine: bool = False
    q: str = ""
    status: str = ""  # /answers/: the judging status,
    verdict: str = ""  # the judge's verdict,
    review_status: str = ""  # and where routing sent it

    def active(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))


def queue_answers(*, filters: QueueFilters, user) -> QuerySet[Answer]:
    """Answers waiting for review that match the filters (unordered; see QUEUE_ORDER)."""
    return filtered_answers(Answer.objects.filter(review_status=Answer.ReviewStatus.IN_REVIEW), filters=filters,
                            user=user, waiting_only=True)


def filtered_answers(qs: QuerySet[Answer], *, filters: QueueFilters, user, waiting_only: bool = False) -> QuerySet[Answer]:
    """`qs` narrowed by the filters; `waiting_only`: qs holds only answers waiting for review."""
    shown = Claim.objects.filter(answer=OuterRef("pk"), run=OuterRef("judged_by"))
    if filters.label:
        qs = qs.filter(Exists(shown.filter(label=filters.label)))
    if filters.category:
        qs = qs.filter(Exists(shown.filter(category=filters.category).exclude(label="SUPPORTED")))
    if filters.client:
        # Resolve the name first: filtering through the join would scan the queue in order.
        qs = qs.filter(client_id=ApiClient.objects.filter(name=filters.client).values("pk")[:1])
    # Bounds on created_at itself, not on its date: the planner can use the created_at index (the
    # date cast made "since today" walk the queue in order, a second at 100k answers).
    if filters.since:
        qs = qs.filter(created_at__gte=_day_start(filters.since))
    if filters.until:
        qs = qs.filter(created_at__lt=_day_start(filters.until + timedelta(days=1)))
    if filters.profile:
        name, _, version = filters.profile.partition("@")
        qs = qs.filter(judged_by__profile=name, **({"judged_by__prompt_version": version} if version else {}))
    if filters.mine:  # leased to me, or assigned to me by a lead
        mine = ReviewPass.objects.filter(answer=OuterRef("pk"), reviewer=user, status=ReviewPass.Status.OPEN)
        qs = qs.filter(Exists(mine.filter(Q(lease_expires_at__gte=timezone.now()) | Q(assigned_by__isnull=False))))
    for field in ("status", "verdict", "review_status"):
        if getattr(filters, field):
            qs = qs.filter(**{field: getattr(filters, field)})
    if filters.q:
        qs = _search(qs, filters.q, waiting_only=waiting_only)
    return qs


def _search(qs: QuerySet[Answer], text: str, *, waiting_only: bool) -> QuerySet[Answer]:
    """Answers whose question or answer has every word of `text`, the last one as it is being
    typed: "bicycle fare" finds "bicycle fares" and "fare ... bicycle", "bicyc" finds "bicycle".

    This reads the full-text index of migration 0012 (a stored tsvector, words as Postgres's
    parser splits them, lower-cased), so a page costs about the same for rare and common words.
    """
    words = _search_words(text)
    if not words:  # only punctuation: no word to look for
        return qs.none()
    # A constant tsquery (not a subquery) so the planner weighs the words with the column's
    # statistics: common words walk the queue order and stop at a page, rare ones read the index.
    query = _tsquery(words)
    whole = [(word, prefix) for word, prefix in words if not prefix]
    if whole and len(whole) < len(words):
        # The index reads every row a prefix matches ("cost":* is in every question: 20 ms at 100k
        # answers) even when the whole words match a handful. So ask for the few first: if the
        # whole words match at most SEARCH_FEW answers, those are checked against the full query.
        waiting = "review_status = %s AND " if waiting_only else ""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM reviewapp_answer WHERE {waiting}search_document @@ %s::tsquery LIMIT %s",
                [Answer.ReviewStatus.IN_REVIEW] * waiting_only + [_tsquery(whole), SEARCH_FEW + 1],
            )
            few = [row[0] for row in cursor.fetchall()]
        if len(few) <= SEARCH_FEW:
            # ts_match_vq is the @@ operator as a function: checked on these rows, not planned on the index.
            return qs.filter(pk__in=few).filter(_matches("ts_match_vq({document}, %s::tsquery)", query))
    return qs.filter(_matches("{document} @@ %s::tsquery", query))


def _matches(template: str, query: str) -> RawSQL:
    sql = template.format(document='"reviewapp_answer"."search_document"')
    return RawSQL(sql, [query], output_field=BooleanField())


# See _search: past this many answers holding the whole words, the index does the whole query.
SEARCH_FEW = 200


def _tsquery(words: list[tuple[str, bool]]) -> str:
    return " & ".join(f"'{_tsquery_quoted(word)}'{':*' if prefix else ''}" for word, prefix in words)


def _search_words(text: str) -> list[tuple[str, bool]]:
    """The words of `text` as the index stores them (the same parser and configuration, so "$1.00",
    "e-mail" or "Sec. 4.2" split the same way in the query as in the answers), each with whether
    it matches by its start: only the word(s) that end the text, the one being typed. The others
    must match whole: a prefix of a common word ("ride":* in every answer) makes the index read
    every row holding it, 20 ms at 100k answers, while a whole word costs well under 1 ms."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lower(%s), lexeme, positions[array_upper(positions, 1)]"
            " FROM unnest(to_tsvector('simple'::regconfig, %s)) ORDER BY lexeme",
            [text, text],
        )
        rows = cursor.fetchall()
    if not rows:
        return []
    ending = re.sub(r"\W+$", "", rows[0][0])
    last = max(position for _, _, position in rows)

    def ends_the_text(word: str) -> bool:  # "e-ma" is 'e-ma', 'e' and 'ma': 'e-ma' and 'ma' end it
        return ending.endswith(word) and not ending[: len(ending) - len(word)][-1:].isalnum()

    words = [(word, position == last or ends_the_text(word)) for _, word, position in rows]
    # One letter being typed says nothing yet, and as a prefix ('r':*) it holds nearly every answer:
    # the index would read them all (170 ms at 100k answers). It waits for the next letter, unless
    # it is all there is: then it matches a whole word ("b" finds "plan b").
    typing_short = {word for word, prefix in words if prefix and len(word) < SEARCH_PREFIX_MIN}
    rest = [(word, prefix) for word, prefix in words if word not in typing_short]
    return rest or [(word, False) for word in sorted(typing_short)]


SEARCH_PREFIX_MIN = 2


def _tsquery_quoted(word: str) -> str:
    # Inside a quoted tsquery lexeme a backslash escapes the next character and '' is a quote.
    return word.replace("\\", "\\\\").replace("'", "''")


def _day_start(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=timezone.get_current_timezone())


@dataclass(frozen=True)
class PageOrder:
    """An order to page through by keyset (no OFFSET: deep pages cost what the first does):
    (field, descending, how a cursor's value parses) per key, the primary key last."""

    keys: tuple[tuple[str, bool, Callable[[str], Any]], ...]

    def order_by(self, *, backwards: bool = False) -> list[str]:
        return [("-" if descending != backwards else "") + name for name, descending, _ in self.keys]

    def beyond(self, values: tuple, *, backwards: bool = False) -> Q:
        """Rows after the row with these key values in this order (before it, backwards)."""
        condition, equal = Q(), {}
        for (name, descending, _), value in zip(self.keys, values):
            condition |= Q(**equal, **{f"{name}__{'lt' if descending != backwards else 'gt'}": value})
            equal[name] = value
        return condition

    def cursor(self, values: tuple) -> str:
        return "~".join(v.isoformat() if isinstance(v, datetime) else str(v) for v in values)

    def decoded(self, cursor: str) -> tuple | None:
        """The cursor's key values; None for one this page did not hand out (then: the first page)."""
        parts = cursor.split("~")
        try:
            return tuple(parse(part) for (_, _, parse), part in zip(self.keys, parts, strict=True))
        except ValueError:
            return None


QUEUE_ORDER = PageOrder((("priority", True, int), ("created_at", False, datetime.fromisoformat), ("id", False, int)))
NEWEST_FIRST = PageOrder((("created_at", True, datetime.fromisoformat), ("id", True, int)))
# The API's list: no row numbers in its cursors (the public id breaks ties instead).
CLIENT_NEWEST = PageOrder((("created_at", True, datetime.fromisoformat), ("public_id", True, UUID)))


def keyset_ids(qs: QuerySet, order: PageOrder, *, size: int, after: str = "", before: str = "") -> tuple[list[int], str, str]:
    """One page of primary keys in `order`: (ids, the previous page's `before` cursor, the next
    page's `after` cursor), each "" when there is no such page."""
    names = [name for name, _, _ in order.keys]
    key = order.decoded(before) if before else None
    if key:
        found = list(qs.filter(order.beyond(key, backwards=True)).order_by(*order.order_by(backwards=True))
                     .values_list(*names)[: size + 1])
        earlier, found = len(found) > size, found[:size][::-1]
        return ([row[-1] for row in found], order.cursor(found[0]) if earlier else "",
                order.cursor(found[-1]) if found else "")
    key = order.decoded(after) if after else None
    if key:
        qs = qs.filter(order.beyond(key))
    found = list(qs.order_by(*order.order_by()).values_list(*names)[: size + 1])
    later, found = len(found) > size, found[:size]
    return ([row[-1] for row in found], order.cursor(found[0]) if key and found else "",
            order.cursor(found[-1]) if later else "")


def queue_page(qs: QuerySet[Answer], *, after: str = "") -> tuple[list[Answer], str]:
    """One page in queue order: the rows and the next page's cursor ("" on the last page).

    `after` is the cursor of the previous page's last row.
    """
    # Ids first, then the rows: joined in one query, the planner may walk the whole queue in order
    # instead of using the filter's index (seen with the trigram search at 100k answers: 2 s vs 20 ms).
    ids, _, cursor = keyset_ids(qs, QUEUE_ORDER, size=QUEUE_PAGE_SIZE, after=after)
    return _table_rows(ids, QUEUE_ORDER), cursor


def _table_rows(ids: list[int], order: PageOrder) -> list[Answer]:
    return list(
        Answer.objects.filter(pk__in=ids)
        .select_related("client", "lease_holder", "judged_by")
        # The tables show none of these; a run's raw LLM output and findings can be many KB each.
        .defer("prior_turns", "metadata", "judged_by__raw_output", "judged_by__findings")
        .order_by(*order.order_by())
    )


@dataclass(frozen=True)
class AnswersPage:
    rows: list[Answer]
    previous: str  # the `before` cursor of the page before, or ""
    following: str  # the `after` cursor of the page after, or ""
    total: int
    estimated: bool  # `total` is the planner's estimate (big tables), not a count


ANSWERS_PAGE_SIZE = 50


def answers_page(qs: QuerySet[Answer], *, after: str = "", before: str = "") -> AnswersPage:
    """/answers/: one page, newest first, with the total the filters match."""
    ids, previous, following = keyset_ids(qs, NEWEST_FIRST, size=ANSWERS_PAGE_SIZE, after=after, before=before)
    total, estimated = count_of(qs)
    return AnswersPage(_table_rows(ids, NEWEST_FIRST), previous, following, total, estimated)


def count_of(qs: QuerySet) -> tuple[int, bool]:
    """(rows, estimated): counted on small tables; past EXACT_COUNTS_BELOW answers, the planner's
    estimate, as a count would read every matching row on each page view."""
    if _answer_rows_estimate() < EXACT_COUNTS_BELOW:
        return qs.count(), False
    sql, params = qs.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"]), True


# Exact counts over a big table cost a scan per page view; past this many answers the queue's
# counters are cached for a few seconds instead (they are for orientation, not bookkeeping).
EXACT_COUNTS_BELOW = 20_000
COUNTS_TTL_SECONDS = 15


def _answer_rows_estimate() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = 'reviewapp_answer'::regclass")
        return max(cursor.fetchone()[0], 0)


def counted(key: str, compute):
    """compute() exactly on small tables; cached for COUNTS_TTL_SECONDS on big ones."""
    if _answer_rows_estimate() < EXACT_COUNTS_BELOW:
        return compute()
    return cache.get_or_set(f"claimdesk:{key}", compute, COUNTS_TTL_SECONDS)


def queue_counts(filters: QueueFilters = QueueFilters(), user=None) -> dict[str, int]:
    """Answers by review state, plus those leased right now, among those the filters match."""
    answers = filtered_answers(Answer.objects.all(), filters=filters, user=user) if filters.active() else Answer.objects

    def compute() -> dict[str, int]:
        # count(*), not count(id): the review_status index alone answers it (count(id) reads the table).
        counts = dict(answers.values_list("review_status").annotate(n=Count("*")).order_by())
        counts["leased"] = answers.filter(
            review_status=Answer.ReviewStatus.IN_REVIEW, lease_expires_at__gte=timezone.now()
        ).count()
        counts["failed"] = answers.filter(status=Answer.Status.FAILED).count()
        # Waiting for the judge: not `unrouted`, which golden-set answers (never routed) are too.
        judging = (Answer.Status.QUEUED, Answer.Status.JUDGING)
        counts["not_judged"] = answers.filter(status__in=judging).count()
        return counts

    key = "queue_counts"
    if filters.active():
        # Per user too: "assigned to me" counts differ between reviewers.
        key += ":" + hashlib.sha256(repr((filters, getattr(user, "pk", None))).encode()).hexdigest()[:32]
    return counted(key, compute)


SKIPPED = "answer.skipped"  # the AuditEvent action of a reviewer's skip (services.review.answer_skip)


def skips_today() -> list[tuple[str, int]]:
    """For admins: how many answers each reviewer skipped since midnight (UTC), most first."""
    start_of_day = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    rows = (AuditEvent.objects.filter(action=SKIPPED, created_at__gte=start_of_day)
            .values_list("actor_label").annotate(n=Count("id")).order_by("-n", "actor_label"))
    return list(rows)


def waiting_count() -> int:
    return counted("waiting", lambda: Answer.objects.filter(review_status=Answer.ReviewStatus.IN_REVIEW).count())


def claim_labels_by_answer(answers: list[Answer]) -> dict[int, dict[str, int]]:
    """For the queue rows: how many claims of each flagged label each answer has (one query)."""
    rows = (
        Claim.objects.filter(answer__in=answers, run_id__in=[a.judged_by_id for a in answers if a.judged_by_id])
        .exclude(label="SUPPORTED")
        .values_list("answer_id", "label")
        .annotate(n=Count("id"))
        .order_by()
    )
    result: dict[int, dict[str, int]] = {}
    for answer_id, label, n in rows:
        result.setdefault(answer_id, {})[label] = n
    return result


def answer_comments(answer: Answer) -> list[AnswerComment]:
    """The answer's thread, oldest first, with each author (one query)."""
    return list(AnswerComment.objects.filter(answer=answer).select_related("author").order_by("created_at", "id"))


def standing_reviews(rows: QuerySet[Review]) -> QuerySet[Review]:
    """Of `rows`, the decisions that still stand: not undone, and not undos themselves (an undo
    is not a decision)."""
    return rows.filter(undone_by__isnull=True).exclude(decision=Review.Decision.UNDO)


def current_reviews(rows: QuerySet[Review]) -> QuerySet[Review]:
    """Of `rows`, each reviewer's current decision on each claim in each stage: their latest one
    that still stands, in (claim, reviewer, stage) order. The one definition the review page, the
    exports and the agreement figures share."""
    return (standing_reviews(rows)
            .order_by("claim_id", "reviewer_id", "stage", "-id").distinct("claim_id", "reviewer_id", "stage"))


def current_decisions(answer_id: int, *, stage: str = Review.Stage.REVIEW, reviewer=None) -> list[Review]:
    """Each reviewer's current decision on each claim of the answer in `stage`."""
    rows = Review.objects.filter(answer_id=answer_id, stage=stage)
    if reviewer is not None:
        rows = rows.filter(reviewer=reviewer)
    return list(current_reviews(rows).select_related("reviewer"))


def own_versions(answer: Answer, user) -> dict[int, int]:
    """A reviewer's own version of each claim in a pass of several: how many rows (decisions and
    undos) they wrote on it, which is what their next decision must name."""
    rows = (Review.objects.filter(answer=answer, reviewer=user, stage=Review.Stage.REVIEW)
            .values_list("claim_id").annotate(version=Max("claim_version")).order_by())
    return dict(rows)


def adjudication_queue() -> QuerySet[Answer]:
    """Answers whose reviewers disagree, waiting for a lead, oldest first, each with `disputed`:
    the ids of the claims still without a final label (those the reviewers disagree on)."""
    disputed = ArrayAgg("claims__cid", filter=Q(claims__human_label="", claims__run_id=F("judged_by_id")),
                        order_by="claims__position", default=Value([]))
    return (Answer.objects.filter(review_status=Answer.ReviewStatus.ADJUDICATING).annotate(disputed=disputed)
            .select_related("client", "lease_holder", "judged_by").order_by("-priority", "created_at", "id"))


@dataclass(frozen=True)
class ReviewerProgress:
    username: str
    assigned: int  # answers a lead assigned to them that still wait for their pass
    open: int  # passes they hold now
    done: int  # passes finished
    skipped: int


def reviewer_progress() -> list[ReviewerProgress]:
    """For leads: each reviewer's passes, by state (every pass ever, for their whole history)."""
    open_, finished, skipped = ReviewPass.Status.OPEN, ReviewPass.Status.FINISHED, ReviewPass.Status.SKIPPED
    waiting = Q(answer__review_status=Answer.ReviewStatus.IN_REVIEW)
    rows = (ReviewPass.objects.values("reviewer__username").annotate(
        assigned=Count("pk", filter=Q(status=open_, assigned_by__isnull=False) & waiting),
        open=Count("pk", filter=Q(status=open_, lease_expires_at__gte=timezone.now()) & waiting),
        done=Count("pk", filter=Q(status=finished)),
        skipped=Count("pk", filter=Q(status=skipped)),
    ).order_by("reviewer__username"))
    return [ReviewerProgress(r["reviewer__username"], r["assigned"], r["open"], r["done"], r["skipped"]) for r in rows]


def claim_history(claim: Claim) -> list:
    return list(claim.reviews.select_related("reviewer").order_by("created_at", "id"))


# --- policy preview --------------------------------------------------------------------------

PREVIEW_LIMIT = 200_000  # the newest judged answers in the window (bench: 100k in about a second or two)


def routing_preview(*, current, candidate, days: int) -> dict[str, Any]:
    """How many recently judged answers each policy would send to review, by reason, and some
    answers that would change lane. Uses the routing code itself (decide_route).

    Only flagged claims can change a route, so only they are read, already grouped by the database.
    """
    from reviewapp.policy.routing import decide_route

    since = timezone.now() - timedelta(days=days)
    window = Answer.objects.filter(status=Answer.Status.JUDGED, judged_at__gte=since, judged_by__isnull=False)
    scores = dict(window.order_by("-judged_at").values_list("pk", "grounding_score")[:PREVIEW_LIMIT])
    claims: dict[int, list[tuple[str, str]]] = {}
    flagged = (
        Claim.objects.filter(answer__in=window, run_id=F("answer__judged_by_id"), origin=Claim.Origin.JUDGE)
        .exclude(label="SUPPORTED")
        .values_list("answer_id", "label", "category")
        .annotate(n=Count("id"))
        .order_by()
    )
    for answer_id, label, category, n in flagged:
        claims.setdefault(answer_id, []).extend([(label, category)] * n)
    # SUPPORTED claims matter only below a confidence floor: those are read, one per answer at its
    # lowest confidence (enough to route it; the preview counts answers, not claims).
    floor = max(current.supported_confidence_floor or 0.0, candidate.supported_confidence_floor or 0.0)
    if floor > 0:
        unsure = (
            Claim.objects.filter(answer__in=window, run_id=F("answer__judged_by_id"), origin=Claim.Origin.JUDGE,
                                 label="SUPPORTED", confidence__lt=floor)
            .values_list("answer_id").annotate(lowest=Min("confidence")).order_by()
        )
        for answer_id, lowest in unsure:
            claims.setdefault(answer_id, []).append(("SUPPORTED", "other", lowest))
    sides = {"current": Counter(), "candidate": Counter()}
    totals, several = Counter(), Counter()
    to_review, to_pass = [], []
    for pk, score in scores.items():
        routes = {
            name: decide_route(policy=policy, answer_id=pk, grounding_score=score or 0.0, claims=claims.get(pk, ()))
            for name, policy in (("current", current), ("candidate", candidate))
        }
        for name, route in routes.items():
            if route.review_status == "in_review":
                totals[name] += 1
                sides[name].update(route.kinds)
                several[name] += route.reviews > 1
        lanes = (routes["current"].review_status, routes["candidate"].review_status)
        if lanes == ("auto_passed", "in_review"):
            to_review.append((pk, routes["candidate"].reason))
        elif lanes == ("in_review", "auto_passed"):
            to_pass.append((pk, routes["current"].reason))
    examples = to_review[:5] + to_pass[:5]
    questions = dict(Answer.objects.filter(pk__in=[pk for pk, _ in examples]).values_list("pk", "question"))
    kinds = sorted(set(sides["current"]) | set(sides["candidate"]))
    return {
        "days": days,
        "judged": len(scores),
        "capped": len(scores) == PREVIEW_LIMIT,
        "review_current": totals["current"],
        "review_candidate": totals["candidate"],
        # of those, how many several reviewers would review (Policy.reviewers_per_answer)
        "several_current": several["current"],
        "several_candidate": several["candidate"],
        "by_kind": [(kind, sides["current"][kind], sides["candidate"][kind]) for kind in kinds],
        "to_review": [(pk, questions.get(pk, ""), reason) for pk, reason in to_review[:5]],
        "to_review_count": len(to_review),
        "to_pass": [(pk, questions.get(pk, ""), reason) for pk, reason in to_pass[:5]],
        "to_pass_count": len(to_pass),
    }


# --- worked examples (admins) ------------------------------------------------------------------

EXAMPLE_CANDIDATES_SHOWN = 200


def overturned_claims(*, profile: str = "") -> QuerySet[Claim]:
    """Claims whose current human label differs from the judge's (claims reviewers added are not the
    judge's mistakes), newest decision first; `profile` keeps those of runs of that profile name."""
    qs = (Claim.objects.filter(origin=Claim.Origin.JUDGE).exclude(human_label="").exclude(human_label=F("label"))
          .select_related("run", "answer", "decided_by"))
    if profile:
        qs = qs.filter(run__profile=profile)
    return qs.order_by("-decided_at", "-id")


def overturned_profiles() -> list[str]:
    """The profile names of the runs whose claims were overturned, for the page's filter."""
    return sorted(set(overturned_claims().order_by().values_list("run__profile", flat=True).distinct()))


# --- webhooks (admin page) ----------------------------------------------------------------------

WEBHOOK_PAGE_SIZE = 100


def webhook_endpoints():
    from reviewapp.models import WebhookEndpoint

    return (
        WebhookEndpoint.objects.select_related("client")
        .annotate(
            pending=Count("deliveries", filter=Q(deliveries__status="pending")),
            failed=Count("deliveries", filter=Q(deliveries__status="failed")),
            delivered=Count("deliveries", filter=Q(deliveries__status="delivered")),
        )
        .order_by("removed_at", "-created_at", "-id")
    )


def webhook_deliveries(*, status: str = "", endpoint_id: int | None = None, ids: list[int] | None = None,
                       client: ApiClient | None = None, limit: int = WEBHOOK_PAGE_SIZE) -> list:
    """The newest deliveries, with every attempt: all of them (the admin page) or one client's (the API)."""
    from reviewapp.models import WebhookAttempt, WebhookDelivery

    qs = WebhookDelivery.objects.select_related("endpoint__client").annotate(answer_public_id=F("answer__public_id"))
    if client is not None:
        qs = qs.filter(endpoint__client=client)
    if ids is not None:
        qs = qs.filter(pk__in=ids)
    if status:
        qs = qs.filter(status=status)
    if endpoint_id:
        qs = qs.filter(endpoint_id=endpoint_id)
    return list(
        qs.order_by("-created_at", "-id")
        .prefetch_related(Prefetch("attempt_rows", queryset=WebhookAttempt.objects.order_by("number")))[:limit]
    )
