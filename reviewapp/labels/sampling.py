"""The miss rate and the load-versus-catch curve from reviewed samples: pure Python, no Django.

Every answer the policy passed may be drawn for the audit sample with its own inclusion
probability pi (reviewapp.policy.routing.audit_probability: more near the threshold, less far
above it); an answer the policy sent to review is reviewed for sure (pi = 1). So each reviewed
answer stands for 1 / pi answers like it, and the figures below weigh it so (docs/miss-rate.md
gives the formulas and the reasoning):

* miss rate: of the answers the policy passed, the share that hold a claim a human flagged. The
  Hajek estimate p = sum(w y) / sum(w), w = 1 / pi, y = 1 when a human flagged a claim of the
  answer. Its variance (with-replacement approximation, Sarndal et al. 1992, 5.7):
  V = sum(w^2 (y - p)^2) / sum(w)^2. The 95% interval is Wilson's score interval (1927) at the
  estimate and an effective number of answers n_eff: the smaller of p (1 - p) / V and Kish's
  (sum w)^2 / sum w^2. The first alone is too narrow when few misses carry large weights (its V
  is then estimated low: 92% coverage where 95% is asked, 71% in a sparser case); Kish's alone
  when the misses sit among the heavy weights; the smaller covers in both. With one probability
  for every answer both are the sample's size, and the interval is Wilson's for k misses in n.
* the curve: for each candidate threshold, the weighted share of answers sent to review (the
  load), of human-flagged answers among them caught, and of flagged ones among those sent
  (precision).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval for a share of `successes` in `n` (either may be fractional: an
    effective count). None without data."""
    if n <= 0:
        return None
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


@dataclass(frozen=True)
class Estimate:
    """A share with its 95% interval, over `answers` reviewed answers (None: no data)."""

    value: float | None
    low: float | None
    high: float | None
    answers: int
    missed: int  # reviewed answers with a human-flagged claim, unweighted
    effective: float  # n_eff: how many answers of equal weight the interval is worth

    @property
    def weighted(self) -> bool:
        """Its answers had different chances of the sample: the interval is worth fewer answers."""
        return abs(self.effective - self.answers) >= 0.5

    def above(self, target: float | None) -> bool:
        """The interval's upper bound passes the target: the miss rate may well be above it."""
        return target is not None and self.high is not None and self.high > target


NO_ESTIMATE = Estimate(None, None, None, 0, 0, 0.0)


def weighted_share(observations: Iterable[tuple[bool, float]]) -> Estimate:
    """The Hajek estimate of a share from (flagged, inclusion probability) per reviewed answer,
    with its Wilson interval at the effective sample size (see the module's docstring)."""
    rows = [(bool(y), 1.0 / pi) for y, pi in observations if pi > 0]
    if not rows:
        return NO_ESTIMATE
    total = sum(w for _, w in rows)
    p = sum(w for y, w in rows if y) / total
    variance = sum(w * w * (y - p) ** 2 for y, w in rows) / (total * total)
    kish = total * total / sum(w * w for _, w in rows)
    effective = min(p * (1 - p) / variance, kish) if variance > 0 else kish
    low, high = wilson(p * effective, effective)
    return Estimate(p, low, high, len(rows), sum(1 for y, _ in rows if y), effective)


# --- load versus catch -------------------------------------------------------------------------


@dataclass(frozen=True)
class Reviewed:
    """One adjudicated answer as the curve reads it."""

    score: float  # the judge's grounding score
    flagged_otherwise: bool  # another rule (a label, a critical category) sends it to review
    human_flagged: bool  # a human flagged one of its claims, or added one
    probability: float  # its chance of having been reviewed: 1, or its audit inclusion probability


@dataclass(frozen=True)
class CurvePoint:
    threshold: float
    load: float | None  # share of answers sent to review
    catch: float | None  # share of human-flagged answers sent to review
    precision: float | None  # share of answers sent to review that a human flagged


def sent(answer: Reviewed, threshold: float) -> bool:
    """The policy's score rule (routing.decide_route: score < threshold), or another rule."""
    return answer.flagged_otherwise or answer.score < threshold


def curve_point(answers: Sequence[Reviewed], threshold: float) -> CurvePoint:
    weights = [(a, 1.0 / a.probability) for a in answers if a.probability > 0]
    total = sum(w for _, w in weights)
    to_review = sum(w for a, w in weights if sent(a, threshold))
    flagged = sum(w for a, w in weights if a.human_flagged)
    caught = sum(w for a, w in weights if a.human_flagged and sent(a, threshold))
    return CurvePoint(threshold, _ratio(to_review, total), _ratio(caught, flagged),
                      _ratio(caught, to_review))


def load_catch_curve(answers: Sequence[Reviewed], thresholds: Iterable[float]) -> list[CurvePoint]:
    """curve_point at each threshold (in ascending order), in one pass over the answers sorted by
    score: an answer sent at one threshold is sent at every higher one."""
    weighed = [(a, 1.0 / a.probability) for a in answers if a.probability > 0]
    total = sum(w for _, w in weighed)
    flagged = sum(w for a, w in weighed if a.human_flagged)
    to_review = sum(w for a, w in weighed if a.flagged_otherwise)
    caught = sum(w for a, w in weighed if a.flagged_otherwise and a.human_flagged)
    by_score = sorted((a.score, w, a.human_flagged) for a, w in weighed if not a.flagged_otherwise)
    points, i = [], 0
    for threshold in sorted(thresholds):
        while i < len(by_score) and by_score[i][0] < threshold:
            _, w, human = by_score[i]
            to_review, caught, i = to_review + w, caught + (w if human else 0.0), i + 1
        points.append(CurvePoint(threshold, _ratio(to_review, total), _ratio(caught, flagged),
                                 _ratio(caught, to_review)))
    return points


def threshold_for_catch(points: Sequence[CurvePoint], catch: float) -> CurvePoint | None:
    """The lowest threshold (least load) whose catch is at least `catch`; None if none does."""
    reaching = [p for p in points if p.catch is not None and p.catch >= catch]
    return min(reaching, key=lambda p: p.threshold, default=None)


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None
