"""`python -m judges eval` and the metrics behind it, on tiny synthetic datasets (never
../shared)."""

import json
import os
import subprocess
import sys

import pytest

from judges import eval as ev
from judges.engine import JudgeConfig, JudgeError
from judges.types import Claim, Fabrication, JudgeInfo, JudgeRequest, JudgeResult

POLICY = "The regular adult fare is $2.75 per ride. Seniors pay $1.35 per ride."
REPORT_KEYS = {"n", "seconds_per_answer", "response", "span", "sentence", "by_task_type",
               "skipped", "errors", "dataset", "backend", "profile", "split", "detectors"}
GROUP_KEYS = {"n", "seconds_per_answer", "response", "span", "sentence"}
RESPONSE_KEYS = {"precision", "recall", "f1", "balanced_accuracy"}


def record(record_id, answer, hallucinated, *, spans=(), task_type="summarization", metadata=None,
           sentence_labels=None, passages=None):
    meta = {} if metadata is None else {"metadata": metadata}
    return {
        "id": record_id,
        "dataset": "Synthetic",
        "task_type": task_type,
        "question": None,
        "passages": passages if passages is not None else [{"id": "P1", "text": POLICY}],
        "answer": answer,
        "hallucinated": hallucinated,
        "spans": [
            {"start": s, "end": e, "text": answer[s:e], "label": label} for s, e, label in spans
        ],
        "sentence_labels": sentence_labels,
        "meta": meta,
    }


def write_jsonl(path, rows):
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows),
        encoding="utf-8",
    )
    return path


def result(*claims, fabrications=()):
    return JudgeResult(
        verdict="GROUNDED",
        grounding_score=1.0,
        claims=list(claims),
        fabrications=list(fabrications),
        judge=JudgeInfo(profile="test", prompt_version="v0", backend="offline", model="none"),
    )


def claim(span, label):
    return Claim(id=f"c{span[0]}", text="x", answer_span=span, label=label)


# --- response-level metrics ------------------------------------------------------------------


def test_binary_metrics_on_a_hand_computed_case():
    gold = [True, True, True, False, False]
    predicted = [True, False, True, True, False]  # tp 2, fn 1, fp 1, tn 1
    metrics = ev.binary_metrics(gold, predicted)
    assert metrics["precision"] == pytest.approx(2 / 3)
    assert metrics["recall"] == pytest.approx(2 / 3)
    assert metrics["f1"] == pytest.approx(2 / 3)
    assert metrics["balanced_accuracy"] == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_nothing_predicted_positive_gives_zero_precision_not_an_error():
    metrics = ev.binary_metrics([True, False], [False, False])
    assert metrics == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "balanced_accuracy": 0.5}


def test_flag_everything_scores_the_positive_rate_as_precision_and_half_balanced_accuracy():
    metrics = ev.binary_metrics([True, True, True, False], [True] * 4)
    assert metrics["precision"] == 0.75
    assert metrics["recall"] == 1.0
    assert metrics["f1"] == pytest.approx(2 * 0.75 / 1.75)
    assert metrics["balanced_accuracy"] == 0.5


def test_balanced_accuracy_with_one_gold_class_is_that_class_rate():
    assert ev.binary_metrics([True, True], [True, False])["balanced_accuracy"] == 0.5
    negatives = ev.binary_metrics([False, False], [False, False])
    assert negatives == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "balanced_accuracy": 1.0}


def test_no_records_gives_zeros():
    assert ev.binary_metrics([], []) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "balanced_accuracy": 0.0,
    }


def test_prediction_counts_any_non_supported_claim_or_any_fabrication():
    assert not ev.predicted_hallucinated(result(claim((0, 5), "SUPPORTED")))
    assert ev.predicted_hallucinated(
        result(claim((0, 5), "SUPPORTED"), claim((6, 9), "PARTIALLY_SUPPORTED"))
    )
    assert ev.predicted_hallucinated(result(claim((0, 5), "SUPPORTED"),
                                            fabrications=[Fabrication(kind="statistic", text="9")]))
    assert not ev.predicted_hallucinated(result())


# --- span level --------------------------------------------------------------------------------


def test_span_metrics_ignore_benign_and_union_overlapping_gold_spans():
    answer = "abcdefghij"
    gold = ev.gold_positions(
        [
            ev.GoldSpan(0, 4, "Unwanted.Intrinsic"),
            ev.GoldSpan(2, 6, "Questionable"),
            ev.GoldSpan(7, 10, "Benign"),
            ev.GoldSpan(9, 10, "Unspecified"),
        ]
    )
    assert gold == set(range(6))
    predicted = ev.predicted_positions(
        result(claim((4, 8), "UNSUPPORTED"), claim((0, 3), "SUPPORTED")), len(answer)
    )
    assert predicted == {4, 5, 6, 7}
    metrics = ev.span_metrics([(gold, predicted)])
    assert metrics["precision"] == 0.5  # 4, 5 of 4..7
    assert metrics["recall"] == pytest.approx(2 / 6)
    assert metrics["f1"] == pytest.approx(0.4)


def test_span_metrics_are_micro_averaged_over_records():
    pairs = [({0, 1, 2, 3}, {0, 1}), (set(), {0, 1})]  # tp 2; predicted 4; gold 4
    assert ev.span_metrics(pairs) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}


def test_fabrication_spans_count_and_overlapping_predictions_count_once():
    found = result(claim((0, 4), "CONTRADICTED"), fabrications=[
        Fabrication(kind="statistic", text="cd", answer_span=(2, 6)),
        Fabrication(kind="quote", text="no span"),
    ])
    assert ev.predicted_positions(found, 5) == {0, 1, 2, 3, 4}  # clipped to the answer


def test_no_span_data_means_span_metrics_are_null():
    outcome = ev.Outcome(ev.parse_record(record("r1", "Seniors pay $1.35 per ride.", False)),
                         result=result(claim((0, 5), "UNSUPPORTED")))
    assert ev.group_metrics([outcome])["span"] is None


def test_a_record_without_spans_still_counts_when_the_group_has_span_data():
    answer = "Seniors pay $1.35 per ride."
    with_spans = ev.Outcome(
        ev.parse_record(record("a", answer, True, spans=[(12, 17, "Unwanted")])),
        result=result(claim((12, 17), "UNSUPPORTED")),
    )
    without = ev.Outcome(
        ev.parse_record(record("b", answer, False)), result=result(claim((0, 7), "UNSUPPORTED"))
    )
    span = ev.group_metrics([with_spans, without])["span"]
    assert span["recall"] == 1.0
    # the second record's 7 characters are false positives
    assert span["precision"] == pytest.approx(5 / 12)


# --- sentence level ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["supported", "GROUNDED", "faithful", "Fully supported", "attributable", "consistent"]
)
def test_sentence_labels_that_mean_fine_are_negative(label):
    assert not ev.sentence_label_is_positive(label)


@pytest.mark.parametrize(
    "label",
    [
        "unsupported",
        "not supported",
        "PARTIALLY_SUPPORTED",
        "contradicted",
        "hallucinated",
        "not-attributable",
        "UNGROUNDED",
    ],
)
def test_other_sentence_labels_are_positive(label):
    assert ev.sentence_label_is_positive(label)


def test_sentence_balanced_accuracy_from_overlapping_flags():
    answer = "One a. Two b. Thr c. Fou d."
    sentences = [
        {"start": 0, "end": 6, "label": "supported"},
        {"start": 7, "end": 13, "label": "unsupported"},
        {"start": 14, "end": 20, "label": "GROUNDED"},
        {"start": 21, "end": 27, "label": "hallucinated"},
    ]
    parsed = ev.parse_record(record("s", answer, True, sentence_labels=sentences))
    # Flags [6, 15) overlap sentences 2 and 3 (not sentence 1, which ends at 6); the fabrication
    # hits 4.
    judged = result(claim((6, 15), "UNSUPPORTED"), claim((0, 6), "SUPPORTED"),
                    fabrications=[Fabrication(kind="entity", text="d", answer_span=(25, 26))])
    assert ev.sentence_pairs(parsed.sentence_labels, judged) == [
        (False, False),
        (True, True),
        (False, True),
        (True, True),
    ]
    sentence = ev.group_metrics([ev.Outcome(parsed, result=judged)])["sentence"]
    assert sentence == {"balanced_accuracy": pytest.approx((1.0 + 0.5) / 2), "n": 4}


# --- baselines ---------------------------------------------------------------------------------


def test_lexical_recall_baseline_flags_a_sentence_whose_words_are_not_in_the_passages():
    passages = [{"text": "The cat sat on the mat in the kitchen."}]
    grounded = JudgeRequest.model_validate(
        {"passages": passages, "answer": "The cat sat on the mat."}
    )
    invented = JudgeRequest.model_validate(
        {"passages": passages, "answer": "The cat sat. The dog barked loudly."}
    )
    assert ev.sentence_recalls(grounded) == [1.0]
    assert ev.sentence_recalls(invented) == [1.0, 0.0]
    assert not ev.lexical_recall_baseline(grounded, 0.5)
    assert ev.lexical_recall_baseline(invented, 0.5)
    assert not ev.lexical_recall_baseline(invented, 0.0)


def test_best_lexical_threshold_is_chosen_on_the_data():
    threshold, metrics = ev.best_lexical_threshold(
        [0.0, 1.0, 0.5, None], [True, False, True, False]
    )
    assert threshold == 0.75
    assert metrics["balanced_accuracy"] == 1.0


def test_detector_votes_below_half_mean_hallucinated_and_missing_values_are_skipped():
    parsed = ev.parse_record(
        record(
            "d",
            "Seniors pay $1.35 per ride.",
            False,
            metadata={
                "gpt_4o": 0,
                "hhem-2.1": 0.9,
                "hhemv1": 0.4999,
                "trueteacher": None,
                "true_nli": True,
                "gpt-4-turbo": "1",
            },
        )
    )
    assert ev.detector_vote(parsed, "gpt_4o") is True
    assert ev.detector_vote(parsed, "hhem-2.1") is False
    assert ev.detector_vote(parsed, "hhemv1") is True
    for unusable in ("trueteacher", "true_nli", "gpt-4-turbo", "gpt-3.5-turbo"):
        assert ev.detector_vote(parsed, unusable) is None


def test_detector_baselines_use_the_same_records_and_count_n_per_detector():
    answer = "Seniors pay $1.35 per ride."
    outcomes = [
        ev.Outcome(
            ev.parse_record(record("a", answer, False, metadata={"gpt_4o": 0.2, "hhem-2.1": 0.9})),
            result=result(claim((0, 5), "SUPPORTED")),
        ),
        ev.Outcome(
            ev.parse_record(record("b", answer, True, metadata={"gpt_4o": 0})),
            result=result(claim((0, 5), "UNSUPPORTED")),
        ),
        ev.Outcome(
            ev.parse_record(record("c", answer, True, metadata={"gpt_4o": 1})), error="judge failed"
        ),
    ]
    blocks = ev.baseline_figures([o for o in outcomes if o.result is not None])
    # record c failed in our judge, so it is not scored for anyone
    assert blocks["gpt_4o"]["n"] == 2
    assert blocks["gpt_4o"]["precision"] == 0.5
    assert blocks["gpt_4o"]["recall"] == 1.0
    assert blocks["gpt_4o"]["balanced_accuracy"] == 0.5
    assert blocks["hhem-2.1"]["n"] == 1
    assert blocks["hhem-2.1"]["judge_on_same_records"]["balanced_accuracy"] == 1.0
    assert "trueteacher" not in blocks
    assert blocks["flag_everything"]["balanced_accuracy"] == 0.5
    assert blocks["lexical_recall"]["threshold"] == 0.5
    assert blocks["lexical_recall_best"]["tuned_on_same_data"] is True


# --- loading -----------------------------------------------------------------------------------


def test_invalid_records_are_skipped_with_their_id_and_reason(tmp_path):
    good = record("good", "Seniors pay $1.35 per ride.", False)
    bad_span = record("bad-span", "Seniors pay $1.35 per ride.", True)
    bad_span["spans"] = [{"start": 0, "end": 7, "text": "Juniors", "label": "Unwanted"}]
    path = write_jsonl(
        tmp_path / "data.jsonl",
        [
            good,
            "{not json",
            # valid: nothing was retrieved
            record("no-passages", "Seniors pay $1.35.", True, passages=[]),
            good | {"id": "yes", "hallucinated": "yes"},
            bad_span,
            record("out-of-range", "Short.", True, spans=[])
            | {"spans": [{"start": 2, "end": 99, "label": "Unwanted"}]},
            {k: v for k, v in good.items() if k != "answer"} | {"id": "no-answer"},
            good,
            "",
        ],
    )
    records, skipped = ev.load_dataset(path)
    assert [r.id for r in records] == ["good", "no-passages"]
    reasons = {(s.line, s.id): s.reason for s in skipped}
    assert list(reasons) == [(2, None), (4, "yes"), (5, "bad-span"), (6, "out-of-range"),
                             (7, "no-answer"), (8, "good")]
    assert reasons[(2, None)].startswith("not valid JSON")
    assert reasons[(4, "yes")] == "hallucinated: must be true or false"
    assert "differs from answer[0:7]" in reasons[(5, "bad-span")]
    assert "not a non-empty span" in reasons[(6, "out-of-range")]
    assert reasons[(7, "no-answer")] == "answer: required"
    assert reasons[(8, "good")] == "duplicate id (first used on line 1)"


def test_only_question_passages_and_answer_reach_the_judge():
    parsed = ev.parse_record(
        record("r", "Seniors pay $1.35 per ride.", True, metadata={"gpt_4o": 0})
    )
    assert parsed.request.question == ""
    assert parsed.request.metadata == {}
    assert parsed.request.passages[0].id == "P1"


def test_limit_counts_valid_records(tmp_path):
    rows = [record(f"r{i}", "Seniors pay $1.35 per ride.", False) for i in range(5)]
    records, skipped = ev.load_dataset(write_jsonl(tmp_path / "d.jsonl", ["[]", *rows]), limit=3)
    assert [r.id for r in records] == ["r0", "r1", "r2"]
    assert len(skipped) == 1


# --- running -----------------------------------------------------------------------------------


def test_a_judge_error_is_listed_and_left_out_of_the_figures(monkeypatch):
    records = [
        ev.parse_record(record(f"r{i}", "Seniors pay $1.35 per ride.", i == 1)) for i in range(3)
    ]

    def flaky_judge(request, config):
        if request is records[1].request:
            raise JudgeError("endpoint answered 500", transient=True, attempts=3)
        from judges.engine import JudgeOutput

        return JudgeOutput(result=result(claim((0, 7), "SUPPORTED")), raw_output="")

    monkeypatch.setattr(ev.run, "judge", flaky_judge)
    outcomes = ev.run_judge(records, JudgeConfig(), workers=2)
    # file order, whatever the pool did
    assert [o.record.id for o in outcomes] == [
        "r0",
        "r1",
        "r2",
    ]
    report = ev.build_report(outcomes)
    assert report["n"] == 2
    assert report["response"]["balanced_accuracy"] == 1.0  # only the two negatives, both right
    assert report["errors"] == [
        {
            "id": "r1",
            "line": 0,
            "task_type": "summarization",
            "error": "endpoint answered 500",
            "transient": True,
            "attempts": 3,
        }
    ]


# --- the command line --------------------------------------------------------------------------


@pytest.fixture
def cli(repo_root):
    def run(*args, env=None, timeout=60):
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))
        } | (env or {})
        return subprocess.run(
            [sys.executable, "-m", "judges", "eval", *map(str, args)],
            cwd=repo_root,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )

    return run


def four_records():
    grounded = "The regular adult fare is $2.75 per ride."
    invented = "A day pass costs $9 per day."
    return [
        record("s1", grounded, False),
        record("s2", invented, True, spans=[(17, 19, "Unwanted.Extrinsic"), (0, 5, "Benign")]),
        record("q1", grounded, False, task_type="qa", metadata={"gpt_4o": 0.2, "hhem-2.1": 0.9}),
        record("q2", invented, True, task_type="qa", metadata={"gpt_4o": 0}),
    ]


def test_eval_end_to_end_writes_the_report(cli, tmp_path):
    dataset = write_jsonl(tmp_path / "four.jsonl", four_records())
    report_path, predictions = tmp_path / "out" / "report.json", tmp_path / "predictions.jsonl"
    report_path.parent.mkdir()
    finished = cli(
        "--dataset",
        dataset,
        "--report",
        report_path,
        "--predictions",
        predictions,
        "--backend",
        "offline",
    )
    assert finished.returncode == 0, finished.stderr
    report = json.loads(report_path.read_text())

    assert set(report) == REPORT_KEYS
    assert report["n"] == 4
    assert report["seconds_per_answer"] > 0
    assert set(report["response"]) == RESPONSE_KEYS
    # a copied sentence passes, an invented price fails
    assert report["response"]["balanced_accuracy"] == 1.0
    assert set(report["span"]) == {"precision", "recall", "f1"}
    assert report["span"]["recall"] == 1.0  # "$9" is inside the flagged sentence
    assert report["sentence"] is None
    assert set(report["by_task_type"]) == {"summarization", "qa"}
    for name, group in report["by_task_type"].items():
        assert set(group) == GROUP_KEYS
        assert group["n"] == 2
        assert set(group["response"]) == RESPONSE_KEYS
    assert report["by_task_type"]["qa"]["span"] is None  # no qa record has spans
    assert report["by_task_type"]["summarization"]["span"] is not None
    assert report["skipped"] == [] and report["errors"] == []
    assert report["backend"] == "offline"
    assert report["profile"].startswith("offline@")
    assert report["detectors"]["gpt_4o"]["n"] == 2
    assert report["detectors"]["gpt_4o"]["balanced_accuracy"] == 0.5
    assert "judge_on_same_records" in report["detectors"]["gpt_4o"]
    assert (
        "GPT-4o" in finished.stdout
        and "flag everything" in finished.stdout
        and "tuned here" in finished.stdout
    )
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert [row["id"] for row in rows] == ["s1", "s2", "q1", "q2"]


def test_eval_reports_a_bad_record_as_skipped(cli, tmp_path):
    bad = record("broken", "Some answer.", True) | {"passages": [{"id": "P1", "text": "   "}]}
    dataset = write_jsonl(tmp_path / "d.jsonl", [*four_records(), bad])
    report_path = tmp_path / "r.json"
    finished = cli("--dataset", dataset, "--report", report_path)
    assert finished.returncode == 0, finished.stderr
    report = json.loads(report_path.read_text())
    assert report["n"] == 4
    assert report["skipped"] == [
        {"line": 5, "id": "broken", "reason": "passages[0].text: Value error, must not be blank"}
    ]
    assert "1 skipped" in finished.stdout and "broken" in finished.stdout


def test_eval_counts_judge_errors_and_exits_3(cli, tmp_path):
    dataset = write_jsonl(tmp_path / "d.jsonl", four_records()[:2])
    report_path = tmp_path / "r.json"
    finished = cli("--dataset", dataset, "--backend", "openai", "--report", report_path,
                   "--timeout", "2", "--retry-budget", "5", "--max-attempts", "1", "--workers", "2",
                   env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert finished.returncode == 3, finished.stderr
    report = json.loads(report_path.read_text())
    assert set(report) == REPORT_KEYS
    assert report["n"] == 0
    assert [e["id"] for e in report["errors"]] == ["s1", "s2"]
    assert all(e["transient"] for e in report["errors"])
    assert report["backend"] == "openai"
    assert "2 errors" in finished.stdout
    assert "judge failed on 2 of 2 records" in finished.stderr


def test_eval_refuses_a_missing_file_and_a_file_without_valid_records(cli, tmp_path):
    assert cli("--dataset", tmp_path / "missing.jsonl").returncode == 2
    empty = write_jsonl(tmp_path / "bad.jsonl", ["[1]"])
    finished = cli("--dataset", empty)
    assert finished.returncode == 2
    assert "no valid record" in finished.stderr


def test_eval_refuses_an_unknown_profile(cli, tmp_path):
    dataset = write_jsonl(tmp_path / "d.jsonl", four_records())
    finished = cli("--dataset", dataset, "--backend", "openai", "--profile", "no_such_profile",
                   env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert finished.returncode == 2
    assert "no_such_profile" in finished.stderr


# --- tune / report halves ---------------------------------------------------------------------


def test_a_split_is_a_stable_hash_and_both_halves_occur():
    halves = [ev.split_of(f"source-{n}") for n in range(200)]
    assert halves == [ev.split_of(f"source-{n}") for n in range(200)]
    assert set(halves) == {"tune", "report"}
    assert 60 < halves.count("tune") < 140


def test_records_sharing_passages_fall_in_the_same_half():
    shared = [{"id": "P1", "text": "The museum opens at 9 a.m. on weekdays."}]
    records = [
        ev.parse_record(record(f"r{n}", "The museum opens at 9 a.m.", False, passages=shared))
        for n in range(20)
    ]
    assert len({ev.record_split(r.request) for r in records}) == 1


def test_select_split_partitions_the_records():
    records = [
        ev.parse_record(
            record(
                f"r{n}", "Seniors pay $1.35.", False, passages=[{"id": "P1", "text": f"Rule {n}."}]
            )
        )
        for n in range(40)
    ]
    tune, report = ev.select_split(records, "tune"), ev.select_split(records, "report")
    assert tune and report
    assert sorted(r.id for r in tune + report) == sorted(r.id for r in records)
    assert ev.select_split(records, "all") == records
    with pytest.raises(ValueError):
        ev.select_split(records, "dev")
