"""Calibration: the judge measured against its reviewers (reads only).

Agreement is over adjudicated claims: judge claims a reviewer decided (confirm or overturn) on the
claim itself. Claims "Confirm the rest & finish" accepted in bulk were not looked at: counted as
agreement they inflate kappa and flag precision, so they are left out and their share shown beside.
Claims a reviewer added are the judge's misses; they count on the audit sample, where the
false-negative rate is measured (answers the policy would have passed, reviewed anyway). Each
judge is also measured apart against final labels one reviewer gave and against those several
reviewers reached (unanimous, majority, or a lead's settlement). Agreement between reviewers
themselves is reviewapp.labels.reviewer_agreement's; kappa and the other statistics,
reviewapp.labels.agreement's.

The pure functions (confusion matrix, kappa, flag precision and recall, drift band, chart
geometry) need no database; the selectors below them feed the /calibration/ page.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Exists, OuterRef, Q
from django.db.models.functions import TruncDate, TruncWeek
from django.utils import timezone

from judges.eval import Confusion, precision_recall_f1
from judges.types import LABELS
from reviewapp.labels import agreement
from reviewapp.labels.agreement import Matrix, cohen_kappa, raw_agreement
from reviewapp.models import Answer, Claim, ConsensusMethod, DecisionMode, Evidence
from reviewapp.quality.selectors import live, live_claims
from reviewapp.labels.reviewer_agreement import reviewers_agreement
from reviewapp.policy.routing import AUDIT_REASON

DAYS = 30
WEEKS = 12
BAND_WEEKS = 8  # the drift band: up to this many weeks before this one
MIN_BAND_WEEKS = 3
# A perfectly steady history has sd 0; without a floor any wobble would be an alert.
MIN_BAND_SD = 0.02


# --- pure functions ----------------------------------------------------------------------------


def confusion_matrix(counts: dict[tuple[str, str], int]) -> Matrix:
    """Rows: the judge's label; columns: the human's; both in LABELS order."""
    return [[counts.get((judge, human), 0) for human in LABELS] for judge in LABELS]


def flag_confusion(matrix: Matrix) -> Confusion:
    """'Flagged' = any label but SUPPORTED (LABELS[0]); the human is the truth."""
    flagged = range(1, len(matrix))
    return Confusion(
        tp=sum(matrix[j][h] for j in flagged for h in flagged),
        fp=sum(matrix[j][0] for j in flagged),
        fn=sum(matrix[0][h] for h in flagged),
        tn=matrix[0][0],
    )


def flag_precision_recall(matrix: Matrix) -> dict[str, float]:
    c = flag_confusion(matrix)
    return precision_recall_f1(c.tp, c.fp, c.fn)


@dataclass(frozen=True)
class Drift:
    metric: str
    current: float | None
    history: tuple[float, ...]  # the weeks before this one, oldest first
    low: float | None = None
    high: float | None = None

    @property
    def status(self) -> str:
        if self.current is None:
            return "no data this week"
        if self.low is None:
            return "not enough history"
        return "ok" if self.low <= self.current <= self.high else "alert"


def drift(metric: str, current: float | None, history: list[float]) -> Drift:
    """Is this week's value inside mean ± 2 sd of the previous BAND_WEEKS weeks (with data)?"""
    history = history[-BAND_WEEKS:]
    if len(history) < MIN_BAND_WEEKS:
        return Drift(metric, current, tuple(history))
    mean = statistics.fmean(history)
    sd = max(statistics.stdev(history), MIN_BAND_SD)
    floor = -1.0 if metric == "kappa" else 0.0  # kappa runs from -1 to 1, shares from 0 to 1
    return Drift(
        metric, current, tuple(history), low=max(mean - 2 * sd, floor), high=min(mean + 2 * sd, 1.0)
    )


# --- charts (SVG geometry from numbers only) ----------------------------------------------------

CHART_W, CHART_H = 640, 200
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 44, 24, 10, 24
COLORS = ("#1d4ed8", "#d46b08", "#2f9e57")  # fixed: series colours never come from data


@dataclass(frozen=True)
class Chart:
    """A line chart of shares (0..1): polyline point strings, dots and axis labels, all numbers."""

    title: str
    lines: list[dict[str, Any]]
    grid: list[tuple[float, str]]
    xlabels: list[tuple[float, str]]
    width: int = CHART_W
    height: int = CHART_H
    left: int = PAD_LEFT
    right: int = CHART_W - PAD_RIGHT


def line_chart(
    title: str, xlabels: list[str], series: list[tuple[str, list[float | None]]]
) -> Chart:
    """Each series is (name, values in 0..1 or None); a None breaks its line."""
    plot_w, plot_h = CHART_W - PAD_LEFT - PAD_RIGHT, CHART_H - PAD_TOP - PAD_BOTTOM
    step = plot_w / max(len(xlabels) - 1, 1)

    def x(i: int) -> float:
        return round(PAD_LEFT + i * step, 1)

    def y(value: float) -> float:
        return round(PAD_TOP + (1 - min(max(value, 0.0), 1.0)) * plot_h, 1)

    lines = []
    for (name, values), color in zip(series, COLORS):
        segments, current = [], []
        for i, value in enumerate(values):
            if value is not None:
                current.append(f"{x(i)},{y(value)}")
            elif current:
                segments.append(current)
                current = []
        if current:
            segments.append(current)
        dots = [
            (x(i), y(v), f"{xlabels[i]}: {v:.0%}") for i, v in enumerate(values) if v is not None
        ]
        lines.append(
            {
                "name": name,
                "color": color,
                "segments": [" ".join(s) for s in segments],
                "dots": dots,
            }
        )
    every = max(1, len(xlabels) // 8)  # about eight labels fit under the axis
    return Chart(
        title=title,
        lines=lines,
        grid=[(y(v), f"{v:.0%}") for v in (0.0, 0.25, 0.5, 0.75, 1.0)],
        # The last label too, unless it would sit on the one before it.
        xlabels=[(x(i), label) for i, label in enumerate(xlabels)
                 if i % every == 0 or (i == len(xlabels) - 1 and i % every >= every / 2)],
    )


def _share(part: int, total: int) -> float | None:
    return part / total if total else None


# --- selectors: agreement per judge ------------------------------------------------------------

JUDGE_KEY = ("run__profile", "run__prompt_version", "run__model")


def adjudicated_judge_claims():
    """Judge claims a reviewer decided by acting on them (not accepted in bulk by finishing)."""
    return live_claims(
        Claim.objects.filter(origin=Claim.Origin.JUDGE, decision_mode=DecisionMode.EXPLICIT)
    )


def _bulk_counts() -> dict[tuple, int]:
    rows = (
        live_claims(
            Claim.objects.filter(origin=Claim.Origin.JUDGE, decision_mode=DecisionMode.BULK)
        )
        .values_list(*JUDGE_KEY)
        .annotate(n=Count("id"))
        .order_by()
    )
    return {tuple(judge): n for *judge, n in rows}


def _judge_name(profile: str, version: str, model: str) -> str:
    return f"{profile}@{version} · {model}"


def judge_agreement(audit: dict[str, Any]) -> list[dict[str, Any]]:
    """Per judge (profile@version and model): confusion matrix, agreement, kappa, flag precision and
    recall, unverified quotes, and its misses on the audit sample (`audit_misses()`)."""
    counts: dict[tuple, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    by_method: dict[tuple, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for *judge, label, human, method, n in (
        adjudicated_judge_claims()
        .values_list(*JUDGE_KEY, "label", "human_label", "consensus_method")
        .annotate(n=Count("id"))
        .order_by()
    ):
        counts[tuple(judge)][(label, human)] += n
        by_method[tuple(judge)][_method_group(method)][("judge", label), ("human", human)] += n
    quotes = _unverified_quotes()
    bulk = _bulk_counts()
    rows = []
    for judge in sorted(counts.keys() | bulk.keys()):
        matrix = confusion_matrix(counts.get(judge, {}))
        explicit = sum(map(sum, matrix))
        rows.append(
            {
                "judge": _judge_name(*judge),
                "claims": explicit,
                "bulk": {
                    "claims": bulk.get(judge, 0),
                    "share": _share(bulk.get(judge, 0), explicit + bulk.get(judge, 0)),
                },
                "matrix": list(zip(LABELS, matrix)),
                "agreement": raw_agreement(matrix),
                "kappa": cohen_kappa(matrix),
                "flag": flag_precision_recall(matrix),
                "quotes": quotes.get(judge, {"total": 0, "unverified": 0, "share": None}),
                "audit": audit["by_judge"].get(judge, {"answers": 0, "missed": 0, "rate": None}),
                "by_method": {group: _versus(by_method[judge][group]) for group in METHOD_GROUPS},
            }
        )
    return rows


# The judge against a final label one reviewer gave, and against one several reviewers reached.
METHOD_GROUPS = ("single", "consensus")


def _method_group(method: str) -> str:
    # blank: decided before final labels recorded their method, when one reviewer decided each claim
    return "single" if method in ("", ConsensusMethod.SINGLE) else "consensus"


def _versus(t: Counter) -> dict[str, Any]:
    percent, kappa = agreement.figures(t, [agreement.percent_agreement, agreement.two_rater_kappa],
                                       resamples=settings.AGREEMENT_RESAMPLES)
    return {"claims": agreement.claims(t), "agreement": percent, "kappa": kappa}


def _unverified_quotes() -> dict[tuple, dict[str, Any]]:
    """Share of quotes on adjudicated judge claims that the locator found in no passage."""
    rows = (
        # Through the join it needs anyway for the judge key, not `claim IN (subquery)`: one join
        # fewer over every quote (about a third faster at a million).
        Evidence.objects.filter(claim__origin=Claim.Origin.JUDGE).exclude(claim__decision="")
        .values_list(*(f"claim__{key}" for key in JUDGE_KEY))
        .annotate(total=Count("id"), unverified=Count("id", filter=Q(match="not_found")))
        .order_by()
    )
    return {
        (profile, version, model): {"total": total, "unverified": bad, "share": _share(bad, total)}
        for profile, version, model, total, bad in rows
    }


def human_flagged_claims():
    """Claims a human flagged: decided not SUPPORTED, or added by a reviewer (the judge missed
    them). An answer holding one is a miss when the policy passed it."""
    flagged = ~Q(human_label="SUPPORTED") | Q(origin=Claim.Origin.REVIEWER)
    return Claim.objects.exclude(decision="").filter(flagged)


def audit_misses() -> dict[str, Any]:
    """The false-negative rate on the audit sample: of sampled answers (the policy passed them)
    that were adjudicated, the share where a human found a claim not SUPPORTED or added one."""
    rows = (
        live(
            Answer.objects.filter(
                routing_reason=AUDIT_REASON, review_status=Answer.ReviewStatus.ADJUDICATED
            )
        )
        .annotate(missed=Exists(human_flagged_claims().filter(answer=OuterRef("pk"))))
        .values_list("judged_by__profile", "judged_by__prompt_version", "judged_by__model")
        .annotate(answers=Count("id"), misses=Count("id", filter=Q(missed=True)))
        .order_by()
    )
    by_judge = {
        (profile, version, model): {"answers": n, "missed": k, "rate": _share(k, n)}
        for profile, version, model, n, k in rows
    }
    answers, misses = sum(r["answers"] for r in by_judge.values()), sum(
        r["missed"] for r in by_judge.values()
    )
    return {
        "answers": answers,
        "missed": misses,
        "rate": _share(misses, answers),
        "by_judge": by_judge,
    }


# --- selectors: rates over time and drift --------------------------------------------------------


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def routing_rates(trunc, since: datetime) -> dict[date, dict[str, int]]:
    """Judged answers per bucket: how many, how many passed the policy (auto-passed, or passed and
    drawn for the audit sample) and how many went to review (the audit sample included)."""
    rows = (
        Answer.objects.filter(status=Answer.Status.JUDGED, judged_at__gte=since)
        .annotate(bucket=trunc("judged_at"))
        .values_list("bucket")
        .annotate(
            total=Count("id"),
            passed=Count("id", filter=Q(review_status=Answer.ReviewStatus.AUTO_PASSED)
                         | Q(routing_reason=AUDIT_REASON)),
            reviewed=Count("id", filter=Q(review_status__in=[Answer.ReviewStatus.IN_REVIEW,
                                                              Answer.ReviewStatus.ADJUDICATED])),
        )
        .order_by()
    )
    return {_day(bucket): {"total": t, "passed": p, "reviewed": r} for bucket, t, p, r in rows}


def _day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def rate_table(buckets: list[date], counts: dict[date, dict[str, int]]) -> list[dict[str, Any]]:
    """One row per bucket, empty buckets included (n 0, no rate) so the chart's x axis is even."""
    rows = []
    for bucket in buckets:
        c = counts.get(bucket, {"total": 0, "passed": 0, "reviewed": 0})
        rows.append(
            {
                "bucket": bucket,
                "n": c["total"],
                "passed": c["passed"],
                "reviewed": c["reviewed"],
                "pass_rate": _share(c["passed"], c["total"]),
                "review_rate": _share(c["reviewed"], c["total"]),
            }
        )
    return rows


def weekly_agreement(since: datetime) -> dict[date, Matrix]:
    counts: dict[date, dict[tuple[str, str], int]] = defaultdict(dict)
    for week, label, human, n in (
        adjudicated_judge_claims().filter(decided_at__gte=since)
        .annotate(week=TruncWeek("decided_at")).values_list("week", "label", "human_label")
        .annotate(n=Count("id")).order_by()
    ):
        counts[_day(week)][(label, human)] = n
    return {week: confusion_matrix(c) for week, c in counts.items()}


def agreement_table(weeks: list[date], matrices: dict[date, Matrix]) -> list[dict[str, Any]]:
    rows = []
    for week in weeks:
        matrix = matrices.get(week)
        rows.append({"bucket": week, "n": sum(map(sum, matrix)) if matrix else 0,
                     "agreement": raw_agreement(matrix) if matrix else None,
                     "kappa": cohen_kappa(matrix) if matrix else None})
    return rows


def drifts(
    weekly_rates: list[dict[str, Any]], weekly_agreement_rows: list[dict[str, Any]]
) -> list[Drift]:
    """This week (the last row) against the weeks before it that have data."""
    checks = [
        ("pass rate", weekly_rates, "pass_rate"),
        ("raw agreement", weekly_agreement_rows, "agreement"),
        ("kappa", weekly_agreement_rows, "kappa"),
    ]
    return [
        drift(name, rows[-1][key], [row[key] for row in rows[:-1] if row[key] is not None])
        for name, rows, key in checks
    ]


def calibration_page(now: datetime | None = None) -> dict[str, Any]:
    """Everything /calibration/ shows."""
    now = now or timezone.now()
    today = now.date()
    days = [today - timedelta(days=n) for n in range(DAYS - 1, -1, -1)]
    weeks = [_week_start(today) - timedelta(weeks=n) for n in range(WEEKS - 1, -1, -1)]
    day_since = datetime.combine(days[0], datetime.min.time(), tzinfo=now.tzinfo)
    week_since = datetime.combine(weeks[0], datetime.min.time(), tzinfo=now.tzinfo)
    daily = rate_table(days, routing_rates(TruncDate, day_since))
    weekly = rate_table(weeks, routing_rates(TruncWeek, week_since))
    agreement = agreement_table(weeks, weekly_agreement(week_since))
    audit = audit_misses()
    return {
        "computed_at": now,
        "judges": judge_agreement(audit),
        "reviewers": reviewers_agreement(),
        "labels": LABELS,
        "audit": audit,
        "daily": daily,
        "weekly": weekly,
        "agreement": agreement,
        "drifts": drifts(weekly, agreement),
        "charts": {
            "daily": line_chart(
                "Pass and review rate per day (last 30 days)",
                [d.strftime("%m-%d") for d in days],
                [
                    ("pass rate", [r["pass_rate"] for r in daily]),
                    ("review rate", [r["review_rate"] for r in daily]),
                ],
            ),
            "weekly": line_chart(
                "Pass and review rate per week",
                [w.strftime("%m-%d") for w in weeks],
                [
                    ("pass rate", [r["pass_rate"] for r in weekly]),
                    ("review rate", [r["review_rate"] for r in weekly]),
                ],
            ),
            "agreement": line_chart(
                "Judge-human agreement per week",
                [w.strftime("%m-%d") for w in weeks],
                [
                    ("raw agreement", [r["agreement"] for r in agreement]),
                    ("kappa", [r["kappa"] for r in agreement]),
                ],
            ),
        },
    }


CACHE_KEY = "claimdesk:calibration_page"
# Figures older than the TTL are still kept this many TTLs, to be shown while one viewer recomputes.
KEEP_STALE_TTLS = 10
RECOMPUTE_LOCK_SECONDS = 120  # a recomputation that died frees the turn after this long


def cached_calibration_page() -> dict[str, Any]:
    """calibration_page(), kept for CALIBRATION_CACHE_SECONDS: its aggregates read every decided
    claim (2-3 s at a million claims) and move slowly, so a page view need not recompute them. The
    page says when they were computed. 0 turns the cache off.

    Once they are older than that, one viewer recomputes them (the first to take the turn, in the
    cache: with CACHE_URL, one in the whole fleet) and everyone else meanwhile is shown the older
    figures at once, with their time, instead of every viewer of those seconds recomputing too."""
    ttl = settings.CALIBRATION_CACHE_SECONDS
    if ttl <= 0:
        return calibration_page()
    stored = cache.get(CACHE_KEY)
    turn = f"{CACHE_KEY}:recomputing"
    taken = False
    if stored is not None:
        if stored["computed_at"] >= timezone.now() - timedelta(seconds=ttl):
            return stored
        taken = cache.add(turn, True, RECOMPUTE_LOCK_SECONDS)
        if not taken:
            return stored  # another viewer is recomputing them
    try:
        page = calibration_page()
        cache.set(CACHE_KEY, page, ttl * KEEP_STALE_TTLS)
    finally:
        if taken:
            cache.delete(turn)
    return page
