"""ClaimDesk's data model (DESIGN.md, "Data model").

Answer + Passage hold what a client posted; JudgeRun + Claim + Evidence hold what a judge said;
Review holds what a human decided; Policy and AuditEvent are append-only history.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.conf import settings
from django.contrib.postgres.functions import RandomUUID
from django.db import models
from django.db.models import F, Q, Value

from judges.types import CATEGORIES, LABEL_SEVERITY, LABELS, NOT_SUPPORTED_LABELS, VERDICTS
from reviewapp.sealed import SealedCharField, is_sealed


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value.replace("_", " ").capitalize()) for value in values]


LABEL_CHOICES = _choices(LABELS)
CATEGORY_CHOICES = _choices(CATEGORIES)
MATCH_CHOICES = _choices(("exact", "normalized", "fuzzy", "not_found"))
VERDICT_CHOICES = _choices(VERDICTS)


class AppendOnly(models.Model):
    """Rows that are history: written once, never changed or deleted by the application."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise ValueError(f"{type(self).__name__} rows are append-only; write a new row instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError(f"{type(self).__name__} rows are append-only and cannot be deleted")


class ApiClient(models.Model):
    """A client RAG system. Its bearer token is stored only as a SHA-256 hash.

    Tokens are 256 random bits, so a fast hash is enough: there is nothing to brute-force.
    """

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    token_prefix = models.CharField(
        max_length=12, help_text="The token's first characters, to recognise it"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    TOKEN_PREFIX = "cdk_"

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def hash_token(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    @classmethod
    def new_token(cls) -> str:
        return cls.TOKEN_PREFIX + secrets.token_urlsafe(32)


class AnswerQuerySet(models.QuerySet):
    # The review queue's order: highest priority first, then the oldest, the id breaking ties (a
    # total order, so the queue's pages, `n` and the leads' lists agree on which answer is first).
    QUEUE_ORDER = ("-priority", "created_at", "id")

    def in_queue_order(self) -> AnswerQuerySet:
        return self.order_by(*self.QUEUE_ORDER)

    def leased(self, now) -> AnswerQuerySet:
        """Answers whose latest lease is live at `now`."""
        return self.filter(Answer.live_lease(now))


class Answer(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        JUDGING = "judging"
        JUDGED = "judged"
        FAILED = "failed"

    class ReviewStatus(models.TextChoices):
        UNROUTED = "unrouted", "Not routed yet"
        AUTO_PASSED = "auto_passed", "Auto-passed"
        IN_REVIEW = "in_review", "Waiting for review"
        # Every reviewer asked for finished and they disagree on a claim: a lead decides.
        ADJUDICATING = "adjudicating", "Waiting for a lead"
        ADJUDICATED = "adjudicated", "Adjudicated"

    client = models.ForeignKey(
        ApiClient, null=True, blank=True, on_delete=models.PROTECT, related_name="answers"
    )
    # The id clients see (API, its URLs, webhooks): random, so that it tells no client how many
    # answers others post, as the sequential primary key would. Staff pages keep the primary key.
    # Random in the database too, for the ingest's raw INSERT (reviewapp.store), which names no
    # column it leaves to its default.
    public_id = models.UUIDField(
        default=uuid.uuid4, db_default=RandomUUID(), unique=True, editable=False
    )
    external_id = models.CharField(max_length=200, null=True, blank=True)
    question = models.TextField(blank=True)
    answer = models.TextField()
    prior_turns = models.JSONField(default=list, db_default=[], blank=True)
    metadata = models.JSONField(default=dict, db_default={}, blank=True)
    requested_profile = models.CharField(max_length=100, blank=True)
    # SHA-256 of what was posted to be judged (services.ingest.request_hash), so a repeated
    # external_id can tell a client's retry from a new answer; NULL: not known (stored before it).
    request_hash = models.CharField(max_length=64, null=True, blank=True)
    # The conversation the answer is a turn of (the API's `session_id`, OpenInference `session.id`,
    # GenAI `gen_ai.conversation.id`): a client's answers sharing it are one session, in posting
    # order.
    session_id = models.CharField(max_length=200, blank=True, default="", db_default="")

    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, db_default=Status.QUEUED
    )
    # Which delivery of judge_answer owns this answer while it is judging, and until when.
    judging_token = models.UUIDField(null=True, blank=True)
    judging_until = models.DateTimeField(null=True, blank=True)
    # Deliveries lost with their worker (the claim was taken over from a dead holder) and
    # re-enqueues by the sweeper: both are bounded, then the answer fails to a human.
    lost_count = models.PositiveIntegerField(default=0, db_default=0)
    sweep_count = models.PositiveIntegerField(default=0, db_default=0)
    verdict = models.CharField(max_length=20, choices=VERDICT_CHOICES, blank=True, db_default="")
    grounding_score = models.FloatField(null=True, blank=True)
    # The run whose claims this answer shows (the latest successful one).
    judged_by = models.ForeignKey(
        "JudgeRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    review_status = models.CharField(
        max_length=12,
        choices=ReviewStatus.choices,
        default=ReviewStatus.UNROUTED,
        db_default=ReviewStatus.UNROUTED,
    )
    routing_reason = models.CharField(max_length=300, blank=True, db_default="")
    priority = models.IntegerField(default=0, db_default=0, help_text="Higher is reviewed first")
    policy = models.ForeignKey(
        "Policy", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # What the policy asked of this answer's review when it was routed, kept so that a later policy
    # change does not alter answers already routed: how many reviewers, and whether each decides
    # without seeing the others' decisions. Database defaults too: ingest writes with its own
    # INSERT.
    reviews_required = models.PositiveSmallIntegerField(default=1, db_default=1)
    reviews_blind = models.BooleanField(default=True, db_default=True)
    # The latest lease taken on the answer (the only one when one review is asked for; each
    # reviewer's own lease is their ReviewPass), or a lead's while adjudicating.
    lease_holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    adjudicated_verdict = models.CharField(
        max_length=20, choices=VERDICT_CHOICES, blank=True, db_default=""
    )
    # The chance it had of being drawn for the audit sample, when it was (routing_reason "audit
    # sample"): the miss rate weighs each audited answer by its inverse (reviewapp.labels.sampling).
    audit_probability = models.FloatField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    judged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client", "external_id"],
                condition=Q(external_id__isnull=False),
                name="answer_external_id_unique_per_client",
            ),
            models.CheckConstraint(
                condition=Q(grounding_score__isnull=True)
                | Q(grounding_score__gte=0, grounding_score__lte=1),
                name="answer_grounding_score_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(reviews_required__gte=1, reviews_required__lte=3),
                name="answer_reviews_required_1_to_3",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="answer_status_created"),
            # The queue: waiting answers in priority order, oldest first.
            models.Index(
                F("priority").desc(),
                F("created_at").asc(),
                F("id").asc(),
                condition=Q(review_status="in_review"),
                name="answer_queue_order",
            ),
            # "Being reviewed now" and "assigned to me" look at live leases only.
            models.Index(
                fields=["lease_expires_at"],
                condition=Q(review_status="in_review"),
                name="answer_live_leases",
            ),
            # The queue's counters (answers by review state) read this index alone, not the table:
            # 11 ms instead of 95 at 100k answers, paid by one page view in each cache period.
            models.Index(fields=["review_status"], name="answer_review_status"),
            # GET /api/v1/answers: a client's answers, newest first, in keyset pages.
            models.Index(
                fields=["client", "-created_at", "-public_id"], name="answer_client_newest"
            ),
            # A session's turns in order (selectors.session_turns), only answers that name one.
            models.Index(
                fields=["client", "session_id", "created_at"],
                condition=~Q(session_id=""),
                name="answer_session_turns",
            ),
        ]

    objects = AnswerQuerySet.as_manager()

    @staticmethod
    def live_lease(now) -> Q:
        """Somebody holds the answer's latest lease and it has not run out at `now` (release clears
        both fields, so an answer without it is free)."""
        return Q(lease_holder__isnull=False, lease_expires_at__gte=now)

    @staticmethod
    def live_hold(now) -> Q:
        """A worker's hold on the answer (while judging it) that has not run out at `now`; store.py
        takes a lapsed hold over with this rule, compiled into its SQL (store.condition_sql)."""
        return Q(judging_until__gte=now)

    def lease_live(self, now) -> bool:
        """live_lease(now), read on this row in memory."""
        return (
            self.lease_holder_id is not None
            and self.lease_expires_at is not None
            and self.lease_expires_at >= now
        )

    def __str__(self) -> str:
        return f"Answer {self.pk} ({self.status})"


class Passage(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="passages")
    # the client's id: judges.types.passage_id_problem says which
    pid = models.CharField(max_length=100)
    position = models.PositiveIntegerField()
    text = models.TextField()
    tag = models.CharField(max_length=200, blank=True)
    agency = models.CharField(max_length=200, blank=True)
    title = models.CharField(max_length=500, blank=True)
    section = models.CharField(max_length=200, blank=True)
    source_url = models.CharField(max_length=2000, blank=True)
    fetched_at = models.CharField(
        max_length=40, blank=True, help_text="ISO 8601 date or datetime, as sent"
    )
    # The retriever's own view of the passage: shown to reviewers and exported, never judged.
    score = models.FloatField(null=True, blank=True)
    metadata = models.JSONField(default=dict, db_default={}, blank=True)
    # A tool call's output (reviewapp.tools): which tool, which call, with what arguments. The text
    # is the output as rendered; the header fields say where it came from, as for any passage.
    class Kind(models.TextChoices):
        DOCUMENT = "document"
        TOOL = "tool"

    kind = models.CharField(
        max_length=10, choices=Kind.choices, default=Kind.DOCUMENT, db_default=Kind.DOCUMENT
    )
    tool_name = models.CharField(max_length=200, blank=True, default="", db_default="")
    call_id = models.CharField(max_length=200, blank=True, default="", db_default="")
    tool_arguments = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "pid"], name="passage_pid_unique_per_answer"),
            models.UniqueConstraint(
                fields=["answer", "position"], name="passage_position_unique_per_answer"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pid} of answer {self.answer_id}"


class Job(models.Model):
    """A background job an admin started (re-route waiting answers, re-judge a set of answers)."""

    class Kind(models.TextChoices):
        REROUTE = "reroute", "Re-route waiting answers"
        REJUDGE = "rejudge", "Re-judge answers"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    params = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(
        default=0, help_text="re-route: answers whose lane or reason changed"
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, round(100 * self.done / self.total))


class JudgeRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="runs")
    profile = models.CharField(max_length=100)
    prompt_version = models.CharField(max_length=40)
    backend = models.CharField(max_length=20)
    model = models.CharField(max_length=200)
    # profile@version/backend/model: runs of one configuration on one answer supersede each other.
    config_key = models.CharField(max_length=400)
    is_current = models.BooleanField(default=False, db_default=False)
    # Set for a run a re-judge job made: kept beside the answer's own run, for comparison.
    job = models.ForeignKey(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The worked examples its prompt carried (prompt_version then reads e.g. "v3+ex2").
    example_set = models.ForeignKey(
        "ExampleSet", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )

    # Database defaults too: the worker starts a run with a raw INSERT (reviewapp.store).
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.RUNNING, db_default=Status.RUNNING
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0, db_default=0)
    completion_tokens = models.PositiveIntegerField(default=0, db_default=0)
    attempts = models.PositiveIntegerField(default=0, db_default=0)
    raw_output = models.TextField(blank=True, db_default="")
    error = models.TextField(blank=True, db_default="")
    error_is_transient = models.BooleanField(default=False, db_default=False)

    verdict = models.CharField(max_length=20, choices=VERDICT_CHOICES, blank=True, db_default="")
    grounding_score = models.FloatField(null=True, blank=True)
    # The parts of the normalized result that are not claims: fabrications, omissions, rewrite_note.
    findings = models.JSONField(default=dict, db_default={}, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "config_key"],
                condition=Q(is_current=True),
                name="judgerun_one_current_per_answer_and_config",
            ),
            models.CheckConstraint(
                condition=~Q(is_current=True) | Q(status="succeeded"),
                name="judgerun_current_only_when_succeeded",
            ),
            # A job judges each answer once, however often its task is delivered.
            models.UniqueConstraint(
                fields=["job", "answer"],
                condition=Q(job__isnull=False),
                name="judgerun_once_per_job_and_answer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.config_key} on answer {self.answer_id} ({self.status})"

    @staticmethod
    def make_config_key(profile: str, prompt_version: str, backend: str, model: str) -> str:
        return f"{profile}@{prompt_version}/{backend}/{model}"


def _span_check(prefix: str, name: str) -> models.CheckConstraint:
    """Both ends set or both null; 0 <= start <= end. (Upper bounds are checked on write.)"""
    start, end = f"{prefix}start", f"{prefix}end"
    return models.CheckConstraint(
        condition=Q(**{f"{start}__isnull": True, f"{end}__isnull": True})
        | Q(**{f"{start}__gte": 0, f"{end}__gte": F(start)}),
        name=name,
    )


class ClaimDecision(models.TextChoices):
    """How a claim was decided (Claim.Decision); outside the class so its constraint can name
    them."""

    CONFIRM = "confirm"
    OVERTURN = "overturn"
    ADD = "add"


class DecisionMode(models.TextChoices):
    """How a human decision was made: on that claim (a key or a button), or accepted in bulk by
    "Confirm the rest & finish" on claims the reviewer did not act on."""

    EXPLICIT = "explicit"
    BULK = "bulk"


class ConsensusMethod(models.TextChoices):
    """How a claim's final human label was reached: one reviewer's decision (one review asked for),
    every reviewer agreeing, most of them agreeing, or a lead settling a disagreement."""

    SINGLE = "single"
    UNANIMOUS = "unanimous"
    MAJORITY = "majority"
    LEAD = "lead"
    # Several reviewers agreed, but none of them decided the claim: each accepted it by finishing.
    # Never `unanimous`: nobody looked.
    BULK = "bulk"


class Claim(models.Model):
    """A claim as the judge stated it, and (once reviewed) the human decision on it.

    The judge's `label` never changes; `human_label` is the current human decision, and every
    decision is also a Review row. `version` goes up with each decision, so two reviewers (or
    two tabs) deciding at once cannot both win.
    """

    class Origin(models.TextChoices):
        JUDGE = "judge"
        REVIEWER = "reviewer", "Added by a reviewer"

    Decision = ClaimDecision

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="claims")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="claims")
    position = models.PositiveIntegerField()
    cid = models.CharField(max_length=40, help_text="The judge's id for the claim, e.g. c1")
    text = models.TextField()
    answer_start = models.PositiveIntegerField(null=True, blank=True)
    answer_end = models.PositiveIntegerField(null=True, blank=True)
    label = models.CharField(max_length=20, choices=LABEL_CHOICES)
    category = models.CharField(max_length=20, choices=CATEGORY_CHOICES, default="other")
    explanation = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    origin = models.CharField(
        max_length=10, choices=Origin.choices, default=Origin.JUDGE, db_default=Origin.JUDGE
    )

    human_label = models.CharField(max_length=20, choices=LABEL_CHOICES, blank=True, db_default="")
    decision = models.CharField(max_length=10, choices=Decision.choices, blank=True, db_default="")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # blank: undecided. A database default too: the judge writes claims with its own INSERT.
    decision_mode = models.CharField(
        max_length=8, choices=DecisionMode.choices, blank=True, default="", db_default=""
    )
    note = models.TextField(blank=True, db_default="")
    # blank while the claim has no final human label
    consensus_method = models.CharField(
        max_length=10, choices=ConsensusMethod.choices, blank=True, default="", db_default=""
    )
    version = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["position"]
        indexes = [
            models.Index(fields=["answer", "label"], name="claim_answer_label"),
            # The queue's and /answers/' label and category filters (and their counters) ask for
            # the answers with such a claim in their current run: read from these alone, not from
            # every claim's row (reviewapp.review.selectors.filtered_answers).
            models.Index(fields=["label", "answer", "run"], name="claim_label_answer_run"),
            models.Index(fields=["category", "answer", "run"], name="claim_flagged_category",
                         condition=~Q(label="SUPPORTED")),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "position"], name="claim_position_unique_per_run"
            ),
            _span_check("answer_", "claim_answer_span_ordered"),
            # Exports and measurements read these as one of the labels: nothing else may be stored.
            models.CheckConstraint(condition=Q(label__in=LABELS), name="claim_label_known"),
            models.CheckConstraint(
                condition=Q(human_label="") | Q(human_label__in=LABELS),
                name="claim_human_label_known",
            ),
            models.CheckConstraint(
                condition=Q(decision="") | Q(decision__in=ClaimDecision.values),
                name="claim_decision_known",
            ),
            models.CheckConstraint(
                condition=Q(decision_mode="") | Q(decision_mode__in=DecisionMode.values),
                name="claim_decision_mode_known",
            ),
            models.CheckConstraint(
                condition=Q(consensus_method="") | Q(consensus_method__in=ConsensusMethod.values),
                name="claim_consensus_method_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cid}: {self.label}"


class Evidence(models.Model):
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="evidence")
    # Null when the judge named a passage id the answer does not have (itself a finding).
    passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    passage_pid = models.CharField(max_length=100)
    position = models.PositiveIntegerField()
    quote = models.TextField()
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    match = models.CharField(max_length=10, choices=MATCH_CHOICES)
    # The words the judge found differing between the claim and this text (judges.types.Difference,
    # as JSON: kind, span into the passage, answer_span into the answer); [] when it found none or
    # does not say. A database default too: the judge writes evidence with its own INSERT.
    differences = models.JSONField(
        default=list, db_default=Value([], models.JSONField()), blank=True
    )

    class Meta:
        ordering = ["position"]
        verbose_name_plural = "evidence"
        constraints = [
            _span_check("", "evidence_span_ordered"),
            models.CheckConstraint(
                condition=Q(match="not_found", start__isnull=True)
                | (~Q(match="not_found") & Q(start__isnull=False)),
                name="evidence_span_iff_found",
            ),
        ]


class Review(AppendOnly):
    """One human decision on one claim, or the undoing of one. The claim's history, in order."""

    class Reason(models.TextChoices):
        """Why a reviewer overturned the judge: a fixed list a training set can count (the note
        says the rest)."""

        WRONG_VALUE = "wrong_value", "a number, date or name differs from the passage"
        NOT_IN_PASSAGES = "not_in_passages", "the passages do not say it"
        CONTRADICTS = "contradicts", "a passage says otherwise"
        OVERREACHES = "overreaches", "it says more than the passage"
        EVIDENCE_MISSED = "evidence_missed", "the passage does say it: the judge missed it"
        MISREAD = "misread", "the judge misread the claim"
        OTHER = "other", "other (say why in the note)"

    class Decision(models.TextChoices):
        CONFIRM = "confirm"
        OVERTURN = "overturn"
        ADD = "add"
        UNDO = "undo"

    class Stage(models.TextChoices):
        """A reviewer's own pass over the answer, or a lead settling the reviewers' disagreement:
        agreement between reviewers is measured on the first only."""

        REVIEW = "review"
        ADJUDICATION = "adjudication"

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reviews")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    # blank: undecided again
    final_label = models.CharField(max_length=20, choices=LABEL_CHOICES, blank=True)
    note = models.TextField(blank=True)
    claim_version = models.PositiveIntegerField(help_text="The claim's version after this decision")
    decision_mode = models.CharField(
        max_length=8, choices=DecisionMode.choices, default=DecisionMode.EXPLICIT
    )
    stage = models.CharField(
        max_length=12, choices=Stage.choices, default=Stage.REVIEW, db_default=Stage.REVIEW
    )
    reason = models.CharField(
        max_length=20, choices=Reason.choices, blank=True, default="", db_default=""
    )
    # Since the reviewer's previous decision on the answer (or their pass began), at most the lease
    # length; null for a bulk decision (nobody spent time on it), an undo and older rows.
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    undoes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["reviewer", "created_at"], name="review_reviewer_created")]


class NoteDraft(models.Model):
    """A note a reviewer is typing on a claim, saved as typed so a redraw, `Esc`, a move or a
    reload never loses it; it becomes the decision's note when they decide (or finish), and goes."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reviewer", "claim"], name="notedraft_one_per_reviewer_claim"
            ),
        ]
        indexes = [models.Index(fields=["answer", "reviewer"], name="notedraft_answer_reviewer")]


class AnswerComment(AppendOnly):
    """One message in an answer's thread, by a reviewer or a lead (why a label, a question to the
    lead). History like Review: a comment is never edited or deleted, a correction is a new one."""

    BODY_MAX = 4000

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["answer", "created_at"], name="answercomment_thread")]
        constraints = [
            models.CheckConstraint(condition=~Q(body=""), name="answercomment_body_not_empty")
        ]

    def __str__(self) -> str:
        return f"comment {self.pk} on answer {self.answer_id}"


class ReviewPassQuerySet(models.QuerySet):
    def live(self, now) -> ReviewPassQuerySet:
        """Open passes whose lease has not run out at `now`."""
        return self.filter(ReviewPass.live_lease(now))

    def holding_place(self, now) -> ReviewPassQuerySet:
        """Open passes that hold a place on their answer: a live lease, or an assignment by a
        lead."""
        return self.filter(ReviewPass.place_held(now))


class ReviewPass(models.Model):
    """One reviewer's pass over one answer: the reviewer's own lease on it (several reviewers hold
    one answer at once when it needs several reviews) and whether they finished or skipped it.

    A pass takes one of the answer's `reviews_required` places while it is finished, or open with
    a live lease or an assignment; an open pass whose lease ran out gives its place back, and a
    skipped one counts as not reviewed. One row per answer and reviewer: a reviewer is never
    handed an answer twice.
    """

    class Status(models.TextChoices):
        OPEN = "open"
        FINISHED = "finished"
        SKIPPED = "skipped"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="passes")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_passes"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Set when a lead (or an admin) assigned the answer to this reviewer: the place is theirs until
    # they finish or skip, and it comes first in their "next item".
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    assigned_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["started_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "reviewer"], name="reviewpass_one_per_answer_and_reviewer"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "finished", "skipped"]),
                name="reviewpass_status_known",
            ),
        ]
        indexes = [models.Index(fields=["reviewer", "status"], name="reviewpass_reviewer_status")]

    objects = ReviewPassQuerySet.as_manager()

    @staticmethod
    def live_lease(now) -> Q:
        """The pass is open and its lease has not run out at `now`: the one definition of a live
        lease, for passes (Answer.live_lease is the answer's latest lease)."""
        return Q(status=ReviewPass.Status.OPEN, lease_expires_at__gte=now)

    def is_live(self, now) -> bool:
        """live_lease(now), read on this row in memory."""
        return (
            self.status == self.Status.OPEN
            and self.lease_expires_at is not None
            and self.lease_expires_at >= now
        )

    @staticmethod
    def place_held(now) -> Q:
        """The pass holds one of its answer's places at `now`: a live lease, or an open
        assignment by a lead (the place is theirs until they finish or skip)."""
        return ReviewPass.live_lease(now) | Q(
            status=ReviewPass.Status.OPEN, assigned_by__isnull=False
        )

    def holds_place(self, now) -> bool:
        """place_held(now), read on this row in memory."""
        return self.is_live(now) or (
            self.status == self.Status.OPEN and self.assigned_by_id is not None
        )

    def __str__(self) -> str:
        return f"{self.reviewer} on answer {self.answer_id} ({self.status})"


def default_blocking_labels() -> list[str]:
    return sorted(NOT_SUPPORTED_LABELS, key=LABEL_SEVERITY.__getitem__, reverse=True)


def default_critical_categories() -> list[str]:
    return ["price", "age", "document", "date"]


class MultiReviewScope(models.TextChoices):
    """Which answers routed to review get Policy.reviewers_per_answer reviewers (the others one)."""

    ALL = "all", "every answer routed to review"
    CRITICAL = "critical", "answers with a flagged claim in a critical category"
    AUDIT = "audit", "the audit sample"


FIRST_POLICY_NOTE = (
    "Initial policy: the seeds' 0.95 threshold, CONTRADICTED and UNSUPPORTED always reviewed, 5%"
    " audit sample."
)


class Policy(AppendOnly):
    """Routing policy. Versioned: a change is a new row; the highest version is current."""

    version = models.PositiveIntegerField(unique=True)
    score_threshold = models.FloatField(default=0.95)
    blocking_labels = models.JSONField(default=default_blocking_labels)
    critical_categories = models.JSONField(default=default_critical_categories)
    critical_single_claim_blocks = models.BooleanField(default=True)
    audit_sample_rate = models.FloatField(default=0.05)
    # Risk-based audit sampling (reviewapp.policy.routing.audit_probability): a passed answer
    # scoring within audit_near_margin above the threshold, or holding a claim of confidence below
    # audit_confidence_below, is audited with audit_near_rate (when higher), the rest with
    # audit_sample_rate. Zeros: one rate for all, as before.
    audit_near_rate = models.FloatField(default=0.0, db_default=0.0)
    audit_near_margin = models.FloatField(default=0.05, db_default=0.05)
    audit_confidence_below = models.FloatField(default=0.0, db_default=0.0)
    # At most this share of passed answers may hold a human-flagged claim (None: no target); the
    # miss rate's upper bound above it is an alert (reviewapp.labels.missrate).
    miss_rate_target = models.FloatField(null=True, blank=True)
    lease_seconds = models.PositiveIntegerField(default=600)
    # Double review: how many different reviewers each answer in scope needs (1: one review, as
    # before), which answers are in scope, and whether each reviewer decides without seeing the
    # others.
    reviewers_per_answer = models.PositiveSmallIntegerField(default=1, db_default=1)
    multi_review_scope = models.CharField(
        max_length=10,
        choices=MultiReviewScope.choices,
        default=MultiReviewScope.ALL,
        db_default=MultiReviewScope.ALL,
    )
    multi_review_share = models.FloatField(default=1.0, db_default=1.0)
    blind = models.BooleanField(default=True, db_default=True)
    # A SUPPORTED claim below this confidence sends its answer to review (0: never). The checks
    # lower a claim's confidence, not its label, for words its quote lacks (issue 27).
    supported_confidence_floor = models.FloatField(default=0.0, db_default=0.0)
    judge_profile = models.CharField(
        max_length=100, blank=True, help_text="Empty: the JUDGE_PROFILE setting"
    )
    judge_backend = models.CharField(
        max_length=20, blank=True, help_text="Empty: the JUDGE_BACKEND setting"
    )
    judge_model = models.CharField(
        max_length=200, blank=True, help_text="Empty: the JUDGE_MODEL setting"
    )
    # Escalation: a second judge re-judges what the first flagged or scored near the threshold.
    escalation_profile = models.CharField(max_length=100, blank=True)
    escalation_backend = models.CharField(max_length=20, blank=True)
    escalation_model = models.CharField(max_length=200, blank=True)
    escalation_margin = models.FloatField(default=0.05)
    # Worked examples for the judge profile's prompt (only when the set is for that
    # profile@version).
    example_set = models.ForeignKey(
        "ExampleSet",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Empty: the profile's own prompt, no worked examples",
    )
    # Annotation guidelines for reviewers, markdown (rendered without raw HTML), versioned with the
    # rest of the policy: the history says who changed them, when and why.
    guidelines = models.TextField(blank=True, default="", db_default="")
    # Gold answers (reviewapp.quality): the share of "next item"s that hand a reviewer a gold answer
    # they have not seen (0: none), and the gold accuracy below which, once a reviewer has decided
    # gold_min_claims gold claims, they are paused from the live queue.
    gold_rate = models.FloatField(default=0.0, db_default=0.0)
    gold_pause_below = models.FloatField(default=0.8, db_default=0.8)
    gold_min_claims = models.PositiveIntegerField(default=20, db_default=20)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField()

    class Meta:
        ordering = ["-version"]
        verbose_name_plural = "policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(score_threshold__gte=0, score_threshold__lte=1),
                name="policy_threshold_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(audit_sample_rate__gte=0, audit_sample_rate__lte=1),
                name="policy_sample_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(reviewers_per_answer__gte=1, reviewers_per_answer__lte=3),
                name="policy_reviewers_per_answer_1_to_3",
            ),
            models.CheckConstraint(
                condition=Q(multi_review_share__gte=0, multi_review_share__lte=1),
                name="policy_multi_review_share_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(supported_confidence_floor__gte=0, supported_confidence_floor__lte=1),
                name="policy_confidence_floor_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(
                    audit_near_rate__gte=0,
                    audit_near_rate__lte=1,
                    audit_near_margin__gte=0,
                    audit_near_margin__lte=1,
                    audit_confidence_below__gte=0,
                    audit_confidence_below__lte=1,
                ),
                name="policy_audit_sampling_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(miss_rate_target__isnull=True)
                | Q(miss_rate_target__gte=0, miss_rate_target__lte=1),
                name="policy_miss_rate_target_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0, gold_rate__lte=1),
                name="policy_gold_rate_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(gold_pause_below__gte=0, gold_pause_below__lte=1),
                name="policy_gold_pause_below_in_unit_range",
            ),
        ]

    def __str__(self) -> str:
        return f"Policy v{self.version}"

    @classmethod
    def current(cls) -> Policy:
        # Version 1 comes from a migration; recreate it if the table was emptied (test flushes).
        return cls.objects.order_by("-version").first() or cls.objects.get_or_create(
            version=1, defaults={"note": FIRST_POLICY_NOTE}
        )[0]


class AlertState(models.Model):
    """Whether an alert's condition holds, so that it fires once per crossing: it is switched on by
    a conditional UPDATE (of concurrent checks, one fires it) and off when the condition stops."""

    name = models.CharField(max_length=40, unique=True)  # the webhook event, e.g. alert.miss_rate
    active = models.BooleanField(default=False)
    changed_at = models.DateTimeField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)  # the figures of its latest evaluation

    def __str__(self) -> str:
        return f"{self.name} ({'on' if self.active else 'off'})"


class AuditEvent(AppendOnly):
    """Who did what to which object, with its state before and after."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT
    )
    actor_label = models.CharField(max_length=150, help_text="user name, api:<client> or system")
    action = models.CharField(max_length=60)
    object_type = models.CharField(max_length=40)
    object_id = models.CharField(max_length=40)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="auditevent_object")]


class ExampleSet(AppendOnly):
    """Worked examples an admin picked from overturned claims, for one profile version's prompt.

    Frozen: its examples are snapshots, so what a run carried can always be read back, however the
    source claims change later. The prompt version carrying it is `<base_version>+ex<sequence>`.
    """

    profile = models.CharField(max_length=100)
    base_version = models.CharField(max_length=20)
    sequence = models.PositiveIntegerField(help_text="1, 2, ... per profile")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["profile", "-sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "sequence"], name="exampleset_sequence_per_profile"
            )
        ]

    def __str__(self) -> str:
        return f"{self.profile}@{self.version}"

    @property
    def tag(self) -> str:
        return f"ex{self.sequence}"

    @property
    def version(self) -> str:
        return f"{self.base_version}+{self.tag}"

    @property
    def base_spec(self) -> str:
        return f"{self.profile}@{self.base_version}"


class WorkedExample(AppendOnly):
    """One example of a set: a snapshot of an overturned claim, its passage excerpt and the
    labels."""

    example_set = models.ForeignKey(ExampleSet, on_delete=models.PROTECT, related_name="examples")
    position = models.PositiveIntegerField()
    # Where it came from; the snapshot below is what the prompt carries.
    source_claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claim_text = models.TextField()
    passage_pid = models.CharField(max_length=100, blank=True)
    passage_excerpt = models.TextField()
    judge_label = models.CharField(max_length=20, choices=LABEL_CHOICES)
    human_label = models.CharField(max_length=20, choices=LABEL_CHOICES)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["example_set", "position"], name="workedexample_position_per_set"
            ),
            models.CheckConstraint(
                condition=~Q(judge_label=F("human_label")), name="workedexample_is_an_overturn"
            ),
        ]


# --- webhooks --------------------------------------------------------------------------------

# alert.miss_rate is about the passed answers and reviewer.paused about a reviewer, not one answer:
# their deliveries have no answer.
WEBHOOK_EVENTS = (
    "answer.judged",
    "answer.adjudicated",
    "answer.reopened",
    "alert.miss_rate",
    "reviewer.paused",
)


def default_webhook_events() -> list[str]:
    # answer.reopened goes wherever answer.adjudicated goes (webhooks.service.event_record).
    return list(WEBHOOK_EVENTS[:2])


class WebhookEndpoint(models.Model):
    """Where a client wants to be told about its answers. One live endpoint per client.

    The secret must sign every delivery, so unlike the API token it cannot be kept as a hash: it is
    stored sealed (reviewapp/sealed.py, a key derived from SECRET_KEY). After a rotation the
    previous secret also signs, for a grace period, so a receiver can switch over without
    dropping deliveries.
    """

    SECRET_PREFIX = "whsec_"

    client = models.ForeignKey(
        ApiClient, on_delete=models.PROTECT, related_name="webhook_endpoints"
    )
    url = models.CharField(max_length=2000)
    secret = SealedCharField()
    previous_secret = SealedCharField(blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    events = models.JSONField(default=default_webhook_events)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Removed endpoints are kept, with their deliveries, so admins can still see what was sent.
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["client"],
                condition=Q(removed_at__isnull=True),
                name="webhookendpoint_one_live_per_client",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.client} -> {self.url}"

    @classmethod
    def new_secret(cls) -> str:
        return cls.SECRET_PREFIX + secrets.token_urlsafe(32)

    @property
    def secret_hint(self) -> str:
        if is_sealed(self.secret):
            return "(unreadable: SECRET_KEY changed)"
        return self.secret[: len(self.SECRET_PREFIX) + 4] + "…"


class WebhookDelivery(models.Model):
    """One event for one endpoint: its payload is frozen when the event happens; it is sent
    until a 2xx comes back or the attempts run out."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="webhook_deliveries")
    event = models.CharField(max_length=40, choices=_choices(WEBHOOK_EVENTS))
    # The receiver's idempotency key: the same on every attempt of this delivery.
    event_id = models.CharField(max_length=40, unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set while one worker is sending it: nobody else may send it until this passes.
    sending_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # Why it failed without an attempt (e.g. the endpoint was removed); attempts hold their own
    # errors.
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhookdelivery_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.event_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One POST of a delivery. Written before the request goes out and completed after it."""

    ERROR_MAX = 1000

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows"
    )
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    http_status = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(
                fields=["delivery", "number"], name="webhookattempt_number_unique_per_delivery"
            ),
        ]

    @property
    def succeeded(self) -> bool:
        return self.http_status is not None and 200 <= self.http_status < 300


class WorkerHeartbeat(models.Model):
    """The last canary each worker consumed from its own queue (liveness, not just "process up")."""

    hostname = models.CharField(max_length=200, unique=True)
    started_at = models.DateTimeField(null=True, blank=True)
    last_sent_at = models.DateTimeField(
        null=True, blank=True, help_text="last canary sent to its queue"
    )
    last_consumed_at = models.DateTimeField(null=True, blank=True, help_text="last canary it ran")
    consumed = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return self.hostname


class SchedulerHeartbeat(models.Model):
    """When the scheduler (celery beat) last sent the canary dispatch: beat's own liveness, so a
    dead beat is told apart from dead workers (without beat no canaries are sent, none consumed)."""

    name = models.CharField(max_length=50, unique=True)
    last_beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class Comparison(models.Model):
    """A pairwise comparison an admin started (reviewapp.pairwise): two judge configurations on the
    same answers, or two pipelines' answers (metadata variant A and B) to the same question."""

    class Kind(models.TextChoices):
        JUDGES = "judges", "Two judges on the same answers"
        PIPELINES = "pipelines", "Two pipelines (variant A and B) on the same questions"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=200)
    side_a = models.CharField(
        max_length=400, help_text="judges: a run's config_key; pipelines: variant A's name"
    )
    side_b = models.CharField(max_length=400)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class ComparisonItem(models.Model):
    """One pair to decide: for judges, one answer and the two runs; for pipelines, two answers.
    `a_on_left` is drawn when the item is made, so reviewers see the sides shuffled, blind to which
    is which."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    answer_a = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    answer_b = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    run_a = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    run_b = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    a_on_left = models.BooleanField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["comparison", "position"], name="comparison_item_position"
            )
        ]


class ComparisonChoice(models.Model):
    """A reviewer's choice on one unit of an item (a claim whose labels differ, or the whole answer
    for pipelines), stored unblinded: A, B, both right or both wrong."""

    class Choice(models.TextChoices):
        A = "A"
        B = "B"
        BOTH_RIGHT = "both_right", "Both right"
        BOTH_WRONG = "both_wrong", "Both wrong"

    item = models.ForeignKey(ComparisonItem, on_delete=models.CASCADE, related_name="choices")
    unit = models.CharField(
        max_length=40, help_text='"answer", or the claim unit\'s key (selectors.units)'
    )
    category = models.CharField(max_length=20, blank=True)
    choice = models.CharField(max_length=10, choices=Choice.choices)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "unit", "reviewer"], name="comparison_choice_once"
            )
        ]


# --- reviewer quality: gold answers --------------------------------------------------------------


class GoldAnswer(models.Model):
    """An adjudicated answer a lead or an admin marked as gold: its human labels, frozen when it was
    marked, are the truth reviewers are scored against on the copies of it the queue hands out."""

    class Source(models.TextChoices):
        PAGE = "page", "marked on its page"
        IMPORT = "import", "a golden set import"

    answer = models.OneToOneField(Answer, on_delete=models.PROTECT, related_name="gold")
    # The run whose claims are handed out (the answer's shown run; for a golden-set record, the
    # judge's side run on it) and their gold labels, one per judge claim, by position:
    # {"position", "cid", "label", "category"}.
    run = models.ForeignKey(JudgeRun, on_delete=models.PROTECT, related_name="+")
    labels = models.JSONField()
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.PAGE)
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    marked_at = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"gold answer {self.answer_id}"


class GoldCopy(models.Model):
    """A gold answer as handed to one reviewer: a fresh answer (passages, run, claims undecided)
    reviewed through the ordinary page and lease, so nothing tells it from a live one. Scored once
    the reviewer finishes it; never exported as labels, never in anyone else's queue."""

    gold = models.ForeignKey(GoldAnswer, on_delete=models.PROTECT, related_name="copies")
    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="gold_copy")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    served_at = models.DateTimeField(auto_now_add=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["gold", "reviewer"], name="goldcopy_once_per_reviewer")
        ]
        indexes = [models.Index(fields=["reviewer", "scored_at"], name="goldcopy_reviewer_scored")]


class ReviewerPause(models.Model):
    """A reviewer kept from the live queue because their gold accuracy fell below the policy's
    threshold; a lead resumes them after a second look at their live decisions since `since`."""

    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    paused_at = models.DateTimeField(auto_now_add=True)
    accuracy = models.FloatField()
    claims = models.PositiveIntegerField(help_text="gold claims the accuracy was measured on")
    threshold = models.FloatField()
    since = models.DateTimeField(
        help_text="the end of their last good window: live decisions after it get a second look"
    )
    resumed_at = models.DateTimeField(null=True, blank=True)
    resumed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-paused_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["reviewer"],
                condition=Q(resumed_at__isnull=True),
                name="reviewerpause_one_open_per_reviewer",
            )
        ]


# --- evidence-level labels ---------------------------------------------------------------------


class EvidenceMark(models.Model):
    """A reviewer's evidence on one claim: the passage span that supports or contradicts it, and
    the cause when the judge was wrong or the claim is bad. One per reviewer and claim, changed in
    place as they refine it (the decisions' history is Review's; this is a label of its own)."""

    class Stance(models.TextChoices):
        SUPPORTS = "supports"
        CONTRADICTS = "contradicts"

    class Cause(models.TextChoices):
        RETRIEVAL_MISS = "retrieval_miss", "retrieval miss: no passage holds the fact"
        GENERATION_ERROR = (
            "generation_error",
            "generation error: the passages hold it, the answer got it wrong",
        )
        JUDGE_ERROR = "judge_error", "judge error: the judge misread good evidence"

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="evidence_marks")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    # No passage: a cause alone (retrieval_miss has no span to mark).
    passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    stance = models.CharField(max_length=12, choices=Stance.choices, blank=True)
    cause = models.CharField(max_length=20, choices=Cause.choices, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "reviewer"], name="evidencemark_one_per_reviewer_claim"
            ),
            _span_check("", "evidencemark_span_ordered"),
            models.CheckConstraint(
                condition=Q(passage__isnull=True, start__isnull=True, stance="")
                | Q(passage__isnull=False, start__isnull=False, end__gt=F("start")),
                name="evidencemark_span_iff_passage",
            ),
            models.CheckConstraint(
                condition=Q(stance="") | Q(stance__in=["supports", "contradicts"]),
                name="evidencemark_stance_known",
            ),
            models.CheckConstraint(
                condition=Q(cause="")
                | Q(cause__in=["retrieval_miss", "generation_error", "judge_error"]),
                name="evidencemark_cause_known",
            ),
        ]
