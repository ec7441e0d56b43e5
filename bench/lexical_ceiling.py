"""How far can word overlap go on a labelled file? (an analysis, not a test)

The offline judge labels claims from lexical evidence: which of a claim's words, names and numbers
its best passage window holds. This script measures the ceiling of that family of signals on a
dataset by scoring each record with five of them and, for each signal and for the rank-average
of every pair and of all five, the *best* threshold chosen on the file itself:

* `judge`: the offline judge's lowest claim confidence (its weighted support),
* `words`: share of the answer's word stems found anywhere in the passages,
* `bigrams` / `trigrams`: share of the answer's consecutive stem pairs / triples found in order,
* `partial_ratio`: rapidfuzz's best partial alignment of answer and passages (0-1).

Every threshold here is fitted to the data it scores: the figures are an optimistic upper bound
on what a rule built from these signals reaches, not a result. If the bound sits under a target,
the target needs evidence the words cannot give (paraphrase, entailment: a model).

    python bench/lexical_ceiling.py ../shared/data/hagrid-dev.jsonl
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rapidfuzz import fuzz  # noqa: E402

from judges.eval import load_dataset  # noqa: E402
from judges.backends.offline.judge import _CITATION_MARK, judge_offline  # noqa: E402
from judges.text import stem  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9]+")
SIGNALS = ("judge", "words", "bigrams", "trigrams", "partial_ratio")


def _ngram_share(answer: list[str], passage: list[str], n: int) -> float:
    wanted = list(zip(*(answer[i:] for i in range(n))))
    have = set(zip(*(passage[i:] for i in range(n))))
    return sum(g in have for g in wanted) / len(wanted) if wanted else 1.0


def signals(record) -> dict[str, float]:
    request = record.request
    result = judge_offline(request)
    answer = _CITATION_MARK.sub(" ", request.answer).lower()
    sources = " ".join(p.text for p in request.passages).lower()
    answer_stems = [stem(w) for w in _WORD.findall(answer)]
    source_stems = [stem(w) for w in _WORD.findall(sources)]
    return {
        "judge": min((c.confidence for c in result.claims), default=1.0),
        "words": _ngram_share(answer_stems, source_stems, 1),
        "bigrams": _ngram_share(answer_stems, source_stems, 2),
        "trigrams": _ngram_share(answer_stems, source_stems, 3),
        "partial_ratio": (
            fuzz.partial_ratio(answer, sources) / 100 if len(answer) < len(sources) else 0.0
        ),
    }


def best_balanced_accuracy(scores: list[float], gold: list[bool]) -> tuple[float, float]:
    """(balanced accuracy, threshold) of "hallucinated when score < threshold", best over
    thresholds."""
    positives = sum(gold)
    negatives = len(gold) - positives
    best = (0.0, 0.0)
    for threshold in sorted(set(scores)):
        tp = sum(1 for s, g in zip(scores, gold) if g and s < threshold)
        tn = sum(1 for s, g in zip(scores, gold) if not g and s >= threshold)
        best = max(best, ((tp / positives + tn / negatives) / 2, threshold))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    records, skipped = load_dataset(args.dataset, limit=args.limit)
    rows = [signals(r) for r in records]
    gold = [r.hallucinated for r in records]
    # Rank-normalize so signals on different scales can be averaged.
    ranks = {}
    for name in SIGNALS:
        ordered = sorted(row[name] for row in rows)
        ranks[name] = [bisect.bisect_left(ordered, row[name]) / len(ordered) for row in rows]
    print(f"{args.dataset}: {len(records)} records ({len(skipped)} skipped), "
          f"{sum(gold) / len(gold):.0%} hallucinated; thresholds fitted on the file itself")
    print(f"{'signal':40} {'best BA':>8} {'threshold':>10}")
    for name in SIGNALS:
        ba, threshold = best_balanced_accuracy([row[name] for row in rows], gold)
        print(f"{name:40} {ba:8.3f} {threshold:10.3f}")
    combos = [*itertools.combinations(SIGNALS, 2), SIGNALS]
    for combo in combos:
        averaged = [sum(ranks[name][i] for name in combo) / len(combo) for i in range(len(rows))]
        ba, _ = best_balanced_accuracy(averaged, gold)
        print(f"{'rank mean of ' + '+'.join(combo):40} {ba:8.3f} {'':>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
