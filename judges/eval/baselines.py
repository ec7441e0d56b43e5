"""The baselines the judge is compared with: the detectors FaithBench ships, a lexical-recall
rule."""

from __future__ import annotations

import math
from collections.abc import Sequence

from judges.text import content_words, split_sentences
from judges.types import JudgeRequest
from judges.eval.metrics import binary_metrics
from judges.eval.records import DETECTOR_THRESHOLD, Record


# --- baselines ---------------------------------------------------------------------------------


def sentence_recalls(request: JudgeRequest) -> list[float]:
    """Per answer sentence with content words: the share of its distinct content words that occur
    in any passage. Sentences without content words (numbers only, "Yes.") are not scored."""
    vocabulary: set[str] = set()
    for passage in request.passages:
        vocabulary.update(content_words(passage.text))
    recalls = []
    for start, end in split_sentences(request.answer):
        words = set(content_words(request.answer[start:end]))
        if words:
            recalls.append(len(words & vocabulary) / len(words))
    return recalls


def lexical_recall_baseline(request: JudgeRequest, threshold: float) -> bool:
    """Predicted hallucinated: some sentence's content-word recall against the passages is below
    `threshold`."""
    return any(recall < threshold for recall in sentence_recalls(request))


def best_lexical_threshold(
    min_recalls: Sequence[float | None], gold: Sequence[bool]
) -> tuple[float, dict[str, float]]:
    """The threshold with the highest balanced accuracy on these very records (ties: the lowest
    threshold), and its metrics. `min_recalls[i]` is record i's lowest sentence recall, None
    when no sentence was scored (never flagged). Tuned on the data it scores: optimistic."""
    values = sorted({m for m in min_recalls if m is not None})
    candidates = [0.0]
    candidates += [(low + high) / 2 for low, high in zip(values, values[1:])]
    if values:
        candidates.append(values[-1] + 0.01)
    best: tuple[float, dict[str, float]] | None = None
    for threshold in candidates:
        predicted = [m is not None and m < threshold for m in min_recalls]
        metrics = binary_metrics(gold, predicted)
        if best is None or metrics["balanced_accuracy"] > best[1]["balanced_accuracy"]:
            best = (threshold, metrics)
    assert best is not None
    return best


def detector_vote(record: Record, key: str) -> bool | None:
    """The detector's prediction (True = hallucinated), or None when the record has no usable
    value."""
    metadata = record.meta.get("metadata")
    if not isinstance(metadata, dict):
        return None
    value = metadata.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value < DETECTOR_THRESHOLD
