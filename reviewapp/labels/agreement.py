"""Agreement statistics between raters (reviewers, a judge, a final label): pure Python, no Django.

A table counts units (claims) by their ratings: each key is one claim's ratings as sorted
(rater, label) pairs, one per rater, and its value how many claims were rated exactly so. Every
statistic reads such a table, so a bootstrap resample is only new counts for the same keys (a
draw per pattern, however many claims share it).

Definitions (nominal labels):
* percent agreement: of all pairs of ratings on one claim, the share that agree (for two raters:
  the share of claims they labelled alike);
* Cohen's kappa, for two raters on the claims both rated: (po - pe) / (1 - pe), pe from each
  rater's own label shares (Cohen 1960); for more raters, or raters who change from claim to claim,
  Fleiss' kappa (1971), pe from the label shares of every rating together;
* Krippendorff's alpha: 1 - observed / expected disagreement over the coincidence of values within
  claims, any number of raters, missing ratings allowed (Krippendorff 2011, "Computing
  Krippendorff's Alpha-Reliability", section C); claims with fewer than two ratings carry no
  pairable value and are dropped.

Edge cases give None with a reason, never NaN: no claim with two ratings ("no data"), or every
rating the same label ("a single label"). Then chance agreement is total (pe = 1, expected
disagreement 0), so agreement beyond chance is 0/0: undefined, not 1, even though percent
agreement is 100%.

Confidence intervals: percentile bootstrap over claims (a Poisson bootstrap: each claim drawn a
Poisson(1) number of times, which is resampling with replacement with a resample size around the
claims' number), seeded so a page shows the same figures for the same data; resamples where the
statistic is undefined are left out, and the interval is not given when fewer than half are defined.
"""

from __future__ import annotations

import math
import random
from bisect import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

Matrix = list[list[int]]
Rating = tuple[str, str]  # (rater, label)
Unit = tuple[Rating, ...]  # one claim's ratings, sorted by rater
Table = Mapping[Unit, int]

RESAMPLES = 1000
SEED = 2011  # any fixed number: the same data give the same intervals
LEVEL = 0.95
NO_DATA = "nothing to compare: no claim with two ratings"


# --- the figures on a confusion matrix (also the judge-versus-human calibration) ----------------


def raw_agreement(matrix: Matrix) -> float | None:
    total = sum(map(sum, matrix))
    return sum(matrix[i][i] for i in range(len(matrix))) / total if total else None


def cohen_kappa(matrix: Matrix) -> float | None:
    """Agreement beyond chance: (po - pe) / (1 - pe). None when undefined (no claims, or both
    sides used a single, same label so chance agreement is already 1)."""
    total = sum(map(sum, matrix))
    if not total:
        return None
    observed = raw_agreement(matrix)
    rows = [sum(row) / total for row in matrix]
    columns = [sum(column) / total for column in zip(*matrix)]
    expected = sum(r * c for r, c in zip(rows, columns))
    return None if expected == 1 else (observed - expected) / (1 - expected)


# --- tables -------------------------------------------------------------------------------------


def unit(ratings: Iterable[Rating]) -> Unit:
    return tuple(sorted(ratings))


def table(units: Iterable[Iterable[Rating]]) -> Counter[Unit]:
    """Count claims by their ratings; claims with fewer than two ratings are left out (nothing
    to agree with)."""
    return Counter(u for u in map(unit, units) if len(u) >= 2)


def raters(t: Table) -> list[str]:
    return sorted({rater for u in t for rater, _ in u})


def labels(t: Table) -> set[str]:
    return {label for u in t for _, label in u}


def binarized(t: Table, label: str) -> Counter[Unit]:
    """The same ratings as `label` or not: one label's own reliability (Fleiss' category-specific
    kappa)."""
    other = f"not {label}"
    out: Counter[Unit] = Counter()
    for u, n in t.items():
        out[tuple((rater, value if value == label else other) for rater, value in u)] += n
    return out


# --- statistics ---------------------------------------------------------------------------------


def claims(t: Table) -> int:
    return sum(t.values())


def ratings(t: Table) -> int:
    return sum(len(u) * n for u, n in t.items())


@lru_cache(maxsize=8192)
def _unit_terms(u: Unit) -> tuple[int, int, float, tuple[str, ...]]:
    """One claim's share of the sums below: agreeing pairs, pairs, its alpha disagreement
    (m^2 - sum_c n_uc^2) / (m - 1) and its labels. Cached: a bootstrap meets the same units again.
    """
    m = len(u)
    counts = Counter(label for _, label in u).values()
    return (
        sum(k * (k - 1) // 2 for k in counts),
        m * (m - 1) // 2,
        (m * m - sum(k * k for k in counts)) / (m - 1) if m > 1 else 0.0,
        tuple(label for _, label in u),
    )


def percent_agreement(t: Table) -> float | None:
    agreeing = pairs = 0
    for u, n in t.items():
        a, p, _, _ = _unit_terms(u)
        agreeing, pairs = agreeing + n * a, pairs + n * p
    return agreeing / pairs if pairs else None


def krippendorff_alpha(t: Table) -> float | None:
    """Nominal alpha = 1 - (n - 1) * sum_u D_u / (n^2 - sum_c n_c^2), where a claim with m ratings
    adds D_u = (m^2 - sum_c n_uc^2) / (m - 1) (its disagreeing ordered pairs, weighted 1/(m-1) as
    in the coincidence matrix) and n_c counts every pairable value c."""
    disagreement, values = 0.0, {}
    for u, n in t.items():
        if len(u) < 2:
            continue
        _, _, d, unit_labels = _unit_terms(u)
        disagreement += n * d
        for label in unit_labels:
            values[label] = values.get(label, 0) + n
    total = sum(values.values())
    expected = total * total - sum(k * k for k in values.values())
    if not expected:
        return None
    return 1 - (total - 1) * disagreement / expected


def _kappa_of_cells(cells: Mapping[tuple[str, str], int]) -> float | None:
    present = sorted({label for pair in cells for label in pair})
    return cohen_kappa([[cells.get((row, column), 0) for column in present] for row in present])


def pair_kappa(t: Table, a: str, b: str) -> float | None:
    """Cohen's kappa of a (rows) against b (columns) on the claims both rated."""
    cells: Counter[tuple[str, str]] = Counter()
    for u, n in t.items():
        given = dict(u)
        if a in given and b in given:
            cells[given[a], given[b]] += n
    return _kappa_of_cells(cells)


def two_rater_kappa(t: Table) -> float | None:
    """Cohen's kappa of a table of two raters, the first by name as rows."""
    names = raters(t)
    if len(names) != 2:
        return None
    return pair_kappa(t, *names)


def fleiss_kappa(t: Table) -> float | None:
    """Fleiss' kappa (1971) for any number of raters, who need not be the same on every claim:
    (P - Pe) / (1 - Pe), P the mean over claims of the share of its rating pairs that agree, Pe the
    sum of squared label shares over every rating. Claims may hold different numbers of ratings
    (each still weighs one claim in P)."""
    agreement_sum, weight, values = 0.0, 0, {}
    for u, n in t.items():
        agreeing, pairs, _, unit_labels = _unit_terms(u)
        if not pairs:
            continue
        agreement_sum += n * agreeing / pairs
        weight += n
        for label in unit_labels:
            values[label] = values.get(label, 0) + n
    total = sum(values.values())
    if not weight:
        return None
    expected = sum((k / total) ** 2 for k in values.values())
    return None if expected >= 1 else (agreement_sum / weight - expected) / (1 - expected)


def undefined_reason(t: Table) -> str:
    """Why agreement beyond chance cannot be measured on `t` ('' when it can)."""
    if not claims(t):
        return NO_DATA
    present = labels(t)
    if len(present) == 1:
        return f"every rating is {next(iter(present))}: agreement beyond chance is undefined"
    return ""


# --- the bootstrap ------------------------------------------------------------------------------


def _poisson_cdf(mean: int) -> tuple[int, list[float]]:
    """Poisson(mean)'s cumulative distribution from `low` on, over mean +- 10 sd (beyond it lies
    less than 1e-20 of the mass), for drawing by bisection."""
    spread = 10 * math.sqrt(mean) + 10
    low, high = max(0, int(mean - spread)), int(mean + spread) + 1
    cdf, total = [], 0.0
    for k in range(low, high + 1):
        total += math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
        cdf.append(total)
    return low, cdf


def resamples_of(t: Table, *, resamples: int, seed: int) -> Iterator[dict[Unit, int]]:
    """Bootstrap resamples of the claims of `t`. Poisson bootstrap (Hanley & MacGibbon 2006): each
    claim is drawn a Poisson(1) number of times, so a pattern c claims share is drawn Poisson(c)
    times: one bisection per pattern, however many claims it holds."""
    rng = random.Random(seed)
    draws = [(u, *_poisson_cdf(n)) for u, n in sorted(t.items())]
    for _ in range(resamples):
        sample = {}
        for u, low, cdf in draws:
            if k := low + bisect(cdf, rng.random() * cdf[-1]):
                sample[u] = k
        yield sample


Interval = tuple[float, float] | None


def bootstrap(
    t: Table,
    statistics: list[Callable[[Table], float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> list[Interval]:
    """The percentile interval of each statistic over the same `resamples` resamples of the
    claims."""
    draws: list[list[float]] = [[] for _ in statistics]
    for sample in resamples_of(t, resamples=resamples, seed=seed):
        for values, statistic in zip(draws, statistics):
            if (value := statistic(sample)) is not None:
                values.append(value)
    return [_percentiles(sorted(values), resamples, level) for values in draws]


def _percentiles(values: list[float], resamples: int, level: float) -> Interval:
    if not values or len(values) < resamples / 2:
        return None
    tail = (1 - level) / 2
    return values[round(tail * (len(values) - 1))], values[round((1 - tail) * (len(values) - 1))]


# --- one set of figures -------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A statistic with its confidence interval, or None and why it is not given."""

    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class Agreement:
    claims: int
    ratings: int
    raters: int
    percent: Figure
    kappa: Figure
    alpha: Figure


def figures(
    t: Table,
    statistics: list[Callable[[Table], float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[Figure]:
    """Each statistic on `t` with its interval (one bootstrap for them all). Percent agreement
    needs claims only; the chance-corrected statistics also two labels or more."""
    reasons = [
        ("" if claims(t) else NO_DATA) if statistic is percent_agreement else undefined_reason(t)
        for statistic in statistics
    ]
    values = [None if reason else s(t) for s, reason in zip(statistics, reasons)]
    measured = [s for s, v in zip(statistics, values) if v is not None]
    intervals = iter(
        bootstrap(t, measured, resamples=resamples, seed=seed) if measured and resamples else []
    )
    out = []
    for value, reason in zip(values, reasons):
        if value is None:
            out.append(Figure(None, reason=reason or "undefined on these ratings"))
        else:
            out.append(Figure(value, *(next(intervals, None) or (None, None))))
    return out


def pooled(t: Table) -> Counter[Unit]:
    """The same claims with who rated them forgotten: all a statistic that ignores the raters
    reads."""
    out: Counter[Unit] = Counter()
    for u, n in t.items():
        out[tuple(("", label) for label in sorted(label for _, label in u))] += n
    return out


def agreement(
    t: Table,
    *,
    kappa: Callable[[Table], float | None] = fleiss_kappa,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Agreement:
    """Percent agreement, kappa (Fleiss', or `two_rater_kappa` for one pair) and alpha, with
    intervals. Fleiss' kappa, percent agreement and alpha ignore who rated: they are computed on
    the pooled table (far fewer patterns, a cheaper bootstrap)."""
    source = pooled(t) if kappa is fleiss_kappa else t
    percent, kappa_figure, alpha = figures(source, [percent_agreement, kappa, krippendorff_alpha],
                                           resamples=resamples, seed=seed)
    return Agreement(claims=claims(t), ratings=ratings(t), raters=len(raters(t)),
                     percent=percent, kappa=kappa_figure, alpha=alpha)
