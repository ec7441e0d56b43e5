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

Where each part lives: `records.py` (the format, its labels, the halves), `metrics.py` (the figures
and what a result predicts), `baselines.py` (the detectors and the lexical rule), `run.py` (running
the judge, the report and its table). This package re-exports their public names.
"""

from judges.eval.records import (  # noqa: F401
    DETECTORS, DETECTOR_THRESHOLD, DatasetError, GoldSpan, InvalidRecord, LEXICAL_THRESHOLD,
    Record, SENTENCE_NEGATIVE_LABELS, SPLITS, Skipped, describe_validation_error, load_dataset,
    normalize_label, parse_record, record_split, select_split, sentence_label_is_positive,
    source_key, span_label_is_positive, split_of,
)
from judges.eval.metrics import (  # noqa: F401
    Confusion, balanced_accuracy, binary_metrics, flagged_spans, gold_positions,
    precision_recall_f1, predicted_hallucinated, predicted_positions, sentence_pairs,
    span_metrics,
)
from judges.eval.baselines import (  # noqa: F401
    best_lexical_threshold, detector_vote, lexical_recall_baseline, sentence_recalls,
)
from judges.eval.run import (  # noqa: F401
    Outcome, baseline_figures, build_report, format_report, group_metrics, judge_record,
    prediction_rows, run_judge,
)
