"""Exports: one row per decided claim, JSONL and CSV, one snapshot, a manifest, no CSV formulas."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from reviewapp.labels import exports
from reviewapp.labels.exports import ExportFilters, export_stream, neutralize, write_export
from reviewapp.models import Answer, AuditEvent, Claim, Review
from reviewapp.review import service as review_service
from tests import factories as make

JSONL_KEYS = {
    "answer_id",
    "external_id",
    "question",
    "answer",
    "passages",
    "claim_id",
    "claim_text",
    "answer_span",
    "judge_label",
    "category",
    "explanation",
    "quotes",
    "human_label",
    "decision",
    "decision_mode",
    "origin",
    "note",
    "reviewer",
    "decided_at",
    "consensus_method",
    "reviews",
    "human_evidence",
    "judge_confidence",
    "judge_profile",
    "judge_version",
    "judge_model",
    "judge_backend",
    "policy_version",
    "prior_turns",
    "answer_human_verdict",
}


EVERYTHING = ExportFilters()


def _jsonl(filters: ExportFilters = EVERYTHING) -> list[dict]:
    return [json.loads(line) for line in b"".join(export_stream("jsonl", filters)).splitlines()]


def _csv(filters: ExportFilters = EVERYTHING) -> list[dict]:
    text = b"".join(export_stream("csv", filters)).decode()
    return list(csv.DictReader(io.StringIO(text)))


def judged_and_overturned(reviewer) -> tuple[Answer, Claim]:
    """Through the real pipeline: ingest, offline judge, a reviewer overturns the flagged claim."""
    answer = make.judged(external_id="conv-42")
    Answer.objects.filter(pk=answer.pk).update(review_status="in_review")
    flagged = answer.claims.exclude(label="SUPPORTED").first()
    new_label = "PARTIALLY_SUPPORTED" if flagged.label != "PARTIALLY_SUPPORTED" else "CONTRADICTED"
    review_service.claim_decide(user=reviewer, claim=flagged, decision="overturn", label=new_label,
                                note="the pass price is wrong", expected_version=flagged.version)
    flagged.refresh_from_db()
    return answer, flagged


# --- roles ------------------------------------------------------------------------------------

URLS = ["/exports/", "/exports/download?format=jsonl", "/exports/manifest?format=csv"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", URLS)
def test_exports_are_for_admins_strangers_sign_in_reviewers_get_403(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(make.user("rita", "reviewer"))
    assert client.get(url).status_code == 403
    client.force_login(make.admin())
    assert client.get(url).status_code == 200


# --- rows -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_jsonl_row_holds_the_decision_the_judge_label_and_the_context():
    rita = make.user("rita", "reviewer")
    answer, decided = judged_and_overturned(rita)
    rows = _jsonl()
    assert len(rows) == 1  # the undecided SUPPORTED claim is not exported
    row = rows[0]
    run = answer.judged_by
    assert set(row) == JSONL_KEYS
    assert (row["answer_id"], row["external_id"], row["question"]) == (
        answer.pk,
        "conv-42",
        answer.question,
    )
    assert row["answer"] == answer.answer
    assert [p["id"] for p in row["passages"]] == ["P1", "P2"]
    assert row["passages"][0] | {"text": ""} == {
        "id": "P1",
        "text": "",
        "tag": "reduced-fare",
        "agency": "Lakeshore Regional Transit",
        "title": "Fare Policy",
        "section": "4.2",
        "source_url": "https://example.org/fares",
        "fetched_at": "2026-08-16",
        "score": None,
        "metadata": {},
    }
    assert (row["claim_id"], row["claim_text"]) == (decided.cid, decided.text)
    assert row["answer_span"] == [decided.answer_start, decided.answer_end]
    assert (row["judge_label"], row["category"], row["explanation"]) == (
        decided.label, decided.category, decided.explanation)
    assert row["quotes"] == [{"passage_id": ev.passage_pid, "quote": ev.quote, "match": ev.match,
                              "span": [ev.start, ev.end] if ev.start is not None else None,
                              "differences": ev.differences}
                             for ev in decided.evidence.order_by("position")]
    # The words the judge found differing, as offsets into the quote's passage and the answer.
    (quote,) = row["quotes"]
    (difference,) = quote["differences"]
    passage = next(p["text"] for p in row["passages"] if p["id"] == quote["passage_id"])
    assert difference["kind"] == "number"
    assert (
        passage[slice(*difference["span"])],
        row["answer"][slice(*difference["answer_span"])],
    ) == ("92.00", "75.00")
    assert (row["human_label"], row["decision"], row["origin"]) == (
        decided.human_label,
        "overturn",
        "judge",
    )
    assert row["decision_mode"] == "explicit"
    assert (row["reviewer"], row["note"]) == ("rita", "the pass price is wrong")
    assert row["decided_at"] == decided.decided_at.isoformat()
    assert (
        row["judge_profile"],
        row["judge_version"],
        row["judge_model"],
        row["judge_backend"],
    ) == (run.profile, run.prompt_version, run.model, run.backend)
    assert row["policy_version"] == answer.policy.version


@pytest.mark.django_db
def test_a_csv_row_flattens_passages_spans_and_quotes():
    answer, decided = judged_and_overturned(make.user("rita", "reviewer"))
    [row] = _csv()
    assert list(row) == list(exports.CSV_FIELDS)
    assert row["passage_ids"] == "P1;P2"
    assert (row["answer_start"], row["answer_end"]) == (
        str(decided.answer_start),
        str(decided.answer_end),
    )
    assert json.loads(row["quotes"]) == _jsonl()[0]["quotes"]
    assert (row["human_label"], row["reviewer"], row["answer_id"]) == (
        decided.human_label,
        "rita",
        str(answer.pk),
    )


@pytest.mark.django_db
def test_the_export_tells_a_claim_the_reviewer_decided_from_one_finishing_accepted_unseen():
    reviewer = make.user("rita", "reviewer")
    text = (
        "Riders aged 65 and older pay a reduced fare of $1.00 per ride. Proof of age must be shown"
        " when boarding."
    )
    answer = make.judged(text)
    # an audit sample: nothing flagged
    Answer.objects.filter(pk=answer.pk).update(review_status="in_review")
    answer.refresh_from_db()
    first, *rest = answer.claims.order_by("position")
    assert rest, "the answer needs two claims"
    review_service.claim_decide(user=reviewer, claim=first, decision="confirm", label=None, note="",
                                expected_version=first.version)
    review_service.answer_finish(user=reviewer, answer=answer)
    modes = {row["claim_id"]: row["decision_mode"] for row in _jsonl()}
    assert modes == {first.cid: "explicit"} | {c.cid: "bulk" for c in rest}
    assert {row["claim_id"]: row["decision_mode"] for row in _csv()} == modes
    assert list(Review.objects.order_by("id").values_list("decision_mode", flat=True)) == [
        "explicit"] + ["bulk"] * len(rest)


@pytest.mark.django_db
def test_undecided_and_undone_claims_are_not_exported_and_added_claims_have_no_judge_label():
    rita = make.user("rita", "reviewer")
    answer = make.answer()
    make.claim(answer, "SUPPORTED")  # never decided
    make.claim(answer, "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    make.claim(
        answer, "CONTRADICTED", "CONTRADICTED", reviewer=rita, origin="reviewer", span=(19, 47)
    )
    rows = _jsonl()
    assert [(r["claim_id"], r["judge_label"], r["origin"]) for r in rows] == [
        ("c2", "UNSUPPORTED", "judge"), ("c3", None, "reviewer")]


@pytest.mark.django_db
def test_filters_since_and_profile_select_rows():
    rita = make.user("rita", "reviewer")
    old = make.answer(version="v1")
    make.claim(
        old,
        "UNSUPPORTED",
        "SUPPORTED",
        reviewer=rita,
        decided_at=timezone.now() - timezone.timedelta(days=10),
    )
    new = make.answer(version="v2")
    make.claim(new, "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    since = (timezone.now() - timezone.timedelta(days=1)).date()
    assert [r["answer_id"] for r in _jsonl(ExportFilters(since=since))] == [new.pk]
    assert [r["answer_id"] for r in _jsonl(ExportFilters(profile="claim_audit@v1"))] == [old.pk]
    assert len(_jsonl(ExportFilters(profile="claim_audit"))) == 2
    with pytest.raises(exports.BadFilter):
        exports.parse_filters(since="last week")


@pytest.mark.django_db
def test_every_jsonl_line_is_one_json_object_with_the_same_keys_so_dataframe_readers_load_it():
    rita = make.user("rita", "reviewer")
    for n in range(3):
        a = make.answer(external_id=None if n == 0 else f"x{n}")
        make.claim(
            a, "UNSUPPORTED", "CONTRADICTED", reviewer=rita, quote=("$1.00", "exact") if n else None
        )
    data = b"".join(export_stream("jsonl", ExportFilters()))
    lines = data.decode().splitlines()
    assert len(lines) == 3 and all(set(json.loads(line)) == JSONL_KEYS for line in lines)
    try:
        import pandas
    except ImportError:
        return  # not a dependency; the key check above is what the readers need
    frame = pandas.read_json(io.BytesIO(data), lines=True)
    assert len(frame) == 3 and set(frame.columns) == JSONL_KEYS


# --- CSV injection -----------------------------------------------------------------------------


def test_cells_a_spreadsheet_would_run_as_formulas_are_neutralized():
    for value in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\0x", "\rx"):
        assert neutralize(value) == "'" + value
    assert (neutralize("fine"), neutralize(""), neutralize(3), neutralize(None)) == (
        "fine",
        "",
        3,
        None,
    )


@pytest.mark.django_db
def test_a_csv_export_neutralizes_formula_cells_from_questions_claims_and_notes():
    rita = make.user("rita", "reviewer")
    a = make.answer(
        question='=HYPERLINK("http://evil.example","x")', text="+1 800 fares. -5 dollars"
    )
    make.claim(a, "UNSUPPORTED", "UNSUPPORTED", reviewer=rita, span=(0, 13), note="@admin check",
               explanation="-fabricated")
    [row] = _csv()
    assert row["question"] == '\'=HYPERLINK("http://evil.example","x")'
    assert row["answer"].startswith("'+1") and row["claim_text"] == "'+1 800 fares."
    assert (row["note"], row["explanation"]) == ("'@admin check", "'-fabricated")
    # JSONL is data, not a spreadsheet: left as it is
    assert _jsonl()[0]["question"].startswith("=")


# --- manifest ----------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_the_command_writes_a_manifest_whose_count_and_sha256_match_the_file(tmp_path, fmt):
    rita = make.user("rita", "reviewer")
    for _ in range(3):
        make.claim(
            make.answer(), "UNSUPPORTED", "SUPPORTED", reviewer=rita, note="line one\nline two"
        )
    out = tmp_path / f"labels.{fmt}"
    call_command("export_labels", "--format", fmt, "--out", str(out), "--profile", "claim_audit@v1",
                 stderr=StringIO())
    manifest = json.loads((tmp_path / f"labels.{fmt}.manifest.json").read_text())
    data = out.read_bytes()
    rows = (
        len(data.splitlines())
        if fmt == "jsonl"
        else len(list(csv.reader(io.StringIO(data.decode())))) - 1
    )
    assert (manifest["rows"], rows) == (3, 3)  # CSV: records, not lines (the notes hold newlines)
    assert manifest["sha256"] == hashlib.sha256(data).hexdigest()
    assert (manifest["schema_version"], manifest["format"], manifest["file"]) == (
        "1",
        fmt,
        out.name,
    )
    assert manifest["filters"] == {"since": None, "profile": "claim_audit@v1"}
    assert not (tmp_path / f"labels.{fmt}.part").exists()
    assert AuditEvent.objects.get(action="labels.exported").after["rows"] == 3


@pytest.mark.django_db
def test_the_web_download_streams_the_same_bytes_the_manifest_describes(client):
    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), "CONTRADICTED", "CONTRADICTED", reviewer=rita)
    client.force_login(make.admin())
    response = client.get("/exports/download?format=jsonl")
    assert response.streaming and response["Content-Type"].startswith("application/x-ndjson")
    assert "attachment" in response["Content-Disposition"]
    data = b"".join(response.streaming_content)
    manifest = client.get("/exports/manifest?format=jsonl").json()
    assert (manifest["rows"], manifest["sha256"]) == (1, hashlib.sha256(data).hexdigest())
    page = client.get("/exports/").content.decode()
    assert "<b>1</b> decided claim" in page and "/exports/download?format=csv" in page
    assert client.get("/exports/download?format=xml").status_code == 400
    assert client.get("/exports/?since=yesterday").status_code == 400


# --- one snapshot ------------------------------------------------------------------------------


class _DecideAfterFirstRow:
    """A file that, when the first row arrives, has another connection commit a new decision and
    change an exported one, as a reviewer would while the export runs."""

    def __init__(self, later: Claim, changed: Claim, reviewer):
        self.chunks, self.later, self.changed, self.reviewer = [], later, changed, reviewer

    def write(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        if len(self.chunks) == 1:
            thread = threading.Thread(target=self._decide)
            thread.start()
            thread.join()

    def _decide(self) -> None:
        try:
            now = timezone.now()
            Claim.objects.filter(pk=self.later.pk).update(
                human_label="CONTRADICTED",
                decision="overturn",
                decision_mode="explicit",
                decided_by=self.reviewer,
                decided_at=now,
            )
            Claim.objects.filter(pk=self.changed.pk).update(human_label="PARTIALLY_SUPPORTED",
                                                            note="changed mid-export")
        finally:
            connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_decision_committed_mid_export_is_not_in_it_and_the_manifest_counts_what_was_written(
    monkeypatch,
):
    # one claim per query: later rows are read after the commit
    monkeypatch.setattr(exports, "BATCH", 1)
    rita = make.user("rita", "reviewer")
    first = make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    changed = make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    later = make.claim(make.answer(), "UNSUPPORTED")  # undecided when the export starts
    out = _DecideAfterFirstRow(later, changed, rita)

    manifest = write_export(out, fmt="jsonl", filters=ExportFilters())

    rows = [json.loads(chunk) for chunk in out.chunks]
    assert [r["answer_id"] for r in rows] == [first.answer_id, changed.answer_id]
    # as it was when the export began
    assert (rows[1]["human_label"], rows[1]["note"]) == (
        "UNSUPPORTED",
        "",
    )
    assert manifest["rows"] == len(rows) == 2
    assert manifest["sha256"] == hashlib.sha256(b"".join(out.chunks)).hexdigest()
    assert Claim.objects.get(pk=later.pk).decision == "overturn"  # it did commit
    assert len(_jsonl()) == 3  # and the next export has it


@pytest.mark.django_db(transaction=True)
def test_the_export_reads_in_a_repeatable_read_read_only_transaction():
    make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=make.user("rita", "reviewer"))
    stream = export_stream("jsonl", ExportFilters())
    next(stream)
    with connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        isolation = cursor.fetchone()[0]
        cursor.execute("SHOW transaction_read_only")
        read_only = cursor.fetchone()[0]
    stream.close()
    assert (isolation, read_only) == ("repeatable read", "on")
    assert not connection.in_atomic_block  # closing the stream ends the transaction


@pytest.mark.django_db
def test_the_number_of_queries_does_not_grow_with_the_rows_of_a_batch():
    from django.test.utils import CaptureQueriesContext

    rita = make.user("rita", "reviewer")

    def add_answer():
        a = make.answer()
        make.claim(a, "UNSUPPORTED", "UNSUPPORTED", reviewer=rita, quote=("$1.00", "exact"))
        make.claim(
            a,
            "CONTRADICTED",
            "SUPPORTED",
            reviewer=rita,
            span=(19, 47),
            quote=("invented", "not_found"),
        )

    counts = []
    for answers in (1, 4):
        while Answer.objects.count() < answers:
            add_answer()
        with CaptureQueriesContext(connection) as queries:
            assert len(_jsonl()) == 2 * answers
        counts.append(len(queries))
    # claims, answers, quotes, reviews, human evidence, passages, runs, the empty next batch, a
    # savepoint pair
    assert counts[0] == counts[1] <= 10


@pytest.mark.django_db
def test_every_reviewers_decisions_are_read_once_a_batch_not_once_a_claim():
    from django.test.utils import CaptureQueriesContext

    rita, remy = make.user("rita", "reviewer"), make.user("remy", "reviewer")

    def add_answer():
        a = make.answer()
        for label in ("SUPPORTED", "UNSUPPORTED"):
            claim = make.claim(a, label, label, reviewer=rita)
            for reviewer in (rita, remy):
                Review.objects.create(
                    claim=claim,
                    answer=a,
                    reviewer=reviewer,
                    decision="confirm",
                    final_label=label,
                    claim_version=1,
                    note=f"{reviewer.username} agrees",
                )

    counts, reviews_read = [], []
    for answers in (1, 4):
        while Answer.objects.count() < answers:
            add_answer()
        with CaptureQueriesContext(connection) as queries:
            rows = _jsonl()
        assert len(rows) == 2 * answers
        assert all([r["reviewer"] for r in row["reviews"]] == ["rita", "remy"] for row in rows)
        counts.append(len(queries))
        reviews_read.append([f'FROM "{Claim._meta.db_table}"' in query["sql"] for query in queries
                             if Review._meta.db_table in query["sql"]])
    assert counts[0] == counts[1]
    # One query reads the reviews of a batch, and it is not the claims' own (no subquery per claim).
    assert reviews_read == [[False], [False]]


# --- context a training set needs (issue 30)
# ---------------------------------------------------------


@pytest.mark.django_db
def test_prior_turns_the_verdict_confidence_and_time_spent_survive_jsonl_csv_and_a_golden_round_trip(
    tmp_path, client
):
    turns = [
        {"role": "user", "content": "I'm 67, a senior."},
        {"role": "assistant", "content": "Noted, \"senior\"."},
    ]
    rita = make.user("rita", "reviewer")
    answer = make.in_review(prior_turns=turns)
    client.force_login(rita)
    client.post("/queue/next")
    claim = make.flagged(answer)
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"overturn_to": "UNSUPPORTED", "version": 0},
    )
    client.post(f"/review/{answer.pk}/finish")
    Claim.objects.filter(pk=claim.pk).update(confidence=0.75)  # the offline judge gives none
    answer.refresh_from_db()
    assert answer.review_status == "adjudicated" and answer.prior_turns == turns

    rows = {r["claim_id"]: r for r in _jsonl()}
    row = rows[claim.cid]
    assert (row["prior_turns"], row["answer_human_verdict"], row["judge_confidence"]) == (
        turns, answer.adjudicated_verdict, 0.75)
    assert [(r["decision_mode"], r["time_spent_ms"] is not None) for r in row["reviews"]] == [
        ("explicit", True)
    ]
    bulk = next(r for r in rows.values() if r["claim_id"] != claim.cid)
    assert bulk["reviews"][0]["time_spent_ms"] is None  # accepted by finishing: no time of its own

    cells = {r["claim_id"]: r for r in _csv()}[claim.cid]
    assert json.loads(cells["prior_turns"]) == turns
    assert (cells["answer_human_verdict"], cells["judge_confidence"]) == (
        answer.adjudicated_verdict,
        "0.75",
    )

    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(b"".join(export_stream("golden", EVERYTHING)))
    record = json.loads(golden.read_text())
    assert record["meta"]["prior_turns"] == turns
    call_command("import_golden", str(golden), "--name", "round-trip", stdout=StringIO())
    back = Answer.objects.get(metadata__golden="round-trip")
    assert (back.answer, back.prior_turns) == (answer.answer, turns)


@pytest.mark.django_db
def test_a_golden_record_with_malformed_prior_turns_is_skipped_naming_them(tmp_path):
    record = {
        "id": "g1",
        "task_type": "rag_qa",
        "answer": "Seniors pay $1.00.",
        "hallucinated": False,
        "spans": [],
        "passages": [{"text": "Seniors pay $1.00."}],
        "meta": {"prior_turns": [{"role": "robot", "content": "x"}]},
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    err = StringIO()
    call_command("import_golden", str(path), "--name", "bad", stdout=StringIO(), stderr=err)
    assert (
        "meta.prior_turns" in err.getvalue()
        and not Answer.objects.filter(metadata__golden="bad").exists()
    )


@pytest.mark.django_db(transaction=True)
def test_under_asgi_the_download_is_streamed_not_read_whole_into_memory_first():
    # Django's ASGI handler reads a sync iterator whole before sending it (with a warning); the
    # export is a generator over every decided claim, so under compose's uvicorn workers it must
    # reach the handler as an async iterator.
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), "CONTRADICTED", "CONTRADICTED", reviewer=rita)
    boss = make.admin()

    async def download():
        client = AsyncClient()
        await client.aforce_login(boss)
        response = await client.get("/exports/download?format=jsonl")
        return response.is_async, b"".join([chunk async for chunk in response.streaming_content])

    is_async, data = async_to_sync(download)()
    assert is_async and json.loads(data.splitlines()[0])["human_label"] == "CONTRADICTED"
