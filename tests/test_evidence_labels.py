"""Evidence-level labels (issue 32, item 5): a reviewer marks the passage span that supports or
contradicts a claim and the cause when the judge was wrong or the claim is bad; the label exports
carry them, and the RAGTruth-style export validates against its documented schema."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
from django.urls import reverse

from reviewapp.labels.exports import ExportFilters, export_stream
from reviewapp.models import AuditEvent, EvidenceMark
from reviewapp.review import evidence as evidence_service
from reviewapp.review import service as review_service
from reviewapp.review.service import ReviewError
from tests import factories as make

pytestmark = pytest.mark.django_db
SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "docs" / "ragtruth.schema.json").read_text()
)
PASS_PRICE = "A 30-day pass costs $92.00 and covers all buses and trains."  # the fare payload's P2
SPAN_TEXT = "30-day pass costs $92.00"
SPAN = [PASS_PRICE.index(SPAN_TEXT), PASS_PRICE.index(SPAN_TEXT) + len(SPAN_TEXT)]


def _held(rita):
    answer = make.in_review()
    assert review_service.lease_take(user=rita, answer=answer)
    return answer, make.flagged(answer)  # c2: "A 30-day pass costs $75.00." CONTRADICTED


def _mark(rita, claim, **fields):
    # The selection cuts "30" and "00": it is widened to the words.
    values = {
        "passage_pid": "P2",
        "start": SPAN[0] + 1,
        "end": SPAN[1] - 1,
        "stance": "contradicts",
        "cause": "generation_error",
    } | fields
    return evidence_service.evidence_mark(user=rita, claim=claim, **values)


def test_a_marked_span_snaps_to_whole_words_and_is_read_from_the_passage(rita):
    answer, claim = _held(rita)
    mark = _mark(rita, claim)
    assert (mark.passage.pid, mark.stance, mark.cause) == ("P2", "contradicts", "generation_error")
    assert [mark.start, mark.end] == SPAN and PASS_PRICE[mark.start : mark.end] == SPAN_TEXT
    assert AuditEvent.objects.filter(
        action="claim.evidence_marked", object_id=str(claim.pk)
    ).exists()
    # Changed in place, then a cause alone (no span), then cleared.
    _mark(rita, claim, stance="supports", cause="")
    assert EvidenceMark.objects.get(claim=claim).stance == "supports"
    _mark(rita, claim, passage_pid="", start=None, end=None, stance="", cause="retrieval_miss")
    only = EvidenceMark.objects.get(claim=claim)
    assert (only.passage, only.start, only.cause) == (None, None, "retrieval_miss")
    _mark(rita, claim, passage_pid="", start=None, end=None, stance="", cause="")
    assert not EvidenceMark.objects.filter(claim=claim).exists()


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"passage_pid": "P9"}, "passage"),
        ({"start": 40, "end": 10}, "start, end"),
        ({"start": 0, "end": 10_000}, "start, end"),
        ({"stance": ""}, "stance"),
        ({"stance": "maybe"}, "stance"),
        ({"cause": "bad_luck"}, "cause"),
        ({"passage_pid": "", "stance": "supports"}, "passage"),
    ],
)
def test_bad_evidence_is_refused_naming_the_field(rita, fields, field):
    _, claim = _held(rita)
    with pytest.raises(ReviewError) as refused:
        _mark(rita, claim, **fields)
    assert str(refused.value).startswith(field)
    assert not EvidenceMark.objects.exists()


def test_marking_needs_the_lease_as_a_decision_does(rita, ron):
    _, claim = _held(rita)
    with pytest.raises(ReviewError):
        _mark(ron, claim)
    assert not EvidenceMark.objects.exists()


def test_the_review_page_marks_evidence_and_answers_bad_input_with_a_400(client, rita):
    answer, claim = _held(rita)
    client.force_login(rita)
    url = reverse("evidence_mark", args=[answer.pk, claim.pk])
    page = client.get(reverse("review", args=[answer.pk])).content.decode()
    assert f'action="{url}"' in page and 'class="untrusted passage-text" data-pid="P2"' in page
    done = client.post(
        url,
        {
            "passage": "P2",
            "start": SPAN[0],
            "end": SPAN[1],
            "stance": "contradicts",
            "cause": "generation_error",
        },
        headers={"HX-Request": "true"},
    )
    assert done.status_code == 200 and "Yours: <b>P2</b>" in done.content.decode()
    # The claim's form shows the saved mark chosen, and nothing else.
    form = done.content.decode().split(f'id="evidence-{claim.pk}"')[1].split("</form>")[0]
    chosen = ('<option value="P2" selected>P2</option>', '<option value="contradicts" selected>',
              '<option value="generation_error" selected>')
    assert all(option in form for option in chosen) and form.count(" selected>") == 3
    bad = client.post(
        url,
        {"passage": "P2", "start": "six", "end": "9", "stance": "contradicts"},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 400 and "start, end: whole numbers" in bad.content.decode()
    worse = client.post(
        url,
        {"passage": "P2", "start": "0", "end": "5", "stance": "sideways"},
        headers={"HX-Request": "true"},
    )
    assert (
        worse.status_code == 400
        and "stance: one of supports, contradicts" in worse.content.decode()
    )


def _adjudicated_with_evidence(rita):
    answer, claim = _held(rita)
    _mark(rita, claim)
    review_service.claim_decide(
        user=rita,
        claim=claim,
        decision="confirm",
        label=None,
        note="",
        expected_version=claim.version,
    )
    review_service.answer_finish(user=rita, answer=answer)
    return answer, claim


def test_the_label_exports_carry_the_human_evidence_and_causes(rita):
    answer, claim = _adjudicated_with_evidence(rita)
    rows = [
        json.loads(line) for line in b"".join(export_stream("jsonl", ExportFilters())).splitlines()
    ]
    row = next(r for r in rows if r["claim_id"] == claim.cid)
    assert row["human_evidence"] == [
        {
            "reviewer": "rita",
            "passage_id": "P2",
            "span": SPAN,
            "text": SPAN_TEXT,
            "stance": "contradicts",
            "cause": "generation_error",
        }
    ]
    assert next(r for r in rows if r["claim_id"] != claim.cid)["human_evidence"] == []
    table = list(
        csv.DictReader(
            io.StringIO(b"".join(export_stream("csv", ExportFilters())).decode(), newline="")
        )
    )
    cell = next(r for r in table if r["claim_id"] == claim.cid)["human_evidence"]
    assert json.loads(cell) == row["human_evidence"]


def test_the_ragtruth_export_validates_against_its_documented_schema(rita):
    answer, claim = _adjudicated_with_evidence(rita)
    make.claim(
        make.answer(), "SUPPORTED", "UNSUPPORTED", reviewer=rita
    )  # a second answer, another type
    lines = b"".join(export_stream("ragtruth", ExportFilters())).splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        jsonschema.validate(record, SCHEMA)
        for label in record["labels"]:
            assert record["response"][label["start"] : label["end"]] == label["text"]
    fare = next(r for r in records if r["source_id"] == str(answer.pk))
    (label,) = fare["labels"]
    assert (fare["hallucinated"], fare["hallucination_types"], fare["causes"]) == (
        True,
        ["Evident Conflict"],
        ["generation_error"],
    )
    assert (label["text"], label["label_type"], label["causes"]) == (
        "A 30-day pass costs $75.00.",
        "Evident Conflict",
        ["generation_error"],
    )
    assert label["evidence"] == [
        {"passage_id": "P2", "span": SPAN, "text": SPAN_TEXT, "stance": "contradicts"}
    ]
    other = next(r for r in records if r is not fare)
    assert (
        other["hallucination_types"] == ["Evident Baseless Info"]
        and other["labels"][0]["causes"] == []
    )
    # The schema is not a formality: a record missing its response-level label is refused.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in fare.items() if k != "hallucinated"}, SCHEMA)
