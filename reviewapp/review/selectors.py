"""The reviewers' reads: the queue and /answers/ (filters, search, pages, counts), the decisions
that stand, adjudication and the leads' progress table."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import BooleanField, Count, Exists, F, Max, OuterRef, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db import connection
from django.utils import timezone

from reviewapp.db.counts import count_of, counted
from reviewapp.db.keyset import PageOrder, keyset_ids
from reviewapp.models import (
    Answer,
    AnswerComment,
    AnswerQuerySet,
    ApiClient,
    AuditEvent,
    Claim,
    JudgeRun,
    Review,
    ReviewPass,
)
from reviewapp.quality.selectors import live


def posted_answers() -> QuerySet[Answer]:
    """Answers clients posted. Golden-set answers (no client, imported for `evaluate`) are
    measuring material, not traffic: pages and jobs leave them out unless asked."""
    return live(Answer.objects.exclude(client=None, metadata__has_key="golden"))


def shown_claims_for_review(answer: Answer) -> QuerySet[Claim]:
    """The claims a reviewer sees: the shown run's, plus any a reviewer added."""
    return Claim.objects.filter(answer=answer).filter(
        Q(run_id=answer.judged_by_id) | Q(origin=Claim.Origin.REVIEWER)
    ).exclude(origin=Claim.Origin.REVIEWER, decision="")


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
    """Answers waiting for review that match the filters (unordered; see
    AnswerQuerySet.in_queue_order)."""
    return filtered_answers(
        live(Answer.objects.filter(review_status=Answer.ReviewStatus.IN_REVIEW)),
        filters=filters,
        user=user,
        waiting_only=True,
    )


def filtered_answers(
    qs: QuerySet[Answer], *, filters: QueueFilters, user, waiting_only: bool = False
) -> QuerySet[Answer]:
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
        qs = qs.filter(created_at__gte=day_start(filters.since))
    if filters.until:
        qs = qs.filter(created_at__lt=day_start(filters.until + timedelta(days=1)))
    if filters.profile:
        name, _, version = filters.profile.partition("@")
        qs = qs.filter(
            judged_by__profile=name, **({"judged_by__prompt_version": version} if version else {})
        )
    if filters.mine:  # leased to me, or assigned to me by a lead
        mine = ReviewPass.objects.filter(answer=OuterRef("pk"), reviewer=user).holding_place(
            timezone.now()
        )
        qs = qs.filter(Exists(mine))
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
                f"SELECT id FROM reviewapp_answer WHERE {waiting}search_document @@ %s::tsquery"
                " LIMIT %s",
                [Answer.ReviewStatus.IN_REVIEW] * waiting_only + [_tsquery(whole), SEARCH_FEW + 1],
            )
            few = [row[0] for row in cursor.fetchall()]
        if len(few) <= SEARCH_FEW:
            # ts_match_vq is the @@ operator as a function: checked on these rows, not planned on
            # the index.
            return qs.filter(pk__in=few).filter(
                _matches("ts_match_vq({document}, %s::tsquery)", query)
            )
    return qs.filter(_matches("{document} @@ %s::tsquery", query))


def _matches(template: str, query: str) -> RawSQL:
    sql = template.format(document='"reviewapp_answer"."search_document"')
    return RawSQL(sql, [query], output_field=BooleanField())


# See _search: past this many answers holding the whole words, the index does the whole query.
SEARCH_FEW = 200


def _tsquery(words: list[tuple[str, bool]]) -> str:
    return " & ".join(
        f"'{_tsquery_quoted(word)}'{':*' if prefix else ''}" for word, prefix in words
    )


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


def day_start(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=timezone.get_current_timezone())


# the keyset form of in_queue_order()
QUEUE_ORDER = PageOrder.of(Answer, AnswerQuerySet.QUEUE_ORDER)


NEWEST_FIRST = PageOrder((("created_at", True, datetime.fromisoformat), ("id", True, int)))


def queue_page(qs: QuerySet[Answer], *, after: str = "") -> tuple[list[Answer], str]:
    """One page in queue order: the rows and the next page's cursor ("" on the last page).

    `after` is the cursor of the previous page's last row.
    """
    # Ids first, then the rows: joined in one query, the planner may walk the whole queue in order
    # instead of using the filter's index (seen with the trigram search at 100k answers: 2 s vs 20
    # ms).
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
    ids, previous, following = keyset_ids(
        qs, NEWEST_FIRST, size=ANSWERS_PAGE_SIZE, after=after, before=before
    )
    total, estimated = count_of(qs)
    return AnswersPage(_table_rows(ids, NEWEST_FIRST), previous, following, total, estimated)


def queue_counts(filters: QueueFilters = QueueFilters(), user=None) -> dict[str, int]:
    """Answers by review state, plus those leased right now, among those the filters match."""
    answers = (
        filtered_answers(Answer.objects.all(), filters=filters, user=user)
        if filters.active()
        else Answer.objects
    )

    def compute() -> dict[str, int]:
        if filters.active():
            return _filtered_counts(answers)
        # count(*), not count(id): the review_status index alone answers it (count(id) reads the
        # table).
        counts = dict(answers.values_list("review_status").annotate(n=Count("*")).order_by())
        counts["leased"] = (
            answers.filter(review_status=Answer.ReviewStatus.IN_REVIEW)
            .leased(timezone.now())
            .count()
        )
        counts["failed"] = answers.filter(status=Answer.Status.FAILED).count()
        # Waiting for the judge: not `unrouted`, which golden-set answers (never routed) are too.
        judging = (Answer.Status.QUEUED, Answer.Status.JUDGING)
        counts["not_judged"] = answers.filter(status__in=judging).count()
        return counts

    key = "queue_counts"
    if filters.active():
        # Per user too: "assigned to me" counts differ between reviewers.
        key += (
            ":"
            + hashlib.sha256(repr((filters, getattr(user, "pk", None))).encode()).hexdigest()[:32]
        )
    return counted(key, compute)


def _filtered_counts(answers: QuerySet[Answer]) -> dict[str, int]:
    """queue_counts' counters of filtered answers in one pass: each filter (a label's or a
    category's claims, a search) is a join every counter would repeat, four times its cost (92 of
    the 221 ms of SQL of /queue/?label=PARTIALLY_SUPPORTED at 10k answers). Unfiltered, the
    counters' own indexes answer each of them faster than one pass over the table."""
    in_review = Q(review_status=Answer.ReviewStatus.IN_REVIEW)
    counts = answers.aggregate(
        **{
            status: Count("pk", filter=Q(review_status=status))
            for status in Answer.ReviewStatus.values
        },
        leased=Count("pk", filter=in_review & Answer.live_lease(timezone.now())),
        failed=Count("pk", filter=Q(status=Answer.Status.FAILED)),
        not_judged=Count("pk", filter=Q(status__in=(Answer.Status.QUEUED, Answer.Status.JUDGING))),
    )
    return {key: n for key, n in counts.items() if n or key in ("leased", "failed", "not_judged")}


SKIPPED = (
    "answer.skipped"  # the AuditEvent action of a reviewer's skip (services.review.answer_skip)
)


def skips_today() -> list[tuple[str, int]]:
    """For admins: how many answers each reviewer skipped since midnight (UTC), most first."""
    start_of_day = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    rows = (AuditEvent.objects.filter(action=SKIPPED, created_at__gte=start_of_day)
            .values_list("actor_label").annotate(n=Count("id")).order_by("-n", "actor_label"))
    return list(rows)


def waiting_count() -> int:
    return counted(
        "waiting",
        lambda: Answer.objects.filter(review_status=Answer.ReviewStatus.IN_REVIEW).count(),
    )


def claim_labels_by_answer(answers: list[Answer]) -> dict[int, dict[str, int]]:
    """For the queue rows: how many claims of each flagged label each answer has (one query)."""
    rows = (
        Claim.objects.filter(
            answer__in=answers, run_id__in=[a.judged_by_id for a in answers if a.judged_by_id]
        )
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
    return list(
        AnswerComment.objects.filter(answer=answer)
        .select_related("author")
        .order_by("created_at", "id")
    )


def standing_reviews(rows: QuerySet[Review]) -> QuerySet[Review]:
    """Of `rows`, the decisions that still stand: not undone, and not undos themselves (an undo
    is not a decision). "Not undone" asks the undo rows only (the unique index's few entries with
    an undoes_id): as the reverse relation's LEFT JOIN, Postgres hashed every review for it, 30 of
    the 53 ms of counting a day's decisions among 100k reviews."""
    undoing = Review.objects.filter(undoes__isnull=False, undoes_id=OuterRef("pk"))
    return rows.filter(~Exists(undoing)).exclude(decision=Review.Decision.UNDO)


def current_reviews(rows: QuerySet[Review]) -> QuerySet[Review]:
    """Of `rows`, each reviewer's current decision on each claim in each stage: their latest one
    that still stands, in (claim, reviewer, stage) order. The one definition the review page, the
    exports and the agreement figures share."""
    return (
        standing_reviews(rows)
        .order_by("claim_id", "reviewer_id", "stage", "-id")
        .distinct("claim_id", "reviewer_id", "stage")
    )


def current_decisions(
    answer_id: int, *, stage: str = Review.Stage.REVIEW, reviewer=None
) -> list[Review]:
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
    disputed = ArrayAgg(
        "claims__cid",
        filter=Q(claims__human_label="", claims__run_id=F("judged_by_id")),
        order_by="claims__position",
        default=Value([]),
    )
    return (
        Answer.objects.filter(review_status=Answer.ReviewStatus.ADJUDICATING)
        .annotate(disputed=disputed)
        .select_related("client", "lease_holder", "judged_by")
        .in_queue_order()
    )


@dataclass(frozen=True)
class ReviewerProgress:
    username: str
    assigned: int  # answers a lead assigned to them that still wait for their pass
    open: int  # passes they hold now
    done: int  # passes finished
    skipped: int


def reviewer_progress() -> list[ReviewerProgress]:
    """For leads: each reviewer's passes, by state (every pass ever, for their whole history)."""
    open_, finished, skipped = (
        ReviewPass.Status.OPEN,
        ReviewPass.Status.FINISHED,
        ReviewPass.Status.SKIPPED,
    )
    waiting = Q(answer__review_status=Answer.ReviewStatus.IN_REVIEW)
    rows = (ReviewPass.objects.values("reviewer__username").annotate(
        assigned=Count("pk", filter=Q(status=open_, assigned_by__isnull=False) & waiting),
        open=Count("pk", filter=ReviewPass.live_lease(timezone.now()) & waiting),
        done=Count("pk", filter=Q(status=finished)),
        skipped=Count("pk", filter=Q(status=skipped)),
    ).order_by("reviewer__username"))
    return [
        ReviewerProgress(r["reviewer__username"], r["assigned"], r["open"], r["done"], r["skipped"])
        for r in rows
    ]


def claim_history(claim: Claim) -> list:
    return list(claim.reviews.select_related("reviewer").order_by("created_at", "id"))


@dataclass(frozen=True)
class ComparedClaim:
    """One row of two runs side by side: the answer's own run's claim and the other run's claim
    on the same answer text (either may be missing: a claim only one judge found)."""

    shown: Claim | None
    other: Claim | None

    @property
    def differs(self) -> bool:
        return self.shown is None or self.other is None or self.shown.label != self.other.label


def _overlap(a: Claim, b: Claim) -> int:
    if None in (a.answer_start, a.answer_end, b.answer_start, b.answer_end):
        return int(a.text.strip() == b.text.strip())
    return max(0, min(a.answer_end, b.answer_end) - max(a.answer_start, b.answer_start))


def run_comparison(answer: Answer, other: JudgeRun) -> list[ComparedClaim]:
    """The answer's own run's claims beside `other`'s (a re-judge's, an escalation's first judge),
    each paired with the other claim covering most of the same answer text, in answer order."""
    def judge_claims(run_id: int | None) -> list[Claim]:
        return list(
            Claim.objects.filter(run_id=run_id, origin=Claim.Origin.JUDGE).order_by("position")
        )

    others = judge_claims(other.pk)
    rows = []
    for claim in judge_claims(answer.judged_by_id) if answer.judged_by_id else []:
        best = max(others, key=lambda o: _overlap(claim, o), default=None)
        if best is not None and _overlap(claim, best) > 0:
            others.remove(best)
            rows.append(ComparedClaim(claim, best))
        else:
            rows.append(ComparedClaim(claim, None))
    rows += [ComparedClaim(None, o) for o in others]

    def place(row: ComparedClaim) -> tuple[int, int]:
        claim = row.shown or row.other
        return (
            claim.answer_start if claim.answer_start is not None else len(answer.answer),
            claim.position,
        )

    return sorted(rows, key=place)


# --- what a reviewer may see ---------------------------------------------------------------------


def multi_review(answer: Answer) -> bool:
    """Whether the answer's reviewers decide apart, each in their own pass (several reviews asked
    for)."""
    return answer.reviews_required > 1


def has_finished(user, answer: Answer) -> bool:
    """Whether `user` finished a pass on `answer`."""
    return ReviewPass.objects.filter(
        answer=answer, reviewer=user, status=ReviewPass.Status.FINISHED
    ).exists()


def blind_to_others(user, answer: Answer) -> bool:
    """Whether `user` must not see the other reviewers' decisions and comments on `answer` yet:
    several reviews asked for, blind, still waiting for review, and `user` has not finished."""
    return (
        multi_review(answer)
        and answer.reviews_blind
        and answer.review_status == Answer.ReviewStatus.IN_REVIEW
        and not has_finished(user, answer)
    )


def pending_claims(answer: Answer) -> QuerySet[Claim]:
    """Flagged judge claims nobody has decided yet: the answer is adjudicated when none are left."""
    return (
        shown_claims_for_review(answer)
        .filter(origin=Claim.Origin.JUDGE, decision="")
        .exclude(label="SUPPORTED")
    )


@dataclass(frozen=True)
class SeenClaims:
    """An answer's claims as one reviewer may see them (claims_seen_by)."""

    claims: list[Claim]
    multi: bool  # several reviewers decide apart
    # the other reviewers' decisions, history and comments are hidden from this one for now
    blind: bool
    pending: int  # flagged claims still to decide (in a pass of several: by this reviewer)


def claims_seen_by(user, answer: Answer) -> SeenClaims:
    """The claims a reviewer sees, fitted to what they may see (in memory; nothing is saved). One
    review asked for: as stored. Several: while the answer waits for review, each claim shows the
    user's own decision; blind, until they finish, none of the others' decisions or history. Once
    the others' decisions may be seen, each claim carries `pass_decisions`, every reviewer's."""
    claims = list(shown_claims_for_review(answer).select_related("decided_by")
                  .prefetch_related("evidence", "reviews__reviewer"))
    multi = multi_review(answer)
    waiting = answer.review_status == Answer.ReviewStatus.IN_REVIEW
    blind = blind_to_others(user, answer)
    if multi and waiting:
        mine = {r.claim_id: r for r in current_decisions(answer.pk, reviewer=user)}
        versions = own_versions(answer, user)
        for claim in claims:
            own = mine.get(claim.pk)
            claim.human_label, claim.decision = (own.final_label, own.decision) if own else ("", "")
            claim.note, claim.decision_mode = (own.note, own.decision_mode) if own else ("", "")
            claim.decided_by = user if own else None
            claim.version = versions.get(claim.pk, 0)
    others: dict[int, list] = {}
    if multi and not blind:
        for review in current_decisions(answer.pk):
            others.setdefault(review.claim_id, []).append(review)
    for claim in claims:
        claim.shown_history = [
            r for r in claim.reviews.all() if not blind or r.reviewer_id == user.pk
        ]
        claim.pass_decisions = others.get(claim.pk, [])
        labels = {r.final_label for r in claim.pass_decisions}
        claim.reviewers_disagree = len(labels) > 1
    if multi:
        pending = sum(
            1 for c in claims if not c.decision and (c.label != "SUPPORTED" or not waiting)
        )
    else:
        pending = pending_claims(answer).count()
    return SeenClaims(claims, multi, blind, pending)


def comments_seen_by(
    user, answer: Answer, *, blind: bool | None = None
) -> tuple[list[AnswerComment], int]:
    """The answer's thread as `user` may see it, and how many comments it hides: a blind reviewer
    sees only their own until they finish. `blind`: blind_to_others, when the caller knows it."""
    if blind is None:
        blind = blind_to_others(user, answer)
    thread = answer_comments(answer)
    shown = [c for c in thread if c.author_id == user.pk] if blind else thread
    return shown, len(thread) - len(shown)
