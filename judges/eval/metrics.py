"""The figures: confusion counts, precision/recall/F1, balanced accuracy, character spans, and what
a judge's result predicts at each level."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judges.types import JudgeResult
from judges.eval.records import GoldSpan, sentence_label_is_positive, span_label_is_positive


# --- metrics -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def of(cls, gold: Iterable[bool], predicted: Iterable[bool]) -> Confusion:
        tp = fp = fn = tn = 0
        gold, predicted = list(gold), list(predicted)
        if len(gold) != len(predicted):
            raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
        for g, p in zip(gold, predicted):
            if g and p:
                tp += 1
            elif p:
                fp += 1
            elif g:
                fn += 1
            else:
                tn += 1
        return cls(tp, fp, fn, tn)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def precision_recall_f1(tp: int, fp: int, fn: int) -> dict[str, float]:
    """0.0 for any figure whose denominator is 0."""
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = _ratio(2 * precision * recall, precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1}


def balanced_accuracy(confusion: Confusion) -> float:
    """Mean of the true-positive and true-negative rates, over the classes present in the gold
    labels (one class only: that class's rate; no records: 0.0)."""
    rates = []
    if confusion.tp + confusion.fn:
        rates.append(confusion.tp / (confusion.tp + confusion.fn))
    if confusion.tn + confusion.fp:
        rates.append(confusion.tn / (confusion.tn + confusion.fp))
    return sum(rates) / len(rates) if rates else 0.0


def binary_metrics(gold: Sequence[bool], predicted: Sequence[bool]) -> dict[str, float]:
    """Precision, recall, F1 (positive class = True) and balanced accuracy."""
    confusion = Confusion.of(gold, predicted)
    return precision_recall_f1(confusion.tp, confusion.fp, confusion.fn) | {
        "balanced_accuracy": balanced_accuracy(confusion)
    }


def span_metrics(pairs: Iterable[tuple[set[int], set[int]]]) -> dict[str, float]:
    """Micro-averaged character precision, recall and F1 over (gold, predicted) position sets,
    one pair per record: true positives, predictions and gold positions are summed first."""
    tp = predicted_total = gold_total = 0
    for gold, predicted in pairs:
        tp += len(gold & predicted)
        predicted_total += len(predicted)
        gold_total += len(gold)
    return precision_recall_f1(tp, predicted_total - tp, gold_total - tp)


# --- predictions -------------------------------------------------------------------------------


def flagged_spans(result: JudgeResult) -> list[tuple[int, int]]:
    """Answer spans of non-SUPPORTED claims and of fabrications (those that have one)."""
    spans = [claim.answer_span for claim in result.claims if claim.label != "SUPPORTED"]
    spans += [fabrication.answer_span for fabrication in result.fabrications]
    return [span for span in spans if span is not None]


def predicted_hallucinated(result: JudgeResult) -> bool:
    return any(claim.label != "SUPPORTED" for claim in result.claims) or bool(result.fabrications)


def predicted_positions(result: JudgeResult, answer_length: int) -> set[int]:
    positions: set[int] = set()
    for start, end in flagged_spans(result):
        positions.update(range(max(start, 0), min(end, answer_length)))
    return positions


def gold_positions(spans: Iterable[GoldSpan]) -> set[int]:
    positions: set[int] = set()
    for span in spans:
        if span_label_is_positive(span.label):
            positions.update(range(span.start, span.end))
    return positions


def sentence_pairs(sentences: Iterable[GoldSpan], result: JudgeResult) -> list[tuple[bool, bool]]:
    """(gold positive, predicted positive) per labelled sentence."""
    flagged = flagged_spans(result)
    return [
        (
            sentence_label_is_positive(sentence.label),
            any(max(start, sentence.start) < min(end, sentence.end) for start, end in flagged),
        )
        for sentence in sentences
    ]
