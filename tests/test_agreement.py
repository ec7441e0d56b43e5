"""Agreement statistics (reviewapp/labels/agreement.py), against values computed by hand or
published."""

from __future__ import annotations

import pytest

from reviewapp.labels import agreement
from reviewapp.labels.agreement import (
    NO_DATA,
    figures,
    krippendorff_alpha,
    fleiss_kappa,
    pair_kappa,
    percent_agreement,
    table,
    two_rater_kappa,
)


def _coders(**rows: str):
    """One string per coder, one character per unit ('.' = no rating): the layout of Krippendorff's
    tables."""
    columns = zip(*rows.values())
    return table(
        [
            [(coder, value) for coder, value in zip(rows, column) if value != "."]
            for column in columns
        ]
    )


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", C: four observers, twelve
# units, nominal values 1-5, missing ratings; unit 12 has a single value and is not pairable.
KRIPPENDORFF_C = _coders(A="123321412...", B="1233224125.3", C=".3332342251.", D="12332441251.")


def test_alpha_matches_krippendorffs_worked_example_with_missing_data():
    assert krippendorff_alpha(KRIPPENDORFF_C) == pytest.approx(0.743, abs=5e-4)
    assert agreement.claims(KRIPPENDORFF_C) == 11 and agreement.ratings(KRIPPENDORFF_C) == 40


def test_alpha_matches_krippendorffs_two_observer_binary_example():
    # Section A: n = 20 values, 4 disagreeing units (8 off-diagonal coincidences), n0 = 14, n1 = 6:
    # alpha = 1 - 19 * 8 / (400 - 14**2 - 6**2) = 1 - 152/168 = 0.095
    t = _coders(A="0100000010", B="1110010000")
    assert krippendorff_alpha(t) == pytest.approx(1 - 152 / 168)
    assert krippendorff_alpha(t) == pytest.approx(0.095, abs=5e-4)


def test_a_unit_with_one_rating_carries_no_pairable_value():
    with_lone = _coders(A="0100000010.", B="11100100001")
    assert agreement.claims(with_lone) == 10
    assert krippendorff_alpha(with_lone) == pytest.approx(1 - 152 / 168)


def _pairs(counts: dict[tuple[str, str], int]):
    """Two raters, a and b: (a's label, b's label) -> how many claims."""
    return table(
        [("a", first), ("b", second)] for (first, second), n in counts.items() for _ in range(n)
    )


def test_kappa_matches_the_textbook_two_by_two_case():
    # 50 applications: both yes 20, a yes / b no 5, a no / b yes 10, both no 15 (Wikipedia, "Cohen's
    # kappa"): po = 0.7, pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    t = _pairs({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert pair_kappa(t, "a", "b") == pytest.approx(0.4)
    assert pair_kappa(t, "b", "a") == pytest.approx(0.4)  # symmetric in who is rows
    assert two_rater_kappa(t) == pytest.approx(0.4)
    assert percent_agreement(t) == pytest.approx(0.7)


def test_kappa_matches_a_hand_computed_three_label_case():
    # rows a, columns b: [[10, 2, 0], [1, 8, 1], [0, 2, 6]]; n 30, po 24/30; a 12/10/8, b 11/12/7:
    # pe = (132 + 120 + 56) / 900, kappa = (720 - 308) / (900 - 308) = 412/592
    t = _pairs({("S", "S"): 10, ("S", "P"): 2, ("P", "S"): 1, ("P", "P"): 8, ("P", "C"): 1,
                ("C", "P"): 2, ("C", "C"): 6})
    assert pair_kappa(t, "a", "b") == pytest.approx(412 / 592)


# Fleiss (1971) as worked in Wikipedia's "Fleiss' kappa": ten subjects, fourteen raters each, five
# categories; rows are how many raters put the subject in each category. P = 0.378, Pe = 0.213.
FLEISS = [(0, 0, 0, 0, 14), (0, 2, 6, 4, 2), (0, 0, 3, 5, 6), (0, 3, 9, 2, 0), (2, 2, 8, 1, 1),
          (7, 7, 0, 0, 0), (3, 2, 6, 3, 0), (2, 5, 3, 2, 2), (6, 5, 2, 1, 0), (0, 2, 2, 3, 7)]


def test_fleiss_kappa_matches_the_published_example():
    units = []
    for counts in FLEISS:
        labels = [str(c) for c, k in enumerate(counts, start=1) for _ in range(k)]
        units.append([(f"r{i:02}", label) for i, label in enumerate(labels)])
    assert fleiss_kappa(table(units)) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_lets_claims_hold_different_numbers_of_ratings():
    # claim 1: a, b, c all S (P 1); claim 2: a U, b S (P 0); claim 3: b U, c U (P 1). P = 2/3;
    # ratings S 4, U 3 of 7: Pe = (16 + 9) / 49, kappa = (2/3 - 25/49) / (1 - 25/49) = 23/72
    t = table(
        [[("a", "S"), ("b", "S"), ("c", "S")], [("a", "U"), ("b", "S")], [("b", "U"), ("c", "U")]]
    )
    assert fleiss_kappa(t) == pytest.approx(23 / 72)
    assert fleiss_kappa(agreement.pooled(t)) == fleiss_kappa(t)  # who rated does not matter to it


def test_perfect_agreement_is_one_everywhere():
    t = _pairs({("S", "S"): 6, ("U", "U"): 3})
    assert (percent_agreement(t), two_rater_kappa(t), fleiss_kappa(t), krippendorff_alpha(t)) == (
        1,
        1,
        1,
        1,
    )
    figures_ = agreement.agreement(t, resamples=200)
    assert (figures_.kappa.low, figures_.kappa.high) == (1.0, 1.0)


def test_a_single_label_leaves_kappa_and_alpha_undefined_with_the_reason_and_percent_at_100():
    t = _pairs({("SUPPORTED", "SUPPORTED"): 9})
    assert two_rater_kappa(t) is None and fleiss_kappa(t) is None and krippendorff_alpha(t) is None
    result = agreement.agreement(t, resamples=100)
    assert result.percent.value == 1.0
    for figure in (result.kappa, result.alpha):
        assert figure.value is None and figure.low is None
        assert figure.reason == "every rating is SUPPORTED: agreement beyond chance is undefined"


def test_no_data_gives_no_figure_and_says_so():
    result = agreement.agreement(table([]), resamples=100)
    assert result.claims == 0
    assert [f.reason for f in (result.percent, result.kappa, result.alpha)] == [NO_DATA] * 3
    assert result.alpha.value is None


def test_the_bootstrap_interval_holds_the_estimate_and_is_the_same_for_the_same_seed():
    first = agreement.agreement(KRIPPENDORFF_C, resamples=500, seed=7)
    again = agreement.agreement(KRIPPENDORFF_C, resamples=500, seed=7)
    other = agreement.agreement(KRIPPENDORFF_C, resamples=500, seed=8)
    assert first == again
    assert first != other
    for figure in (first.percent, first.kappa, first.alpha):
        assert figure.low <= figure.value <= figure.high
        assert figure.high - figure.low > 0.1  # eleven claims: a wide interval


def test_the_interval_narrows_with_more_claims():
    small = _pairs({("S", "S"): 8, ("S", "U"): 2, ("U", "U"): 8, ("U", "S"): 2})
    large = _pairs({("S", "S"): 800, ("S", "U"): 200, ("U", "U"): 800, ("U", "S"): 200})
    [a] = figures(small, [two_rater_kappa], resamples=400)
    [b] = figures(large, [two_rater_kappa], resamples=400)
    assert a.value == pytest.approx(b.value) == pytest.approx(0.6)
    assert (b.high - b.low) < (a.high - a.low) / 5


def test_a_poisson_resample_holds_about_as_many_claims_as_the_table():
    t = _pairs({("S", "S"): 300, ("S", "U"): 40, ("U", "U"): 150, ("U", "S"): 10})
    sizes = [sum(s.values()) for s in agreement.resamples_of(t, resamples=400, seed=1)]
    mean = sum(sizes) / len(sizes)
    assert mean == pytest.approx(500, rel=0.02)
    # sd of Poisson(500): 22.4
    assert 15 < (sum((n - mean) ** 2 for n in sizes) / len(sizes)) ** 0.5 < 30


def test_no_resamples_means_no_interval():
    [f] = figures(KRIPPENDORFF_C, [krippendorff_alpha], resamples=0)
    assert f.value == pytest.approx(0.743, abs=5e-4) and f.low is None and f.reason == ""


def test_one_labels_reliability_is_alpha_on_that_label_or_another():
    t = agreement.binarized(_coders(A="0100000010", B="1110010000"), "1")
    assert krippendorff_alpha(t) == pytest.approx(1 - 152 / 168)  # already binary: unchanged
    assert agreement.labels(agreement.binarized(KRIPPENDORFF_C, "3")) == {"3", "not 3"}
