"""Running the judge over records, and the report: the figures per group beside the baselines, the
table `python -m judges eval` prints, the per-record predictions."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from judges.engine import JudgeConfig, JudgeError, judge
from judges.types import JudgeResult
from judges.eval.baselines import best_lexical_threshold, detector_vote, sentence_recalls
from judges.eval.metrics import (
    Confusion,
    balanced_accuracy,
    binary_metrics,
    flagged_spans,
    gold_positions,
    predicted_hallucinated,
    predicted_positions,
    sentence_pairs,
    span_metrics,
)
from judges.eval.records import DETECTORS, LEXICAL_THRESHOLD, Record, Skipped


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
    except (
        Exception
    ) as error:  # noqa: BLE001 - a judge bug on one record must not end a long run unreported
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
    response = binary_metrics(
        [o.record.hallucinated for o in judged], [predicted_hallucinated(o.result) for o in judged]
    )
    span = None
    if any(o.record.spans for o in judged):
        span = span_metrics(
            (
                gold_positions(o.record.spans),
                predicted_positions(o.result, len(o.record.request.answer)),
            )
            for o in judged
        )
    sentence = None
    labelled = [o for o in judged if o.record.sentence_labels is not None]
    if labelled:
        pairs = [
            pair for o in labelled for pair in sentence_pairs(o.record.sentence_labels, o.result)
        ]
        sentence = {
            "balanced_accuracy": balanced_accuracy(
                Confusion.of([g for g, _ in pairs], [p for _, p in pairs])
            ),
            "n": len(pairs),
        }
    return {
        "n": n,
        "seconds_per_answer": sum(o.seconds for o in judged) / n if n else 0.0,
        "response": response,
        "span": span,
        "sentence": sentence,
    }


def baseline_figures(judged: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
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
            block["judge_on_same_records"] = binary_metrics(
                [gold[i] for i, _ in present], [ours[i] for i, _ in present]
            )
        blocks[key] = block
    blocks["flag_everything"] = {
        "name": "flag everything",
        "source": "baseline",
        "n": len(judged),
    } | binary_metrics(gold, [True] * len(judged))
    min_recalls = [
        min(recalls, default=None)
        for recalls in (sentence_recalls(o.record.request) for o in judged)
    ]
    fixed = [m is not None and m < LEXICAL_THRESHOLD for m in min_recalls]
    blocks["lexical_recall"] = {
        "name": f"lexical recall < {LEXICAL_THRESHOLD:g}", "source": "baseline", "n": len(judged),
        "threshold": LEXICAL_THRESHOLD, "tuned_on_same_data": False,
    } | binary_metrics(gold, fixed)
    threshold, metrics = best_lexical_threshold(min_recalls, gold)
    blocks["lexical_recall_best"] = {
        "name": f"lexical recall < {threshold:.3f} (tuned here)",
        "source": "baseline",
        "n": len(judged),
        "threshold": round(threshold, 4),
        "tuned_on_same_data": True,
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
    report["detectors"] = baseline_figures(judged)
    return report


# --- the table ---------------------------------------------------------------------------------


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_report(
    report: dict[str, Any], *, wall_seconds: float | None = None, workers: int = 1
) -> str:
    lines = [
        f"dataset  {report['dataset']} (split {report.get('split', 'all')})",
        f"judge    {report['profile']} (backend {report['backend']}, workers {workers})",
        f"records  {report['n']} judged, {len(report['skipped'])} skipped, {len(report['errors'])}"
        " errors"
        + (f"; {wall_seconds:.1f} s wall" if wall_seconds is not None else ""),
        "",
    ]
    header = (
        f"{'':<16} {'n':>6} {'s/answer':>9}  {'resp P':>6} {'resp R':>6} {'resp F1':>7}"
        f" {'resp BA':>7}  {'span P':>6} {'span R':>6} {'span F1':>7}  {'sent BA':>7} {'sent n':>6}"
    )
    lines.append(header)
    rows = [("all", report)] + list(report["by_task_type"].items())
    for name, group in rows:
        response, span, sentence = group["response"], group["span"] or {}, group["sentence"] or {}
        lines.append(
            f"{name[:16]:<16} {group['n']:>6} {group['seconds_per_answer']:>9.4f} "
            f" {_figure(response['precision']):>6} {_figure(response['recall']):>6}"
            f" {_figure(response['f1']):>7} {_figure(response['balanced_accuracy']):>7} "
            f" {_figure(span.get('precision')):>6} {_figure(span.get('recall')):>6}"
            f" {_figure(span.get('f1')):>7}  {_figure(sentence.get('balanced_accuracy')):>7}"
            f" {sentence.get('n', '-'):>6}"
        )
    lines += ["", "Response level on the same records (positive class: hallucinated)",
              f"{'detector':<40} {'n':>6} {'P':>6} {'R':>6} {'F1':>6} {'BA':>6}"]
    response = report["response"]
    lines.append(
        f"{'ClaimDesk ' + report['profile']:<40} {report['n']:>6}"
        f" {_figure(response['precision']):>6} {_figure(response['recall']):>6}"
        f" {_figure(response['f1']):>6} {_figure(response['balanced_accuracy']):>6}"
    )
    for block in report["detectors"].values():
        lines.append(
            f"{block['name'][:40]:<40} {block['n']:>6} {_figure(block['precision']):>6}"
            f" {_figure(block['recall']):>6} {_figure(block['f1']):>6}"
            f" {_figure(block['balanced_accuracy']):>6}"
        )
    if "lexical_recall_best" in report["detectors"]:
        lines.append(
            "(the tuned lexical threshold is chosen on these same records: an optimistic upper"
            " bound)"
        )
    if report["skipped"]:
        lines += [
            "",
            f"Skipped records ({len(report['skipped'])}, invalid: not judged, not scored):",
        ]
        lines += _first(
            [f"  line {s['line']} {s['id'] or '(no id)'}: {s['reason']}" for s in report["skipped"]]
        )
    if report["errors"]:
        lines += ["", f"Judge errors ({len(report['errors'])}, left out of every figure above):"]
        lines += _first([f"  line {e['line']} {e['id']}: {e['error']}" for e in report["errors"]])
    return "\n".join(lines)


def _first(lines: list[str], shown: int = 10) -> list[str]:
    if len(lines) <= shown:
        return lines
    return lines[:shown] + [
        f"  ... and {len(lines) - shown} more (the --report JSON lists them all)"
    ]


def prediction_rows(outcomes: Sequence[Outcome]) -> Iterable[dict[str, Any]]:
    """One line per record for error analysis: gold, prediction and what the judge flagged."""
    for outcome in outcomes:
        row: dict[str, Any] = {
            "id": outcome.record.id,
            "task_type": outcome.record.task_type,
            "hallucinated": outcome.record.hallucinated,
            "seconds": round(outcome.seconds, 6),
        }
        if outcome.result is None:
            row["error"] = outcome.error
        else:
            row["predicted"] = predicted_hallucinated(outcome.result)
            row["flagged_spans"] = flagged_spans(outcome.result)
            row["labels"] = [claim.label for claim in outcome.result.claims]
            row["fabrications"] = len(outcome.result.fabrications)
        yield row


__all__ = [
    "DETECTORS",
    "SENTENCE_NEGATIVE_LABELS",
    "Confusion",
    "DatasetError",
    "GoldSpan",
    "InvalidRecord",
    "Outcome",
    "Record",
    "Skipped",
    "balanced_accuracy",
    "baselines",
    "best_lexical_threshold",
    "binary_metrics",
    "SPLITS",
    "build_report",
    "detector_vote",
    "flagged_spans",
    "format_report",
    "gold_positions",
    "lexical_recall_baseline",
    "load_dataset",
    "parse_record",
    "precision_recall_f1",
    "predicted_hallucinated",
    "predicted_positions",
    "prediction_rows",
    "record_split",
    "run_judge",
    "select_split",
    "sentence_label_is_positive",
    "sentence_pairs",
    "sentence_recalls",
    "source_key",
    "span_metrics",
    "split_of",
]
