"""Golden sets in (import_golden) and the judge measured on them or on adjudicated answers
(evaluate)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

import judges
from reviewapp.models import Answer, JudgeRun
from reviewapp.review import service as review_service
from reviewapp.labels.evaluation import gate_failures, parse_gate
from tests import factories as make
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db

PASSAGE = (
    "Riders aged 65 and older pay a reduced fare of $1.00 per ride. A 30-day pass costs $92.00."
)
GROUNDED = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
WRONG = "A 30-day pass costs $75.00."


def _record(rid: str, answer: str, hallucinated: bool, spans=(), **extra) -> dict:
    return {
        "id": rid,
        "dataset": "synthetic",
        "task_type": "rag_qa",
        "question": "What do seniors pay?",
        "passages": [{"id": "P1", "text": PASSAGE}],
        "answer": answer,
        "hallucinated": hallucinated,
        "spans": list(spans),
        "sentence_labels": None,
        "meta": {},
    } | extra


def golden_file(tmp_path, *, bad_line: bool = True):
    wrong = GROUNDED + " " + WRONG
    start = wrong.index("$75.00")
    lines = [
        json.dumps(_record("g1", GROUNDED, False)),
        json.dumps(_record("g2", wrong, True, [{"start": start, "end": start + 6, "text": "$75.00",
                                                "label": "Unwanted.Intrinsic"}])),
        json.dumps(_record("g3", "The fare is $1.00 for riders aged 65 and older.", False)),
    ]
    if bad_line:
        # hallucinated must be true or false
        lines.insert(1, json.dumps(_record("g-bad", GROUNDED, "yes")))
        lines.append("{not json")
    path = tmp_path / "synthetic.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _import(path, *args):
    out, err = StringIO(), StringIO()
    call_command("import_golden", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _evaluate(*args):
    out = StringIO()
    call_command("evaluate", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


# --- import_golden -----------------------------------------------------------------------------


def test_import_golden_stores_answers_with_their_labels_and_reports_bad_lines(tmp_path):
    out, err = _import(golden_file(tmp_path), "--name", "syn")
    assert "3 imported, 0 already there, 2 invalid" in out
    assert "line 2 (g-bad): hallucinated: must be true or false" in err
    assert "line 5 (no id): not valid JSON" in err
    g2 = Answer.objects.get(external_id="g2")
    assert g2.client is None and g2.metadata["golden"] == "syn"
    labels = g2.metadata
    assert (labels["hallucinated"], labels["dataset"], labels["task_type"]) == (
        True,
        "synthetic",
        "rag_qa",
    )
    start = g2.answer.index("$75.00")
    assert g2.metadata["spans"] == [
        {"start": start, "end": start + 6, "text": "$75.00", "label": "Unwanted.Intrinsic"}
    ]
    assert [(p.pid, p.text) for p in g2.passages.all()] == [("P1", PASSAGE)]


def test_golden_answers_are_not_judged_routed_or_queued_on_import(
    tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        _import(golden_file(tmp_path), "--name", "syn")
    assert callbacks == []  # nothing enqueued
    assert not JudgeRun.objects.exists()
    states = set(Answer.objects.values_list("review_status", "judged_by", "judged_at"))
    assert states == {("unrouted", None, None)}


def test_golden_answers_stay_off_the_answers_page(tmp_path, client, api):

    _import(golden_file(tmp_path), "--name", "syn")
    assert api.post(fare_payload(external_id="live-1")).status_code == 202
    reviewer = make.user("rita", "reviewer")
    client.force_login(reviewer)
    page = client.get("/answers/").content.decode()
    assert "live-1" in page
    assert "/ live-1" in page
    assert not any(f"/ {rid}<" in page for rid in ("g1", "g2", "g3"))


def test_reimporting_a_golden_set_adds_nothing(tmp_path):
    path = golden_file(tmp_path)
    _import(path, "--name", "syn")
    out, _ = _import(path, "--name", "syn")
    assert "0 imported, 3 already there" in out and Answer.objects.count() == 3
    out, _ = _import(path, "--name", "other")  # another set may hold the same ids
    assert "3 imported" in out and Answer.objects.count() == 6


def test_import_golden_refuses_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        _import(tmp_path / "nope.jsonl")


# --- evaluate on a golden set ------------------------------------------------------------------


def test_evaluate_prints_the_judges_eval_table_and_stores_side_runs_once(tmp_path):
    _import(golden_file(tmp_path, bad_line=False), "--name", "syn")
    out = _evaluate("--golden", "syn", "--backend", "offline")
    assert "dataset  golden set syn" in out
    assert "resp P" in out and "span F1" in out and "flag everything" in out
    assert out.splitlines()[5].split()[:2] == ["all", "3"]
    runs = JudgeRun.objects.filter(status="succeeded", is_current=True)
    # side runs
    assert runs.count() == 3 and not Answer.objects.filter(judged_by__isnull=False).exists()
    assert (
        _evaluate("--golden", "syn", "--backend", "offline").splitlines()[5] == out.splitlines()[5]
    )
    assert JudgeRun.objects.count() == 3  # reused, not judged again


def test_a_side_run_the_database_refuses_fails_with_its_reason_and_the_evaluation_goes_on(
    tmp_path, monkeypatch
):
    real_judge = judges.judge

    def unclean(
        request, config
    ):  # a judge that does not clean its text: PostgreSQL refuses the NUL
        output = real_judge(request, config)
        if "30-day" in request.answer:
            output.result.claims[0].explanation += "\x00"
        return output

    _import(golden_file(tmp_path, bad_line=False), "--name", "syn")
    monkeypatch.setattr(judges, "judge", unclean)
    with pytest.raises(CommandError, match="the judge failed on 1 of 3 answers"):
        _evaluate("--golden", "syn", "--backend", "offline")
    failed = JudgeRun.objects.get(status="failed")
    assert (
        failed.error.startswith("storing the result failed: DataError:") and not failed.is_current
    )
    assert JudgeRun.objects.filter(status="succeeded").count() == 2
    assert not JudgeRun.objects.filter(status="running").exists()


def test_fail_under_exits_1_when_a_gate_fails_and_0_when_it_is_met(tmp_path):
    _import(golden_file(tmp_path, bad_line=False), "--name", "syn")
    report = tmp_path / "report.json"
    _evaluate("--golden", "syn", "--report", str(report))
    ba = json.loads(report.read_text())["response"]["balanced_accuracy"]
    out = _evaluate(
        "--golden",
        "syn",
        "--fail-under",
        f"response.balanced_accuracy={ba}",
        "--fail-under",
        "f1=0",
    )
    assert f"gate response.balanced_accuracy >= {ba:g}: ok" in out
    with pytest.raises(CommandError) as failed:
        _evaluate("--golden", "syn", "--fail-under", f"response.balanced_accuracy={ba + 0.01}")
    assert failed.value.returncode == 1 and "response.balanced_accuracy" in str(failed.value)
    with pytest.raises(CommandError) as bad:
        _evaluate("--golden", "syn", "--fail-under", "accuracy=0.9")
    assert bad.value.returncode == 2


def test_gates_read_response_span_and_sentence_figures_and_fail_what_was_not_measured():
    report = {"response": {"f1": 0.8, "balanced_accuracy": 0.7}, "span": None, "sentence": None}
    gates = [
        parse_gate("f1=0.8"),
        parse_gate("response.balanced_accuracy=0.75"),
        parse_gate("span.f1=0.1"),
    ]
    assert gates[0] == ("response.f1", 0.8)
    assert gate_failures(report, gates) == [
        "response.balanced_accuracy 0.700 < 0.75",
        "span.f1 not measured (no span labels); gate 0.1",
    ]
    with pytest.raises(ValueError):
        parse_gate("response.f1")


def test_evaluate_on_an_unknown_golden_set_exits_2():
    with pytest.raises(CommandError) as error:
        _evaluate("--golden", "nothing")
    assert error.value.returncode == 2


# --- evaluate on adjudicated answers, and the round trip ---------------------------------------


def adjudicated(
    reviewer, *, overturn_to: str | None = None, answer_text: str = GROUNDED + " " + WRONG
) -> Answer:
    answer = make.judged(answer_text)
    Answer.objects.filter(pk=answer.pk).update(review_status="in_review")
    answer.refresh_from_db()
    flagged = answer.claims.exclude(label="SUPPORTED").first()
    if flagged and overturn_to:
        review_service.claim_decide(
            user=reviewer,
            claim=flagged,
            decision="overturn",
            label=overturn_to,
            note="",
            expected_version=flagged.version,
        )
    answer.refresh_from_db()
    if answer.review_status == "in_review":  # deciding the last flagged claim adjudicates by itself
        review_service.answer_finish(user=reviewer, answer=answer)
        answer.refresh_from_db()
    assert answer.review_status == "adjudicated"
    return answer


def _scores(report_path) -> dict:
    """A report's figures without its timings and names."""
    report = json.loads(report_path.read_text())
    return {
        key: report[key] for key in ("n", "response", "span", "sentence", "detectors", "errors")
    }


def test_evaluate_without_golden_measures_the_shown_runs_against_reviewers(tmp_path):
    rita = make.user("rita", "reviewer")
    adjudicated(rita)  # the reviewer agrees with the judge
    # the judge flagged a claim the reviewer passed: a false positive
    adjudicated(rita, overturn_to="SUPPORTED")
    report = tmp_path / "report.json"
    out = _evaluate("--report", str(report))
    assert "dataset  adjudicated answers" in out
    figures = json.loads(report.read_text())
    assert figures["n"] == 2
    assert (figures["response"]["precision"], figures["response"]["recall"]) == (0.5, 1.0)


def test_export_golden_then_import_then_evaluate_agrees_with_the_reviewers(tmp_path):
    rita = make.user("rita", "reviewer")
    answers = [
        adjudicated(rita),
        adjudicated(rita, overturn_to="SUPPORTED"),
        adjudicated(rita, answer_text=GROUNDED),
    ]
    path = tmp_path / "labels.golden.jsonl"
    call_command("export_labels", "--format", "golden", "--out", str(path), stderr=StringIO())
    records = [json.loads(line) for line in path.read_text().splitlines()]
    truth = {
        a.pk: any(c.human_label not in ("", "SUPPORTED") for c in a.claims.all()) for a in answers
    }
    assert {r["meta"]["answer_id"]: r["hallucinated"] for r in records} == {
        a.pk: truth[a.pk] for a in answers if a.claims.exclude(decision="").exists()}

    _import(path, "--name", "roundtrip")
    direct, via_golden = tmp_path / "direct.json", tmp_path / "golden.json"
    _evaluate("--report", str(direct))  # the shown runs against the decisions
    # re-judged, against the exported labels:
    _evaluate("--golden", "roundtrip", "--backend", "offline", "--report", str(via_golden))
    assert _scores(via_golden) == _scores(direct)
    assert _scores(direct)["n"] == 3


def test_the_demo_golden_set_is_the_demo_answers_with_their_intended_labels():
    from judges.eval import load_dataset
    from reviewapp.management.commands.demo import DEMO_DATA, DEMO_GOLDEN

    records, skipped = load_dataset(DEMO_GOLDEN)  # validates every span against its answer text
    answers = {a["external_id"]: a for a in json.loads(DEMO_DATA.read_text())}
    assert skipped == [] and [r.id for r in records] == list(answers)
    assert all(r.request.answer == answers[r.id]["answer"] for r in records)
    assert {r.id for r in records if r.hallucinated} == {
        "demo-002",
        "demo-004",
        "demo-005",
        "demo-007",
        "demo-008",
        "demo-010",
        "demo-011",
        "demo-012",
    }
    assert all(bool(r.spans) == r.hallucinated for r in records)
