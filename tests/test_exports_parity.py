"""The fast JSONL and CSV encoders write exactly the bytes of the plain ones, on awkward values.

The plain way is the definition of the format: every decided claim read through the ORM as values
(Django's own loaders), made a row by `claim_row`, encoded by `_json_line` /
`_csv_line(csv_cells(row))` (orjson, the csv module, `neutralize`). `export_stream` instead has
Postgres make each claim's own part of its line (CLAIM_JSONL, CLAIM_CSV: to_json, SQL quoting and
neutralizing), encodes each answer's part once per batch, parses timestamps with psycopg's C loader
and reads batches ahead on a thread; this file checks it changes no byte, across batch boundaries.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from contextlib import closing
from datetime import timedelta
from itertools import groupby

import orjson
import pytest
from django.utils import timezone

from reviewapp.labels import exports
from reviewapp.labels.exports import ExportFilters, export_stream
from reviewapp.models import Answer, Claim, Evidence, EvidenceMark, JudgeRun, Passage, Review
from tests import factories as make
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db

# Text a spreadsheet, a CSV parser or a JSON encoder could trip on.
AWKWARD = [
    '<script>alert("x")</script> & <b>bold</b>',
    'He said "hi", then left',
    "line one\nline two",
    "carriage\r\nreturn, and a lone\rcr",
    "comma, separated, cells",
    "unicode: café ñ 漢字 🚌 \u202eRTL\u202c e\u0301 \u2028sep",
    "=SUM(A1:A9)",
    "+1 800 555",
    "-5 dollars",
    "@admin",
    "\ttabbed",
    "\rreturn first",
    "ends with a quote\"",
    "'already quoted",
    "",
    "a\\backslash and \x01 control",
    "mid =formula, then ,=after a comma",
]


def _reference(fmt: str) -> bytes:
    """The export the plain way, from the ORM (see the module docstring)."""
    claims = list(
        exports.decided_claims(ExportFilters())
        .order_by("answer_id", "id")
        .values(
            *exports.CLAIM_COLUMNS,
            "run__profile",
            "run__prompt_version",
            "run__model",
            "run__backend",
        )
    )
    answers = {a["id"]: a for a in Answer.objects.values(*exports.ANSWER_COLUMNS)}
    quotes, passages = defaultdict(list), defaultdict(list)
    for ev in Evidence.objects.order_by("claim_id", "position"):
        quotes[ev.claim_id].append(
            {
                "passage_id": ev.passage_pid,
                "quote": ev.quote,
                "span": [ev.start, ev.end] if ev.start is not None else None,
                "match": ev.match,
                "differences": exports.quote_differences(ev.differences),
            }
        )
    for p in Passage.objects.order_by("answer_id", "position"):
        passages[p.answer_id].append(
            {"id": p.pid, "text": p.text}
            | {field: getattr(p, field) for field in exports.PASSAGE_FIELDS}
        )
    reviews = defaultdict(list)
    for claim_id, group in groupby(
        Review.objects.order_by("claim_id", "id").select_related("reviewer"),
        key=lambda r: r.claim_id,
    ):
        latest = {}  # per reviewer and stage, the latest decision not undone
        for r in group:
            if r.decision != "undo" and not Review.objects.filter(undoes=r).exists():
                latest[(r.reviewer_id, r.stage)] = r
        reviews[claim_id] = [
            {
                "reviewer": r.reviewer.username,
                "stage": r.stage,
                "label": r.final_label,
                "decision": r.decision,
                "decision_mode": r.decision_mode,
                "note": r.note,
                "reason": r.reason,
                "time_spent_ms": r.time_spent_ms,
            }
            for r in sorted(latest.values(), key=lambda r: r.id)
        ]
    marks = defaultdict(list)
    for m in EvidenceMark.objects.order_by("claim_id", "id").select_related("reviewer", "passage"):
        marks[m.claim_id].append({
            "reviewer": m.reviewer.username, "passage_id": m.passage.pid if m.passage else None,
            "span": [m.start, m.end] if m.passage else None,
            "text": m.passage.text[m.start:m.end] if m.passage else None,
            "stance": m.stance or None, "cause": m.cause or None})
    rows = [
        exports.claim_row(
            c,
            answers[c["answer_id"]],
            quotes[c["id"]],
            passages[c["answer_id"]],
            reviews[c["id"]],
            marks[c["id"]],
        )
        for c in claims
    ]
    if fmt == "jsonl":
        return b"".join(exports._json_line(row) for row in rows)
    return exports._csv_line(exports.CSV_FIELDS) + b"".join(
        exports._csv_line(exports.csv_cells(row | {"passages": [p["id"] for p in row["passages"]]}))
        for row in rows
    )


def _reviewed(claim: Claim, answer: Answer, note: str, rita, odd_reviewer, k: int) -> None:
    """Every reviewer's decisions behind the claim's final label, with the awkward note: two passes,
    a decision replaced by a later one, an undone one, and a lead's adjudication."""
    Review.objects.create(
        claim=claim,
        answer=answer,
        reviewer=rita,
        decision="confirm",
        final_label=claim.label,
        note=note,
        claim_version=1,
        time_spent_ms=None if k == 2 else 1234 * k,
    )
    if k == 0:
        return
    Review.objects.create(
        claim=claim,
        answer=answer,
        reviewer=rita,
        decision="overturn",
        final_label="CONTRADICTED",
        note=note + " again",
        claim_version=2,
        decision_mode="bulk",
        reason="contradicts",
    )
    odd = Review.objects.create(
        claim=claim,
        answer=answer,
        reviewer=odd_reviewer,
        decision="overturn",
        final_label="UNSUPPORTED",
        note=note,
        claim_version=1,
    )
    if k == 2:
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=odd_reviewer,
            decision="undo",
            final_label="",
            claim_version=2,
            undoes=odd,
        )
    if k == 3:
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=rita,
            decision="overturn",
            stage="adjudication",
            final_label="CONTRADICTED",
            note=note,
            claim_version=3,
        )


def _marked(claim: Claim, answer: Answer, passage, rita, odd_reviewer, k: int) -> None:
    """Evidence marks: a span of the awkward passage text (its start cut mid-text, past astral
    characters), a cause alone, both, none; by two reviewers, the odd name included."""
    if passage is not None and k % 4 != 3:
        start = min(2, len(passage.text) - 1)
        EvidenceMark.objects.create(
            claim=claim,
            answer=answer,
            reviewer=rita,
            passage=passage,
            start=start,
            end=len(passage.text),
            stance=["supports", "contradicts"][k % 2],
            cause=["", "judge_error", "generation_error"][k % 3],
        )
    if k % 3 == 1:
        EvidenceMark.objects.create(
            claim=claim, answer=answer, reviewer=odd_reviewer, cause="retrieval_miss"
        )


def _awkward_answers() -> int:
    """Answers and decided claims with every awkward value in every text field, nulls where a
    column allows them, several and no quotes, no passages; returns the decided claim count."""
    rita = make.user("rita", "reviewer")
    odd_reviewer = make.user("=cmd|' /C calc'!A0", "reviewer")
    decided = 0
    for n, value in enumerate(AWKWARD):  # (cut to the short columns' lengths where they are short)
        answer = make.answer(
            question=value,
            text=f"{value} Seniors pay $1.00. A monthly pass costs $75.00.",
            external_id=None if n % 3 == 0 else value + str(n),
            profile=value or "claim_audit",
            version=f"{value[:30]}v{n}",
            model=value or "m",
        )
        Passage.objects.filter(answer=answer).update(
            pid=value[:30] + "P1" if value else "P1",
            text=value * 3,
            tag=value,
            title=value,
            section=value,
            source_url=value,
            fetched_at=value[:40],
        )
        Passage.objects.create(
            answer=answer, pid=f"{value[:30]}-P2", position=1, text=value, agency=value
        )
        if n % 5 == 0:
            Answer.objects.filter(pk=answer.pk).update(policy=None)
        # Prior turns with the awkward text, none; the answer's verdict after review, none.
        Answer.objects.filter(pk=answer.pk).update(
            prior_turns=(
                [{"role": "user", "content": value}, {"role": "assistant", "content": value + "!"}]
                if n % 2
                else []
            ),
            adjudicated_verdict="" if n % 3 == 1 else "MOSTLY_GROUNDED",
        )
        if n % 2:
            JudgeRun.objects.filter(answer=answer).update(backend="=backend")
        if n % 7 == 3:
            Passage.objects.filter(answer=answer).delete()
        when = (
            timezone.now().replace(microsecond=0) - timedelta(days=n) if n % 2 else timezone.now()
        )
        for k in range(1 + n % 4):
            reviewer = None if (n + k) % 6 == 5 else odd_reviewer if k == 1 else rita
            claim = make.claim(
                answer,
                ["SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "PARTIALLY_SUPPORTED"][k],
                "CONTRADICTED",
                reviewer=rita,
                text=value or "x",
                note=value,
                explanation=value,
                category=value[:20] or "price",
                origin="reviewer" if k == 2 else "judge",
                span=(0, 5),
                decided_at=when + timedelta(microseconds=k * 120000),
                mode="bulk" if (n + k) % 3 == 0 and k != 2 else "explicit",
            )
            Claim.objects.filter(pk=claim.pk).update(
                decided_by=reviewer, cid=(value[:30] + f"c{k}") if k % 2 else f"c{k}",
                answer_start=None if k == 3 else 0, answer_end=None if k == 3 else 5,
                decided_at=None if (n, k) == (4, 0) else claim.decided_at,
                # floats whose text Postgres writes otherwise (1, 1e-05), and none
                confidence=[None, 1.0, 0.1 + 0.2, 1e-05][(n + k) % 4])
            first = Passage.objects.filter(answer=answer, position=0).exclude(text="").first()
            for position in range((n + k) % 3):
                # a located quote must lie inside its passage
                found = position == 0 and first is not None
                Evidence.objects.create(
                    claim=claim,
                    passage=first if found else None,
                    passage_pid=value[:30] + "P1",
                    position=position,
                    quote=value + f" q{position}",
                    start=0 if found else None,
                    end=1 if found else None,
                    match="exact" if found else "not_found",
                    differences=(
                        [
                            {"kind": "number", "span": [0, 1], "answer_span": [0, 2]},
                            {"kind": value[:20] or "swap", "span": None, "answer_span": [1, 5]},
                        ]
                        if found and (n + k) % 2
                        else []
                    ),
                )
            _reviewed(claim, answer, value, rita, odd_reviewer, k)
            _marked(claim, answer, first, rita, odd_reviewer, n + k)
            decided += 1
        make.claim(answer, "SUPPORTED")  # undecided: in neither export
    # Rows whose only formula-like cells start the claim's cells, or follow its quotes and labels.
    plain = make.answer(question="plain", text="plain text here")
    for cid, note in (("=c1", ""), ("c2", "-1"), ("+c3", "@SUM(1)")):
        claim = make.claim(
            plain, "SUPPORTED", "SUPPORTED", reviewer=rita, text="plain", span=(0, 5)
        )
        Claim.objects.filter(pk=claim.pk).update(cid=cid, note=note)
        decided += 1
    return decided


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("batch", [1, 3, 5000])
def test_the_fast_encoders_write_the_bytes_of_the_plain_ones(monkeypatch, fmt, batch):
    monkeypatch.setattr(exports, "BATCH", batch)  # answers split across batches, and not
    _check_the_bytes_of_the_plain_ones(fmt)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("batch", [1, 3, 5000])
def test_two_readers_taking_blocks_in_turn_write_the_same_bytes(monkeypatch, fmt, batch):
    """The export opens its transaction here (the rows are committed): two readers, two
    connections."""
    monkeypatch.setattr(exports, "BATCH", batch)
    # two answers a block: many turns, answers split or not
    monkeypatch.setattr(exports, "BLOCK", 2)
    _check_the_bytes_of_the_plain_ones(fmt)


def _check_the_bytes_of_the_plain_ones(fmt: str) -> None:
    decided = _awkward_answers()
    expected = _reference(fmt)
    data = b"".join(export_stream(fmt, ExportFilters()))
    assert data == expected
    # And the reference itself reads back as the rows (so the comparison is over real content).
    if fmt == "jsonl":
        rows = [json.loads(line) for line in data.splitlines()]
        assert {r["reviewer"] for r in rows} >= {None, "rita", "=cmd|' /C calc'!A0"}
        assert None in {r["decided_at"] for r in rows} and None in {
            r["policy_version"] for r in rows
        }
        marks = [m for r in rows for m in r["human_evidence"]]
        assert {m["cause"] for m in marks} == {
            None,
            "judge_error",
            "generation_error",
            "retrieval_miss",
        }
        assert any("🚌" in (m["text"] or "") for m in marks)
    else:
        rows = list(csv.DictReader(io.StringIO(data.decode(), newline="")))
        assert "'=SUM(A1:A9)" in {r["claim_text"] for r in rows}
        assert "'=cmd|' /C calc'!A0" in {r["reviewer"] for r in rows}
        assert "'-5 dollars" in {r["question"] for r in rows}
    assert len(rows) == decided


def test_postgres_writes_a_text_value_as_orjson_and_csv_write_it():
    """The escaping the SQL-made parts rely on, value by value (every control character
    included)."""
    from django.db import connection

    values = [
        *AWKWARD,
        "".join(map(chr, range(1, 32))),
        "\u2028\u2029\x7f\x80\ufeff",
        "'",
        '"',
        ",",
        "=",
        "-",
    ]
    with connection.cursor() as cursor:
        for value in values:
            cursor.execute(
                f"SELECT to_json(v)::text, {exports._sql_csv_text('v')} FROM (VALUES (%s::text)) AS"
                " t(v)",
                [value],
            )
            as_json, as_csv = cursor.fetchone()
            assert as_json == orjson.dumps(value).decode()
            assert as_csv + ",\r\n" == exports._csv_line([exports.neutralize(value), ""]).decode()


@pytest.mark.django_db(transaction=True)
def test_a_stream_abandoned_mid_export_stops_its_read_ahead_threads_closes_their_connection_and_ends_the_transaction(
    monkeypatch,
):
    import threading

    from django.db import connection

    # many batches: the readers are still busy when the client leaves
    monkeypatch.setattr(exports, "BATCH", 1)
    monkeypatch.setattr(exports, "BLOCK", 1)  # one answer a block: both readers have work
    rita = make.user("rita", "reviewer")
    for _ in range(6):
        make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)

    def backends() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            return cursor.fetchone()[0]

    before = backends()
    stream = export_stream("jsonl", ExportFilters())
    first = next(stream)
    readers = [t for t in threading.enumerate() if t.name.startswith("export-read-ahead")]
    assert len(readers) == 2
    stream.close()
    assert not any(reader.is_alive() for reader in readers)
    assert not connection.in_atomic_block
    # The second reader's connection is closed. Its server process leaves pg_stat_activity a moment
    # after the client hangs up (the server notices on its own time), so wait for it briefly.
    wait_for(lambda: backends() == before, timeout=10)
    assert json.loads(first)["reviewer"] == "rita"
    # the connection still works
    assert len(b"".join(export_stream("jsonl", ExportFilters())).splitlines()) == 6


@pytest.mark.django_db(transaction=True)
def test_a_reader_hands_each_batch_over_as_it_reads_it_not_its_whole_block(monkeypatch):
    import time

    monkeypatch.setattr(exports, "BATCH", 1)  # eight batches, all in the first block
    rita = make.user("rita", "reviewer")
    for _ in range(8):
        make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    read = []
    answers = exports._answers
    monkeypatch.setattr(
        exports, "_answers", lambda answer_ids: read.append(answer_ids) or answers(answer_ids)
    )
    with closing(export_stream("jsonl", ExportFilters())) as stream:
        next(stream)
        time.sleep(0.5)  # time enough to read all eight, if nothing held the reader back
        assert len(read) <= 3  # one handed over, one queued, one read and waiting to be queued


@pytest.mark.django_db(transaction=True)
def test_an_error_while_reading_ahead_reaches_the_export(monkeypatch):
    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)

    def broken(answer_ids):
        raise RuntimeError("the answers query failed")

    monkeypatch.setattr(exports, "_answers", broken)
    with pytest.raises(RuntimeError, match="the answers query failed"):
        b"".join(export_stream("csv", ExportFilters()))
