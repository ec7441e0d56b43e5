"""Exports stream: `export_labels` over 200,000 decided claims peaks at the memory it needs for
20,000.

The rows are made by Postgres itself (one real judged and decided answer, copied with
INSERT ... SELECT over generate_series), so filling 200,000 claims takes seconds. The export runs as
a real `manage.py export_labels` subprocess, which reports its own peak RSS (VmHWM) as it ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from bench import peak_rss
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage
from reviewapp.review import service as review_service
from reviewapp.judging.service import AnswerBusy, answer_judge
from tests import factories as make
from tests.conftest import ROOT, _test_database_url, wait_for

# Five claims an answer (the offline judge's claims of TEMPLATE), all decided.
TEMPLATE = (
    "Riders aged 65 and older pay a reduced fare of $1.00 per ride. Proof of age, such as a state"
    " ID, must be shown when boarding. A 30-day pass costs $92.00. The pass covers all buses and"
    " trains. A 30-day pass costs $75.00."
)
CLAIMS_PER_ANSWER = 5
ANSWERS = 40_000  # x 5 = 200,000 decided claims
RECENT = 4_000  # answers decided today: `--since today` exports 20,000 rows


def _columns(model, **replace: str) -> tuple[str, str]:
    """The insert column list and the select list copying a template row `t`, with replacements."""
    names = [f.column for f in model._meta.concrete_fields if f.column != "id"]
    return ", ".join(f'"{name}"' for name in names), ", ".join(
        replace.get(name, f't."{name}"') for name in names
    )


def _next_id(model) -> int:
    return (model.objects.order_by("-id").values_list("id", flat=True).first() or 0) + 1


def _copy(cursor, model, template_ids: list[int], **replace: str) -> int:
    """ANSWERS copies of the template rows, copy by copy in id order; returns the first new id.

    Copy n of template row k gets id first + (n - 1) * len(template_ids) + k: ids of one INSERT are
    consecutive here (one session, nothing else inserting), which the caller's counts check."""
    table = model._meta.db_table
    first = _next_id(model)
    columns, selected = _columns(model, **replace)
    cursor.execute(
        f"INSERT INTO {table} ({columns}) SELECT {selected} FROM {table} t "
        f"CROSS JOIN generate_series(1, %s) AS g(n) WHERE t.id = ANY(%s) ORDER BY g.n, t.id",
        [ANSWERS, template_ids],
    )
    return first


def _fill(answer: Answer) -> None:
    """ANSWERS copies of `answer` with its passages, run, claims and evidence, linked copy to copy.

    Copies of rows that passed every constraint, linked by construction: triggers (the foreign
    key checks and the span checks) are switched off for the session while they are written, which
    makes the fill several times faster; the counts below check the links."""
    passage_ids = sorted(answer.passages.values_list("id", flat=True))
    claim_ids = sorted(answer.claims.values_list("id", flat=True))
    evidence = list(
        Evidence.objects.filter(claim__answer=answer).values_list("id", "claim_id", "passage_id")
    )
    first_run = _next_id(JudgeRun)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        first = _copy(
            cursor,
            Answer,
            [answer.pk],
            external_id="'copy-' || g.n",
            public_id="gen_random_uuid()",
            judged_by_id=f"{first_run} + g.n - 1",
        )
        assert (
            _copy(cursor, JudgeRun, [answer.judged_by_id], answer_id=f"{first} + g.n - 1")
            == first_run
        )
        first_passage = _copy(cursor, Passage, passage_ids, answer_id=f"{first} + g.n - 1")
        first_claim = _copy(
            cursor,
            Claim,
            claim_ids,
            answer_id=f"{first} + g.n - 1",
            run_id=f"{first_run} + g.n - 1",
            decided_at=(
                f"CASE WHEN g.n <= {RECENT} THEN t.decided_at ELSE t.decided_at - interval '30"
                " days' END"
            ),
        )
        # Each evidence row of the template, copied to its claim's and its passage's copy.
        offsets = ", ".join(
            f"({eid}, {claim_ids.index(cid)}, {passage_ids.index(pid) if pid else 'NULL'})"
            for eid, cid, pid in evidence)
        columns, selected = _columns(
            Evidence,
            claim_id=f"{first_claim} + (g.n - 1) * {len(claim_ids)} + m.claim_offset",
            passage_id=f"{first_passage} + (g.n - 1) * {len(passage_ids)} + m.passage_offset",
        )
        cursor.execute(
            f"INSERT INTO reviewapp_evidence ({columns}) SELECT {selected} FROM reviewapp_evidence"
            f" t JOIN (VALUES {offsets}) AS m(id, claim_offset, passage_offset) ON m.id = t.id"
            " CROSS JOIN generate_series(1, %s) AS g(n)",
            [ANSWERS],
        )
    for model, per_answer in (
        (Answer, 1),
        (JudgeRun, 1),
        (Passage, len(passage_ids)),
        (Claim, len(claim_ids)),
        (Evidence, len(evidence)),
    ):
        assert model.objects.count() == (ANSWERS + 1) * per_answer
    # Every copied link points at a row that exists (the ids above were the real ones).
    links = [
        ("reviewapp_answer", "judged_by_id", "reviewapp_judgerun"),
        ("reviewapp_judgerun", "answer_id", "reviewapp_answer"),
        ("reviewapp_passage", "answer_id", "reviewapp_answer"),
        ("reviewapp_claim", "answer_id", "reviewapp_answer"),
        ("reviewapp_claim", "run_id", "reviewapp_judgerun"),
        ("reviewapp_evidence", "claim_id", "reviewapp_claim"),
        ("reviewapp_evidence", "passage_id", "reviewapp_passage"),
    ]
    with connection.cursor() as cursor:
        for table, column, target in links:
            cursor.execute(
                f"SELECT count(*) FROM {table} s LEFT JOIN {target} t ON t.id = s.{column} "
                f"WHERE s.{column} IS NOT NULL AND t.id IS NULL"
            )
            assert cursor.fetchone()[0] == 0, (table, column)
    last = Answer.objects.order_by("-id").first()
    assert (last.judged_by.answer_id, last.claims.count(), last.passages.count()) == (
        last.pk, len(claim_ids), len(passage_ids))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _export(tmp_path, *args: str) -> tuple[dict, int]:
    """(manifest, peak RSS in MB) of one `manage.py export_labels` run."""
    out = tmp_path / "export.jsonl"
    env = os.environ | {"DATABASE_URL": _test_database_url()}
    result = subprocess.run(
        peak_rss.command_line("export_labels", "--out", str(out), *args),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "export.jsonl.manifest.json").read_text())
    # the export's own peak (see bench/peak_rss.py)
    return (
        manifest,
        peak_rss.peak_kb(result.stderr) // 1024,
    )


@pytest.mark.django_db(transaction=True)
def test_memory_stays_flat_from_20000_to_200000_exported_rows(tmp_path):
    reviewer = make.user("rita")
    answer = make.ingested(TEMPLATE, external_id="template")
    try:
        answer_judge(answer_id=answer.pk)
    except AnswerBusy:
        pass  # the suite's celery worker (if one was started earlier) took it from the broker first
    wait_for(lambda: Answer.objects.filter(pk=answer.pk, status="judged").exists())
    answer.refresh_from_db()
    for claim in answer.claims.order_by("id"):
        review_service.claim_decide(
            user=reviewer,
            claim=claim,
            decision="confirm",
            label=claim.label,
            note="",
            expected_version=claim.version,
        )
    assert answer.claims.exclude(decision="").count() == CLAIMS_PER_ANSWER
    started = time.monotonic()
    _fill(answer)
    print(f"filled in {time.monotonic() - started:.1f} s")
    assert Claim.objects.exclude(decision="").count() == CLAIMS_PER_ANSWER * (ANSWERS + 1)

    small, small_rss = _export(tmp_path, "--since", timezone.now().date().isoformat())
    large, large_rss = _export(tmp_path)

    assert small["rows"] == CLAIMS_PER_ANSWER * (RECENT + 1)
    assert large["rows"] == CLAIMS_PER_ANSWER * (ANSWERS + 1)
    print(
        f"peak RSS: {small_rss} MB for {small['rows']} rows, {large_rss} MB for {large['rows']}"
        " rows"
    )
    assert large_rss - small_rss < 25, (small_rss, large_rss)
    assert large_rss < 300
