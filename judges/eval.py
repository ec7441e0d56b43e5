"""Measure a judge on labelled data: `python -m judges eval --dataset FILE.jsonl`.

The data format is the one `../shared/data/README.md` describes: one JSON object per line with
`id`, `dataset`, `task_type`, `question` (may be null), `passages` [{id, text}], `answer`
(byte-exact: offsets point into it), `hallucinated`, `spans` [{start, end, text, label}],
`sentence_labels` (null or [{start, end, label}]) and `meta`. Required: `id`, `task_type`,
`passages`, `answer`, `hallucinated`, `spans`; `dataset` defaults to "", `question`,
`sentence_labels` to null and `meta` to {}; other top-level keys are ignored. A line that fails
validation is never dropped silently: it is returned as `Skipped` with its line, id and reason.
Only `question`, `passages` and `answer` reach the judge; the labels and `meta` never do.

What is scored, for the records the judge answered (a record whose judge call failed is listed
as an error and left out of every figure):

* **response level**: predicted hallucinated = the result has any claim whose label is not
  SUPPORTED, or any fabrication. Precision, recall and F1 of the positive class "hallucinated",
  and balanced accuracy (the mean of the true-positive and true-negative rates).
* **span level**, only where at least one record of the group has a non-empty `spans` list, and
  then over all records of the group: predicted positive characters are the answer characters
  inside the `answer_span` of non-SUPPORTED claims and of fabrications (one without an
  `answer_span` counts at response level only); gold positive characters are the union of the
  spans labelled `Unwanted*` or `Questionable` (`Benign`, `Unspecified` and anything else are
  ignored). Character precision, recall and F1, micro-averaged: the counts are summed over the
  records before dividing.
* **sentence level**, only for records with `sentence_labels`: a sentence is predicted
  unsupported when a non-SUPPORTED claim or a fabrication overlaps it; its gold class comes from
  its label (`sentence_label_is_positive`, table below). Balanced accuracy over all labelled
  sentences pooled, and their number `n`.

Zero divisions: precision, recall and F1 are 0.0 when their denominator is 0 (no predicted
positives, no gold positives, P + R = 0). Balanced accuracy averages the rates of the classes
that occur in the gold labels (as scikit-learn does): with only positives it is the
true-positive rate, with only negatives the true-negative rate, and 0.0 with no records at all.

Baselines, on exactly the records the judge answered and with the same metric code:

* the detectors whose predictions FaithBench ships in `meta.metadata` (`DETECTORS`; a value
  below 0.5 means "hallucinated"; a record without a numeric value is left out for that
  detector only, so each detector has its own `n`);
* "flag everything";
* a lexical-recall rule (`lexical_recall_baseline`): the share of a sentence's content words
  found anywhere in the passages; the answer is predicted hallucinated when any sentence's share
  is below one threshold. Reported at 0.5 and at the best threshold on the file itself, which is
  tuned on the data it scores: an optimistic upper bound, not a fair competitor.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.engine import JudgeConfig, JudgeError, judge
from judges.text import content_words, split_sentences
from judges.types import JudgeRequest, JudgeResult

# --- labels ------------------------------------------------------------------------------------


def span_label_is_positive(label: str) -> bool:
    """FaithBench's rule: `Unwanted`, `Unwanted.Intrinsic`, `Unwanted.Extrinsic` and
    `Questionable` are hallucinations; `Benign`, `Unspecified` and anything else are not counted."""
    return label.startswith("Unwanted") or label == "Questionable"


# Sentence labels that mean "this sentence is fine" (the negative class). The label is compared
# after lowercasing and turning spaces and hyphens into underscores; every other label, such as
# "unsupported", "not_supported", "partially_supported", "contradicted", "hallucinated",
# "ungrounded" or "not_attributable", is positive.
#
# | label (normalized)                              | meaning in the sets that use it   |
# |-------------------------------------------------|-----------------------------------|
# | supported, fully_supported                      | claim-verification sets           |
# | grounded                                        | grounding maps (seed 004)         |
# | faithful, consistent, factual, accurate, correct| summarization and QA faithfulness |
# | attributable, entailed, entailment              | attribution / NLI sets            |
# | not_hallucinated, no_hallucination, ok, true    | binary "is it fine" flags         |
SENTENCE_NEGATIVE_LABELS: frozenset[str] = frozenset(
    {
        "supported", "fully_supported", "grounded", "faithful", "consistent", "factual", "accurate",
        "correct", "attributable", "entailed", "entailment", "not_hallucinated", "no_hallucination",
        "ok", "true",
    }
)


def normalize_label(label: str) -> str:
    return "_".join(label.strip().lower().replace("-", " ").split())


def sentence_label_is_positive(label: str) -> bool:
    """True when a gold sentence label means "not supported by the passages"."""
    return normalize_label(label) not in SENTENCE_NEGATIVE_LABELS


# FaithBench's `meta.metadata` keys, with the names the paper uses. Values are scores or 0/1
# votes where below 0.5 means "hallucinated".
DETECTORS: tuple[tuple[str, str], ...] = (
    ("gpt_4o", "GPT-4o"),
    ("gpt-4-turbo", "GPT-4-Turbo"),
    ("gpt-3.5-turbo", "GPT-3.5-Turbo"),
    ("hhem-2.1", "HHEM-2.1"),
    ("hhem-2.1-english", "HHEM-2.1-English"),
    ("hhemv1", "HHEM-1"),
    ("trueteacher", "TrueTeacher"),
    ("true_nli", "TRUE-NLI"),
)
DETECTOR_THRESHOLD = 0.5
LEXICAL_THRESHOLD = 0.5

# --- records -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldSpan:
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Record:
    id: str
    line: int
    dataset: str
    task_type: str
    request: JudgeRequest
    hallucinated: bool
    spans: tuple[GoldSpan, ...]
    sentence_labels: tuple[GoldSpan, ...] | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class Skipped:
    line: int
    id: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "id": self.id, "reason": self.reason}


class InvalidRecord(ValueError):
    pass


class DatasetError(Exception):
    """The dataset file itself cannot be read."""


def load_dataset(path: str | Path, limit: int | None = None) -> tuple[list[Record], list[Skipped]]:
    """Valid records in file order (at most `limit` of them) and every line that was not one.

    Blank lines are not records. A repeated id is skipped, naming the line of its first use.
    """
    records: list[Record] = []
    skipped: list[Skipped] = []
    first_line: dict[str, int] = {}
    try:
        handle = open(path, encoding="utf-8")
    except OSError as error:
        raise DatasetError(f"cannot read {path}: {error}") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if limit is not None and len(records) >= limit:
                    break
                if not line.strip():
                    continue
                record_id = None
                try:
                    obj = json.loads(line)
                    if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"]:
                        record_id = obj["id"]
                    record = parse_record(obj, number)
                except json.JSONDecodeError as error:
                    skipped.append(Skipped(number, None, f"not valid JSON: {error}"))
                    continue
                except InvalidRecord as error:
                    skipped.append(Skipped(number, record_id, str(error)))
                    continue
                if record.id in first_line:
                    skipped.append(Skipped(number, record.id, f"duplicate id (first used on line {first_line[record.id]})"))
                    continue
                first_line[record.id] = number
                records.append(record)
        except UnicodeDecodeError as error:
            raise DatasetError(f"{path} is not UTF-8: {error}") from None
    return records, skipped


def parse_record(obj: Any, line: int = 0) -> Record:
    """One dataset line as a Record; InvalidRecord says what is wrong with it."""
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {type(obj).__name__}")
    record_id = _required(obj, "id", str)
    if not record_id:
        raise InvalidRecord("id: must not be empty")
    task_type = _required(obj, "task_type", str)
    if not task_type:
        raise InvalidRecord("task_type: must not be empty")
    dataset = obj.get("dataset", "")
    if not isinstance(dataset, str):
        raise InvalidRecord("dataset: must be a string")
    answer = _required(obj, "answer", str)
    hallucinated = _required(obj, "hallucinated", bool)
    passages = _required(obj, "passages", list)
    question = obj.get("question")
    if question is not None and not isinstance(question, str):
        raise InvalidRecord("question: must be a string or null")
    meta = obj.get("meta", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidRecord("meta: must be an object")
    spans = _spans(_required(obj, "spans", list), answer, "spans", with_text=True)
    raw_sentences = obj.get("sentence_labels")
    if raw_sentences is not None and not isinstance(raw_sentences, list):
        raise InvalidRecord("sentence_labels: must be a list or null")
    sentences = None if raw_sentences is None else _spans(raw_sentences, answer, "sentence_labels", with_text=False)
    try:
        request = JudgeRequest.model_validate({"question": question or "", "passages": passages, "answer": answer})
    except ValidationError as error:
        raise InvalidRecord(describe_validation_error(error)) from None
    return Record(
        id=record_id, line=line, dataset=dataset, task_type=task_type, request=request,
        hallucinated=hallucinated, spans=spans, sentence_labels=sentences, meta=meta,
    )


def _required(obj: dict[str, Any], key: str, kind: type) -> Any:
    if key not in obj or obj[key] is None:
        raise InvalidRecord(f"{key}: required")
    value = obj[key]
    # bool is an int in Python; neither stands in for the other here.
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InvalidRecord(f"{key}: must be {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


_KIND_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "an object", int: "an integer"}


def _spans(raw: list[Any], answer: str, name: str, *, with_text: bool) -> tuple[GoldSpan, ...]:
    spans = []
    for position, item in enumerate(raw):
        where = f"{name}[{position}]"
        if not isinstance(item, dict):
            raise InvalidRecord(f"{where}: expected an object")
        start, end, label = item.get("start"), item.get("end"), item.get("label")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise InvalidRecord(f"{where}: start and end must be integers")
        if not 0 <= start < end <= len(answer):
            raise InvalidRecord(f"{where}: [{start}, {end}) is not a non-empty span of the answer ({len(answer)} chars)")
        if not isinstance(label, str):
            raise InvalidRecord(f"{where}.label: must be a string")
        if with_text and "text" in item and item["text"] != answer[start:end]:
            raise InvalidRecord(f"{where}.text: differs from answer[{start}:{end}] (offsets must point into the answer)")
        spans.append(GoldSpan(start, end, label))
    return tuple(spans)


def describe_validation_error(error: ValidationError) -> str:
    """One clause per problem, naming the field as a client writes it: passages[0].text."""
    parts = []
    for problem in error.errors():
        path = ""
        for part in problem["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        parts.append(f"{path or '(record)'}: {problem['msg']}")
    return "; ".join(parts)


# --- tune / report halves ----------------------------------------------------------------------

# Rules are tuned on one half of a dev set and figures are reported on the other. A record's half
# follows from its passages, not its id: FaithBench has ten summaries of each source, and a source
# whose summaries sat in both halves would leak what was tuned into what is reported.
SPLITS: tuple[str, ...] = ("tune", "report")


def split_of(key: str) -> str:
    """'tune' or 'report', by a stable hash of `key` (the same on every machine and run)."""
    return SPLITS[hashlib.sha256(key.encode("utf-8")).digest()[0] & 1]


def source_key(passage_texts: Iterable[str]) -> str:
    """What identifies a record's source: its passage texts, in order."""
    return hashlib.sha256("\x1e".join(passage_texts).encode("utf-8")).hexdigest()


def record_split(request: JudgeRequest) -> str:
    return split_of(source_key(passage.text for passage in request.passages))


def select_split(records: Sequence[Record], split: str) -> list[Record]:
    """The records of one half ('tune' or 'report'), or all of them ('all')."""
    if split == "all":
        return list(records)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: expected one of {SPLITS + ('all',)}")
    return [record for record in records if record_split(record.request) == split]


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


def best_lexical_threshold(min_recalls: Sequence[float | None], gold: Sequence[bool]) -> tuple[float, dict[str, float]]:
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
    """The detector's prediction (True = hallucinated), or None when the record has no usable value."""
    metadata = record.meta.get("metadata")
    if not isinstance(metadata, dict):
        return None
    value = metadata.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value < DETECTOR_THRESHOLD


# --- running the judge -------------------------------------------------------------------------


@dataclass
class Outcome:
    record: Record
    result: JudgeResult | None = None
    seconds: float = 0.0
    error: str | None = None
    transient: bool = False
    attempts: int = 0

    def error_dict(self) -> dict[str, Any]:
        return {
            "id": self.record.id, "line": self.record.line, "task_type": self.record.task_type,
            "error": self.error, "transient": self.transient, "attempts": self.attempts,
        }


def judge_record(record: Record, config: JudgeConfig) -> Outcome:
    started = time.perf_counter()
    try:
        output = judge(record.request, config)
    except JudgeError as error:
        return Outcome(record, seconds=time.perf_counter() - started, error=str(error),
                       transient=error.transient, attempts=error.attempts)
    except Exception as error:  # noqa: BLE001 - a judge bug on one record must not end a long run unreported
        return Outcome(record, seconds=time.perf_counter() - started,
                       error=f"judge crashed: {type(error).__name__}: {error}")
    return Outcome(record, result=output.result, seconds=time.perf_counter() - started)


def run_judge(
    records: Sequence[Record],
    config: JudgeConfig,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Judge every record, in file order. One worker runs in this thread (honest timings);
    more run in a thread pool (for a judge that waits on the network)."""
    outcomes: list[Outcome] = []
    if workers <= 1:
        for record in records:
            outcomes.append(judge_record(record, config))
            if progress:
                progress(len(outcomes), len(records))
        return outcomes
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for outcome in pool.map(lambda record: judge_record(record, config), records):
            outcomes.append(outcome)
            if progress:
                progress(len(outcomes), len(records))
    return outcomes


# --- the report --------------------------------------------------------------------------------


def group_metrics(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """n, seconds_per_answer, response, span and sentence figures of judged outcomes."""
    judged = [o for o in outcomes if o.result is not None]
    n = len(judged)
    response = binary_metrics([o.record.hallucinated for o in judged], [predicted_hallucinated(o.result) for o in judged])
    span = None
    if any(o.record.spans for o in judged):
        span = span_metrics(
            (gold_positions(o.record.spans), predicted_positions(o.result, len(o.record.request.answer)))
            for o in judged
        )
    sentence = None
    labelled = [o for o in judged if o.record.sentence_labels is not None]
    if labelled:
        pairs = [pair for o in labelled for pair in sentence_pairs(o.record.sentence_labels, o.result)]
        sentence = {
            "balanced_accuracy": balanced_accuracy(Confusion.of([g for g, _ in pairs], [p for _, p in pairs])),
            "n": len(pairs),
        }
    return {
        "n": n,
        "seconds_per_answer": sum(o.seconds for o in judged) / n if n else 0.0,
        "response": response,
        "span": span,
        "sentence": sentence,
    }


def baselines(judged: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """Published detectors, flag-everything and lexical recall on the records the judge answered."""
    gold = [o.record.hallucinated for o in judged]
    ours = [predicted_hallucinated(o.result) for o in judged]
    blocks: dict[str, dict[str, Any]] = {}
    for key, name in DETECTORS:
        votes = [(index, detector_vote(o.record, key)) for index, o in enumerate(judged)]
        present = [(index, vote) for index, vote in votes if vote is not None]
        if not present:
            continue
        block: dict[str, Any] = {"name": name, "source": "meta.metadata", "n": len(present)}
        block |= binary_metrics([gold[i] for i, _ in present], [vote for _, vote in present])
        if len(present) != len(judged):
            block["judge_on_same_records"] = binary_metrics([gold[i] for i, _ in present], [ours[i] for i, _ in present])
        blocks[key] = block
    blocks["flag_everything"] = {"name": "flag everything", "source": "baseline", "n": len(judged)} | binary_metrics(
        gold, [True] * len(judged)
    )
    min_recalls = [min(recalls, default=None) for recalls in (sentence_recalls(o.record.request) for o in judged)]
    fixed = [m is not None and m < LEXICAL_THRESHOLD for m in min_recalls]
    blocks["lexical_recall"] = {
        "name": f"lexical recall < {LEXICAL_THRESHOLD:g}", "source": "baseline", "n": len(judged),
        "threshold": LEXICAL_THRESHOLD, "tuned_on_same_data": False,
    } | binary_metrics(gold, fixed)
    threshold, metrics = best_lexical_threshold(min_recalls, gold)
    blocks["lexical_recall_best"] = {
        "name": f"lexical recall < {threshold:.3f} (tuned here)", "source": "baseline", "n": len(judged),
        "threshold": round(threshold, 4), "tuned_on_same_data": True,
    } | metrics
    return blocks


def build_report(
    outcomes: Sequence[Outcome],
    skipped: Sequence[Skipped] = (),
    *,
    dataset: str = "",
    backend: str = "",
    profile: str = "",
    split: str = "all",
) -> dict[str, Any]:
    judged = [o for o in outcomes if o.result is not None]
    report = group_metrics(outcomes)
    by_task: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_task.setdefault(outcome.record.task_type, []).append(outcome)
    report["by_task_type"] = {name: group_metrics(group) for name, group in sorted(by_task.items())}
    report["skipped"] = [s.as_dict() for s in skipped]
    report["errors"] = [o.error_dict() for o in outcomes if o.result is None]
    report["dataset"] = dataset
    report["backend"] = backend
    report["profile"] = profile
    report["split"] = split
    report["detectors"] = baselines(judged)
    return report


# --- the table ---------------------------------------------------------------------------------


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_report(report: dict[str, Any], *, wall_seconds: float | None = None, workers: int = 1) -> str:
    lines = [
        f"dataset  {report['dataset']} (split {report.get('split', 'all')})",
        f"judge    {report['profile']} (backend {report['backend']}, workers {workers})",
        f"records  {report['n']} judged, {len(report['skipped'])} skipped, {len(report['errors'])} errors"
        + (f"; {wall_seconds:.1f} s wall" if wall_seconds is not None else ""),
        "",
    ]
    header = (
        f"{'':<16} {'n':>6} {'s/answer':>9}  {'resp P':>6} {'resp R':>6} {'resp F1':>7} {'resp BA':>7}"
        f"  {'span P':>6} {'span R':>6} {'span F1':>7}  {'sent BA':>7} {'sent n':>6}"
    )
    lines.append(header)
    rows = [("all", report)] + list(report["by_task_type"].items())
    for name, group in rows:
        response, span, sentence = group["response"], group["span"] or {}, group["sentence"] or {}
        lines.append(
            f"{name[:16]:<16} {group['n']:>6} {group['seconds_per_answer']:>9.4f}"
            f"  {_figure(response['precision']):>6} {_figure(response['recall']):>6}"
            f" {_figure(response['f1']):>7} {_figure(response['balanced_accuracy']):>7}"
            f"  {_figure(span.get('precision')):>6} {_figure(span.get('recall')):>6} {_figure(span.get('f1')):>7}"
            f"  {_figure(sentence.get('balanced_accuracy')):>7} {sentence.get('n', '-'):>6}"
        )
    lines += ["", "Response level on the same records (positive class: hallucinated)",
              f"{'detector':<40} {'n':>6} {'P':>6} {'R':>6} {'F1':>6} {'BA':>6}"]
    response = report["response"]
    lines.append(
        f"{'ClaimDesk ' + report['profile']:<40} {report['n']:>6} {_figure(response['precision']):>6}"
        f" {_figure(response['recall']):>6} {_figure(response['f1']):>6} {_figure(response['balanced_accuracy']):>6}"
    )
    for block in report["detectors"].values():
        lines.append(
            f"{block['name'][:40]:<40} {block['n']:>6} {_figure(block['precision']):>6} {_figure(block['recall']):>6}"
            f" {_figure(block['f1']):>6} {_figure(block['balanced_accuracy']):>6}"
        )
    if "lexical_recall_best" in report["detectors"]:
        lines.append("(the tuned lexical threshold is chosen on these same records: an optimistic upper bound)")
    if report["skipped"]:
        lines += ["", f"Skipped records ({len(report['skipped'])}, invalid: not judged, not scored):"]
        lines += _first([f"  line {s['line']} {s['id'] or '(no id)'}: {s['reason']}" for s in report["skipped"]])
    if report["errors"]:
        lines += ["", f"Judge errors ({len(report['errors'])}, left out of every figure above):"]
        lines += _first([f"  line {e['line']} {e['id']}: {e['error']}" for e in report["errors"]])
    return "\n".join(lines)


def _first(lines: list[str], shown: int = 10) -> list[str]:
    if len(lines) <= shown:
        return lines
    return lines[:shown] + [f"  ... and {len(lines) - shown} more (the --report JSON lists them all)"]


def prediction_rows(outcomes: Sequence[Outcome]) -> Iterable[dict[str, Any]]:
    """One line per record for error analysis: gold, prediction and what the judge flagged."""
    for outcome in outcomes:
        row: dict[str, Any] = {"id": outcome.record.id, "task_type": outcome.record.task_type,
                               "hallucinated": outcome.record.hallucinated, "seconds": round(outcome.seconds, 6)}
        if outcome.result is None:
            row["error"] = outcome.error
        else:
            row["predicted"] = predicted_hallucinated(outcome.result)
            row["flagged_spans"] = flagged_spans(outcome.result)
            row["labels"] = [claim.label for claim in outcome.result.claims]
            row["fabrications"] = len(outcome.result.fabrications)
        yield row


__all__ = [
    "DETECTORS", "SENTENCE_NEGATIVE_LABELS", "Confusion", "DatasetError", "GoldSpan", "InvalidRecord", "Outcome",
    "Record", "Skipped", "balanced_accuracy", "baselines", "best_lexical_threshold", "binary_metrics",
    "SPLITS", "build_report", "detector_vote", "flagged_spans", "format_report", "gold_positions", "lexical_recall_baseline",
    "load_dataset", "parse_record", "precision_recall_f1", "predicted_hallucinated", "predicted_positions",
    "prediction_rows", "record_split", "run_judge", "select_split", "sentence_label_is_positive", "sentence_pairs", "sentence_recalls",
    "source_key", "span_metrics", "split_of",
]
