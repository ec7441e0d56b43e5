"""The miss rate's estimators and the load-versus-catch curve (reviewapp/labels/sampling.py),
against hand computations and simulated audits of known miss rate. No database."""

from __future__ import annotations

import math
import random

import pytest

from reviewapp.labels.sampling import (
    Reviewed,
    curve_point,
    load_catch_curve,
    threshold_for_catch,
    weighted_share,
    wilson,
)


def test_wilson_matches_a_hand_computation_for_3_misses_in_120():
    # p = 0.025, z^2 = 3.841459: centre (p + z^2/2n) / (1 + z^2/n) = 0.0410061 / 1.0320122 =
    # 0.0397342; half z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n) = 1.96 * sqrt(0.00026982) /
    # 1.0320122 = 0.0311967
    low, high = wilson(3, 120)
    assert low == pytest.approx(0.0397342 - 0.0311967, abs=2e-6)  # 0.00854
    assert high == pytest.approx(0.0397342 + 0.0311967, abs=2e-6)  # 0.07093


def test_wilson_gives_a_nonzero_upper_bound_when_nothing_was_missed():
    low, high = wilson(0, 50)
    assert low == pytest.approx(0.0, abs=1e-12)
    assert high == pytest.approx(1.96 ** 2 / (50 + 1.96 ** 2), abs=1e-4)  # 0.0713
    assert wilson(0, 0) is None


def test_with_one_inclusion_probability_the_estimate_is_the_plain_share_and_wilsons_interval():
    estimate = weighted_share([(True, 0.05)] * 3 + [(False, 0.05)] * 117)
    assert (estimate.answers, estimate.missed) == (120, 3)
    assert estimate.value == pytest.approx(0.025)
    assert estimate.effective == pytest.approx(120)
    assert (estimate.low, estimate.high) == pytest.approx(wilson(3, 120))


def test_the_weighted_estimate_matches_a_hand_computation_on_two_bands():
    # Near the threshold pi = 0.5: 10 audited, 2 missed (weight 2). Far above it pi = 0.1: 10
    # audited, 1 missed (weight 10). sum w = 20 + 100 = 120; sum w y = 4 + 10 = 14: p = 14/120.
    # V = [2 * 4 (1-p)^2 + 8 * 4 p^2 + 1 * 100 (1-p)^2 + 9 * 100 p^2] / 120^2 = 0.006733;
    # n_eff = min(p(1-p)/V, Kish 120^2 / (10 * 4 + 10 * 100) = 13.85) = min(15.31, 13.85).
    near = [(True, 0.5)] * 2 + [(False, 0.5)] * 8
    far = [(True, 0.1)] + [(False, 0.1)] * 9
    estimate = weighted_share(near + far)
    p = 14 / 120
    variance = (8 * (1 - p) ** 2 + 32 * p ** 2 + 100 * (1 - p) ** 2 + 900 * p ** 2) / 120 ** 2
    assert estimate.value == pytest.approx(p)
    assert p * (1 - p) / variance == pytest.approx(15.31, abs=0.01)
    assert estimate.effective == pytest.approx(120 ** 2 / 1040)
    assert (estimate.low, estimate.high) == pytest.approx(
        wilson(p * estimate.effective, estimate.effective)
    )
    assert estimate.above(0.02) and not estimate.above(0.5)


def test_no_reviewed_answer_gives_no_estimate_and_no_alert():
    estimate = weighted_share([])
    assert estimate.value is None and not estimate.above(0.0)


def _simulated_audit(
    seed: int, near_miss: float = 0.12, far_miss: float = 0.015
) -> tuple[float, list]:
    """4,000 passed answers scored 0.80-1.00 above a 0.80 threshold. Near it (below 0.85) an answer
    holds a miss with chance `near_miss` and is audited with chance 0.30; far above, `far_miss` and
    0.04. The truth is the share of this population's answers that hold a miss."""
    rng = random.Random(seed)
    population, sample = [], []
    for _ in range(4000):
        near = rng.uniform(0.80, 1.00) < 0.85
        missed = rng.random() < (near_miss if near else far_miss)
        population.append(missed)
        pi = 0.30 if near else 0.04
        if rng.random() < pi:
            sample.append((missed, pi))
    return sum(population) / len(population), sample


def test_the_weighted_interval_covers_the_known_miss_rate_in_at_least_93_of_100_seeded_runs():
    covered = plain_covered = 0
    for seed in range(100):
        truth, sample = _simulated_audit(seed)
        estimate = weighted_share(sample)
        covered += estimate.low <= truth <= estimate.high
        # The same answers counted as if drawn uniformly: the near band, over-sampled, biases it.
        plain = wilson(sum(y for y, _ in sample), len(sample))
        plain_covered += plain[0] <= truth <= plain[1]
    assert covered >= 93, covered
    assert plain_covered < 50, plain_covered


def test_the_interval_still_covers_when_the_misses_sit_far_above_the_threshold():
    # The misses among the heavy weights (audited with chance 0.04): the other way round.
    covered = sum(
        estimate.low <= truth <= estimate.high
        for truth, estimate in (
            (t, weighted_share(s))
            for t, s in (_simulated_audit(seed, 0.01, 0.05) for seed in range(100))
        )
    )
    assert covered >= 93, covered


def test_the_weighted_estimate_is_unbiased_over_the_seeded_runs():
    errors = []
    for seed in range(100):
        truth, sample = _simulated_audit(seed)
        errors.append(weighted_share(sample).value - truth)
    mean = sum(errors) / len(errors)
    sd = math.sqrt(sum((e - mean) ** 2 for e in errors) / (len(errors) - 1))
    assert abs(mean) < 3 * sd / math.sqrt(len(errors))


# --- the curve ---------------------------------------------------------------------------------

# Six adjudicated answers. Sent to review by their routing (pi 1): scores 0.40 (flagged by a human),
# 0.60 (flagged), 0.70 (not), and one at 0.95 sent by a blocking label (flagged). Audited from the
# passed ones with pi 0.5: 0.85 (flagged) and 0.98 (not): each stands for two answers.
FIXTURE = [
    Reviewed(0.40, False, True, 1.0),
    Reviewed(0.60, False, True, 1.0),
    Reviewed(0.70, False, False, 1.0),
    Reviewed(0.95, True, True, 1.0),
    Reviewed(0.85, False, True, 0.5),
    Reviewed(0.98, False, False, 0.5),
]


def test_the_curves_points_match_a_hand_computation_on_a_small_fixture():
    # Weights 1,1,1,1,2,2: total 8; human-flagged 1+1+1+2 = 5.
    # t 0.5: sent 0.40 and the label one: load 2/8, caught 2/5, precision 2/2.
    # t 0.8: sent 0.40 0.60 0.70 + label: load 4/8, caught 3/5, precision 3/4.
    # t 0.9: + 0.85 (w 2): load 6/8, caught 5/5, precision 5/6.
    # t 1.0: + 0.98 (w 2): load 8/8, caught 5/5, precision 5/8.
    points = load_catch_curve(FIXTURE, [0.5, 0.8, 0.9, 1.0])
    assert [value for p in points for value in (p.load, p.catch, p.precision)] == pytest.approx(
        [2 / 8, 2 / 5, 1.0, 4 / 8, 3 / 5, 3 / 4, 6 / 8, 1.0, 5 / 6, 1.0, 1.0, 5 / 8])


def test_choosing_the_threshold_for_a_catch_takes_the_lowest_that_reaches_it():
    points = load_catch_curve(FIXTURE, [0.5, 0.8, 0.9, 1.0])
    assert threshold_for_catch(points, 0.6).threshold == 0.8
    assert threshold_for_catch(points, 0.61).threshold == 0.9
    # no flagged answer
    assert threshold_for_catch(load_catch_curve(FIXTURE[2:3], [0.5]), 0.9) is None


def test_the_one_pass_curve_equals_the_definition_at_every_threshold():
    rng = random.Random(7)
    answers = [Reviewed(round(rng.random(), 2), rng.random() < 0.1, rng.random() < 0.3,
                        rng.choice([1.0, 0.5, 0.05])) for _ in range(500)]
    thresholds = [t / 100 for t in range(101)]
    slow_points = (curve_point(answers, t) for t in thresholds)
    for fast, slow in zip(load_catch_curve(answers, thresholds), slow_points):
        assert (fast.threshold, fast.load, fast.catch, fast.precision) == pytest.approx(
            (slow.threshold, slow.load, slow.catch, slow.precision))
