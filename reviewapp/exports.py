"""Adjudicated labels out: one row per decided claim, as JSONL or CSV (or one golden record per
adjudicated answer), streamed in constant memory from one consistent snapshot.

Reads only. The command (`manage.py export_labels`) and the web download (`/exports/`) both run
`export_stream`; `write_export` also hashes and counts what it writes into a manifest.

Rows come in (answer id, claim id) order, read in keyset batches of BATCH claims: each batch is
one query for the claims (with their reviewer joined), one for their answers, one for their
quotes, one for their answers' passages and one for their runs, however many rows it holds. JSONL
and CSV read the next batch on a thread (same connection, same snapshot) while this one is
encoded, and encode each answer's and run's part of the line once per batch (see the fast
encoders below, held byte for byte to the plain ones by tests/test_exports_parity.py).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import queue
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from datetime import time as dt_time
from datetime import timezone as dt_timezone
from itertools import groupby
from typing import Any, BinaryIO

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage

SCHEMA_VERSION = "1"
BATCH = 5000
FORMATS = ("jsonl", "csv", "golden")
CONTENT_TYPES = {"jsonl": "application/x-ndjson", "csv": "text/csv", "golden": "application/x-ndjson"}
EXTENSIONS = {"jsonl": "jsonl", "csv": "csv", "golden": "golden.jsonl"}

CSV_FIELDS = (
    "answer_id", "external_id", "question", "answer", "passage_ids", "claim_id", "claim_text", "answer_start",
    "answer_end", "judge_label", "category", "explanation", "quotes", "human_label", "decision", "origin", "note",
    "reviewer", "decided_at", "judge_profile", "judge_version", "judge_model", "judge_backend", "policy_version",
)
PASSAGE_FIELDS = ("tag", "agency", "title", "section", "source_url", "fetched_at")
# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
# A human's non-SUPPORTED label as a golden-set span label (judges.eval counts all three positive).
HUMAN_SPAN_LABELS = {
    "CONTRADICTED": "Unwanted.Intrinsic", "UNSUPPORTED": "Unwanted.Extrinsic", "PARTIALLY_SUPPORTED": "Questionable",
}


class BadFilter(ValueError):
    """A filter value the export cannot use; the message is for the person who typed it."""


@dataclass(frozen=True)
class ExportFilters:
    since: date | None = None  # decided on or after this day (UTC)
    profile: str = ""  # NAME or NAME@VERSION of the run the claim came from

    def as_dict(self) -> dict[str, Any]:
        return {"since": self.since.isoformat() if self.since else None, "profile": self.profile or None}


def parse_filters(*, since: str = "", profile: str = "") -> ExportFilters:
    try:
        day = date.fromisoformat(since) if since else None
    except ValueError:
        raise BadFilter(f"since: {since!r} is not a date like 2026-08-16") from None
    if len(profile) > 150 or profile.count("@") > 1:
        raise BadFilter(f"profile: {profile[:40]!r} is not NAME or NAME@VERSION")
    return ExportFilters(since=day, profile=profile.strip())


def decided_claims(filters: ExportFilters) -> QuerySet[Claim]:
    claims = Claim.objects.exclude(decision="")
    if filters.since:
        claims = claims.filter(decided_at__gte=datetime.combine(filters.since, dt_time.min, tzinfo=dt_timezone.utc))
    if filters.profile:
        name, _, version = filters.profile.partition("@")
        claims = claims.filter(run__profile=name, **({"run__prompt_version": version} if version else {}))
    return claims


# --- the snapshot ------------------------------------------------------------------------------


@contextmanager
def read_snapshot():
    """One transaction that sees the database as it was at its first query, for the whole export.

    On Postgres: REPEATABLE READ, READ ONLY, so a decision committed mid-export is entirely absent
    (and a claim changed mid-export shows its old state). Inside a transaction someone else
    opened (tests, a caller's atomic block) that transaction is used as it is. SQLite (the demo)
    gets no snapshot: Django opens its transactions there with BEGIN IMMEDIATE, a write lock that
    would stall the judge worker for as long as a slow client downloads.
    """
    if connection.vendor != "postgresql":
        yield
        return
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:  # must be the transaction's first statement
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


# --- rows --------------------------------------------------------------------------------------


# Read as plain values, not models: building model instances and prefetch bookkeeping cost more
# than the queries themselves (about 3x the time per row).
CLAIM_COLUMNS = (
    "id", "answer_id", "cid", "text", "answer_start", "answer_end", "label", "category", "explanation", "origin",
    "human_label", "decision", "note", "decided_by__username", "decided_at", "run_id",
)
# A claim's run, read apart from the claims like its answer: once per batch, not once per claim.
RUN_COLUMNS = ("id", "profile", "prompt_version", "model", "backend")


@dataclass(frozen=True)
class Batch:
    claims: list[tuple]  # CLAIM_COLUMNS values, in that order
    answers: dict[int, tuple]  # by answer id: ANSWER_COLUMNS values after the id
    quotes: dict[int, list]  # by claim id
    passages: dict[int, list]  # by answer id
    runs: dict[int, tuple]  # by run id: RUN_COLUMNS values after the id

    def rows(self) -> Iterator[dict[str, Any]]:
        for values in self.claims:
            claim = dict(zip(CLAIM_COLUMNS, values))
            claim |= dict(zip(("run__profile", "run__prompt_version", "run__model", "run__backend"),
                              self.runs[claim["run_id"]]))
            answer_id = claim["answer_id"]
            answer = dict(zip(ANSWER_COLUMNS[1:], self.answers[answer_id]))
            yield claim_row(claim, answer, self.quotes[claim["id"]], self.passages[answer_id])


def _batches(claims: QuerySet[Claim], *, passage_text: bool) -> Iterator[Batch]:
    """BATCH claims at a time in (answer, claim) order, each with its answers, quotes, passages and
    runs: five indexed queries per batch, however deep into the export it is."""
    claims = claims.order_by("answer_id", "id").values_list(*CLAIM_COLUMNS)
    last_answer, last_claim = 0, 0
    while True:
        # The first condition repeats what the OR implies so Postgres can start the index scan there.
        batch = _fetch(claims.filter(Q(answer_id__gte=last_answer),
                                     Q(answer_id__gt=last_answer) | Q(answer_id=last_answer, id__gt=last_claim))[:BATCH])
        if not batch:
            return
        answer_ids = {c[1] for c in batch}
        yield Batch(batch, _answers(answer_ids), _quotes([c[0] for c in batch]), _passages(answer_ids, passage_text),
                    _runs({c[15] for c in batch}))
        last_answer, last_claim = batch[-1][1], batch[-1][0]


@contextmanager
def _read_ahead(batches: Iterator[Batch]) -> Iterator[Iterator[Batch]]:
    """`batches`, read one batch ahead by a thread, so Postgres works on the next batch while this
    thread encodes the current one (alone, each waited for the other: about half the wall time).

    The thread queries through this thread's connection (Django's connections are per thread),
    so it reads inside the same REPEATABLE READ transaction: the same snapshot. psycopg lets one
    query run at a time on a connection, and this thread sends none while it reads batches. At
    most three batches live at once (one encoded, one queued, one being read): memory stays
    flat. Leaving the block (end, error, a client that went away) stops the thread and waits for
    it, so the transaction never ends under a running query. SQLite: read in line."""
    if connection.vendor != "postgresql":
        yield batches
        return
    shared = connections[DEFAULT_DB_ALIAS]
    ahead: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        connections[DEFAULT_DB_ALIAS] = shared  # this thread's `connection` is now the caller's
        try:
            for batch in batches:
                if not put(batch):
                    return
            put(_END)
        except BaseException as exc:  # handed to the reader, who raises it
            put(exc)

    def consume() -> Iterator[Batch]:
        while (item := ahead.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item

    shared.inc_thread_sharing()
    thread = threading.Thread(target=read, name="export-read-ahead", daemon=True)
    thread.start()
    try:
        yield consume()
    finally:
        stop.set()
        thread.join()
        shared.dec_thread_sharing()


_END = object()


def _ids_in(model, field: str, ids: Iterable[int]) -> Q | RawSQL:
    """`field IN ids`. On Postgres `column = ANY(array)`: one parameter (a thousand placeholders
    cost more to build and parse than the query takes to run) that the index scan walks in order
    (`IN (SELECT unnest(...))` hashes the ids first)."""
    if connection.vendor == "postgresql":
        column = f'"{model._meta.db_table}"."{model._meta.get_field(field).column}"'
        # The array as its text form: psycopg's list dumper (Python) took longer than the query.
        array = "{" + ",".join(map(str, ids)) + "}"
        return RawSQL(f"{column} = ANY(%s::bigint[])", [array], output_field=BooleanField())
    return Q(**{f"{field}__in": list(ids)})


def _fetch(rows: QuerySet) -> list[tuple]:
    """A values_list query's rows, with timestamps parsed by psycopg's C loader: Django's own
    timestamptz loader is a Python subclass that parsed each claim's decided_at slower than the
    rest of its row took to encode. Same values (aware datetimes in the connection's time zone,
    UTC); tests/test_exports_parity.py compares the output with the ORM's reading."""
    if connection.vendor != "postgresql":
        return list(rows)
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", _c_timestamptz_loader())
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.cache
def _c_timestamptz_loader():
    """psycopg's default timestamptz loader (its C one when psycopg[binary] or [c] is installed)."""
    import psycopg

    return psycopg.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, psycopg.pq.Format.TEXT)


ANSWER_COLUMNS = ("id", "external_id", "question", "answer", "policy__version")


def _answers(answer_ids: set[int]) -> dict[int, tuple]:
    # Read apart from the claims: an answer's text once per batch, not once per claim.
    rows = Answer.objects.filter(_ids_in(Answer, "id", answer_ids)).values_list(*ANSWER_COLUMNS)
    return {row[0]: row[1:] for row in _fetch(rows)}


def _runs(run_ids: set[int]) -> dict[int, tuple]:
    rows = JudgeRun.objects.filter(_ids_in(JudgeRun, "id", run_ids)).values_list(*RUN_COLUMNS)
    return {row[0]: row[1:] for row in _fetch(rows)}


def _span(start: int | None, end: int | None) -> list[int] | None:
    return [start, end] if start is not None else None


def _quotes(claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    quotes = defaultdict(list)
    for claim_id, pid, quote, start, end, match in _fetch(
        Evidence.objects.filter(_ids_in(Evidence, "claim", claim_ids)).order_by("claim_id", "position")
        .values_list("claim_id", "passage_pid", "quote", "start", "end", "match")
    ):
        quotes[claim_id].append(
            {"passage_id": pid, "quote": quote, "span": [start, end] if start is not None else None, "match": match})
    return quotes


def _passages(answer_ids: set[int], passage_text: bool) -> dict[int, list]:
    """Each answer's passages in order: objects, or (CSV) ids only, so their text is not read."""
    passages = defaultdict(list)
    rows = Passage.objects.filter(_ids_in(Passage, "answer", answer_ids)).order_by("answer_id", "position")
    if not passage_text:
        for answer_id, pid in _fetch(rows.values_list("answer_id", "pid")):
            passages[answer_id].append(pid)
        return passages
    for answer_id, pid, text, *header in _fetch(rows.values_list("answer_id", "pid", "text", *PASSAGE_FIELDS)):
        passages[answer_id].append({"id": pid, "text": text} | dict(zip(PASSAGE_FIELDS, header)))
    return passages


def claim_row(claim: dict[str, Any], answer: dict[str, Any], quotes: list[dict[str, Any]],
              passages: list) -> dict[str, Any]:
    """A decided claim (CLAIM_COLUMNS values) as one export row (JSONL's shape; `csv_cells` flattens it)."""
    return {
        "answer_id": claim["answer_id"],
        "external_id": answer["external_id"],
        "question": answer["question"],
        "answer": answer["answer"],
        "passages": passages,
        "claim_id": claim["cid"],
        "claim_text": claim["text"],
        "answer_span": _span(claim["answer_start"], claim["answer_end"]),
        # A claim a reviewer added was never labelled by the judge: its label field holds the human's.
        "judge_label": claim["label"] if claim["origin"] == Claim.Origin.JUDGE else None,
        "category": claim["category"],
        "explanation": claim["explanation"],
        "quotes": quotes,
        "human_label": claim["human_label"],
        "decision": claim["decision"],
        "origin": claim["origin"],
        "note": claim["note"],
        "reviewer": claim["decided_by__username"],
        "decided_at": claim["decided_at"].isoformat() if claim["decided_at"] else None,
        "judge_profile": claim["run__profile"],
        "judge_version": claim["run__prompt_version"],
        "judge_model": claim["run__model"],
        "judge_backend": claim["run__backend"],
        "policy_version": answer["policy__version"],
    }


# --- golden records (the import_golden format) -------------------------------------------------


def human_truth(answer: str, decided: Iterable[tuple[str, list[int] | None]]) -> tuple[bool, list[dict[str, Any]]]:
    """The humans' answer-level label and spans from (human label, answer span) of decided claims:
    hallucinated when any decided claim's label is not SUPPORTED."""
    flagged = [(label, span) for label, span in decided if label != "SUPPORTED"]
    spans = []
    for label, span in flagged:
        if span and span[0] < span[1]:  # a claim without a span counts at answer level only
            start, end = span
            spans.append({"start": start, "end": end, "text": answer[start:end], "label": HUMAN_SPAN_LABELS[label]})
    return bool(flagged), spans


def golden_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One adjudicated answer's decided claims (export rows) as one golden-set record."""
    first = rows[0]
    hallucinated, spans = human_truth(first["answer"], [(r["human_label"], r["answer_span"]) for r in rows])
    return {
        # external_id is unique per client only; the answer id is unique here.
        "id": f"claimdesk-{first['answer_id']}",
        "dataset": "ClaimDesk",
        "task_type": "rag_qa",
        "question": first["question"] or None,
        "passages": [{k: v for k, v in p.items() if v} for p in first["passages"]],  # blank header fields left out
        "answer": first["answer"],
        "hallucinated": hallucinated,
        "spans": spans,
        "sentence_labels": None,
        "meta": {
            "answer_id": first["answer_id"], "external_id": first["external_id"],
            "claims": [{k: r[k] for k in ("claim_id", "judge_label", "human_label", "decision", "reviewer")}
                       for r in rows],
        },
    }


def golden_records(filters: ExportFilters) -> Iterator[dict[str, Any]]:
    """Adjudicated answers with a decided claim that matches the filters, each with all its decided
    claims (a record built from some of them could get the answer's label wrong). Answers still in
    review are left out: some of their claims wait for a decision."""
    answers = decided_claims(filters).values("answer_id")
    claims = decided_claims(ExportFilters()).filter(
        answer_id__in=answers, answer__review_status=Answer.ReviewStatus.ADJUDICATED)
    rows = (row for batch in _batches(claims, passage_text=True) for row in batch.rows())
    for _, group in groupby(rows, key=lambda row: row["answer_id"]):
        yield golden_record(list(group))


# --- encoding ----------------------------------------------------------------------------------


def neutralize(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_cells(row: dict[str, Any]) -> list[Any]:
    span = row["answer_span"] or [None, None]
    flat = row | {
        "passage_ids": ";".join(row["passages"]),
        "answer_start": span[0],
        "answer_end": span[1],
        "quotes": orjson.dumps(row["quotes"]).decode(),
    }
    return [neutralize(flat[field]) for field in CSV_FIELDS]


def _csv_line(cells: Iterable[Any]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["" if cell is None else cell for cell in cells])
    return buffer.getvalue().encode()


def _json_line(obj: dict[str, Any]) -> bytes:
    # orjson: compact UTF-8 JSON, about 15x faster than json.dumps; at a million rows the encoder
    # was the export's largest cost.
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)


# --- the fast encoders: the same bytes as claim_row + _json_line / csv_cells + _csv_line --------
#
# At a million rows the per-row work is the export's cost, and most of a row repeats its answer
# (question, answer text and, in JSONL, ~2 KB of passages on each of the answer's 5-15 claims).
# So each answer's part of the line is encoded once per batch, and each claim adds only its own
# fields. The reference encoders above stay the definition of the format: tests/test_exports_parity.py
# checks these against them on awkward values.

JUDGE = Claim.Origin.JUDGE.value


def _jsonl_batch(batch: Batch) -> Iterator[bytes]:
    """A batch's JSONL lines. A line is one JSON object whose keys come in claim_row's order:
    the answer's head (answer_id .. passages), the claim's own fields, its run's fields, the
    answer's tail (policy_version); orjson writes compact JSON, so the parts join with commas."""
    parts = {}
    for answer_id, (external_id, question, text, policy_version) in batch.answers.items():
        head = orjson.dumps({"answer_id": answer_id, "external_id": external_id, "question": question,
                             "answer": text, "passages": batch.passages[answer_id]})
        parts[answer_id] = (head[:-1] + b",", b',"policy_version":' + orjson.dumps(policy_version) + b"}\n")
    runs = {run_id: b"," + orjson.dumps({"judge_profile": profile, "judge_version": version, "judge_model": model,
                                         "judge_backend": backend})[1:-1]
            for run_id, (profile, version, model, backend) in batch.runs.items()}
    quotes = batch.quotes
    for (claim_id, answer_id, cid, text, start, end, label, category, explanation, origin, human_label, decision,
         note, reviewer, decided_at, run_id) in batch.claims:
        head, tail = parts[answer_id]
        own = orjson.dumps({
            "claim_id": cid, "claim_text": text, "answer_span": [start, end] if start is not None else None,
            "judge_label": label if origin == JUDGE else None, "category": category, "explanation": explanation,
            "quotes": quotes[claim_id], "human_label": human_label, "decision": decision, "origin": origin,
            "note": note, "reviewer": reviewer, "decided_at": decided_at.isoformat() if decided_at else None,
        })
        yield b"".join((head, own[1:-1], runs[run_id], tail))


class _Lines(list):
    """A file for csv.writer that keeps each line it writes (writerow writes a line in one call)."""

    write = list.append


def _neutralized(cells: Iterable[Any]) -> list[Any]:
    return ["'" + cell if cell.__class__ is str and cell.startswith(FORMULA_STARTS) else cell for cell in cells]


# A run of cells that csv would write as they are, joined by commas: no cell holds a quote, a
# line break or a comma (so the commas counted are the separators) and none starts like a formula
# (what neutralize would change): a cell starts the run or follows a comma.
_FORMULA_AFTER_COMMA = tuple("," + start for start in FORMULA_STARTS if start != "\r")


def _plain(cells: str, count: int) -> bool:
    if '"' in cells or "\n" in cells or "\r" in cells or cells.count(",") != count - 1:
        return False
    if cells.startswith(FORMULA_STARTS):
        return False
    for formula in _FORMULA_AFTER_COMMA:
        if formula in cells:
            return False
    return True


def _csv_quoted(cell: str) -> str:
    """One cell as csv (excel dialect, QUOTE_MINIMAL) writes it: quoted when it holds a comma, a
    quote or a line break, its quotes doubled."""
    if "," in cell or '"' in cell or "\n" in cell or "\r" in cell:
        return '"' + cell.replace('"', '""') + '"'
    return cell


def _csv_batch(batch: Batch) -> Iterator[bytes]:
    """A batch's CSV lines, as csv.writer writes csv_cells(row): a row is its cells, each quoted on
    its own, joined by commas. So the answer's first five cells are written once per answer, and
    a claim's own cells, when none needs quoting or neutralizing (the common case), are joined
    with an f-string; any other claim row is written by csv.writer itself. The quotes cell is
    JSON (never a formula; its line breaks escaped), quoted on its own."""
    lines = _Lines()
    writer = csv.writer(lines)
    prefixes = {}
    for answer_id, (external_id, question, text, policy_version) in batch.answers.items():
        writer.writerow(_neutralized((answer_id, external_id, question, text, ";".join(batch.passages[answer_id]))))
        prefixes[answer_id] = (lines.pop()[:-2] + ",", policy_version, "" if policy_version is None else str(policy_version))
    # A run's four cells, joined once per batch when they need no quoting (else None: csv.writer).
    runs = {run_id: ",".join(cells) + "," if _plain(",".join(cells), 4) else None
            for run_id, cells in batch.runs.items()}
    quotes = batch.quotes
    dumps = orjson.dumps
    for (claim_id, answer_id, cid, text, start, end, label, category, explanation, origin, human_label, decision,
         note, reviewer, decided_at, run_id) in batch.claims:
        prefix, policy_version, policy_cell = prefixes[answer_id]
        run_cells = runs[run_id]
        judge_label = label if origin == JUDGE else None
        when = decided_at.isoformat() if decided_at else None
        quoted = dumps(quotes[claim_id]).decode()
        if start is None:
            end = None
        # The claim's cells before and after the quotes cell: NOT NULL columns as they are.
        before = (f"{cid},{text},{'' if start is None else start},{'' if end is None else end},"
                  f"{judge_label or ''},{category},{explanation}")
        after = f"{human_label},{decision},{origin},{note},{reviewer or ''},{when or ''}"
        # Checked as one run of 13 cells: each part has at least its own separators (6 and 5), so
        # 12 commas in all means neither holds one in a cell.
        if run_cells is not None and _plain(before + "," + after, 13):
            # policy_version is a number: csv writes it as it is, never neutralized.
            yield "".join((prefix, before, ",", _csv_quoted(quoted), ",", after, ",", run_cells, policy_cell,
                           "\r\n")).encode()
            continue
        profile, version, model, backend = batch.runs[run_id]
        writer.writerow(_neutralized((
            cid, text, start, end, judge_label, category, explanation, quoted, human_label, decision, origin, note,
            reviewer, when, profile, version, model, backend, policy_version)))
        yield (prefix + lines.pop()).encode()


def export_stream(fmt: str, filters: ExportFilters) -> Iterator[bytes]:
    """The export file as chunks: exactly one chunk per row, after CSV's header line."""
    if fmt not in FORMATS:
        raise BadFilter(f"format: one of {', '.join(FORMATS)}")
    with read_snapshot():
        if fmt in ("csv", "jsonl"):
            encode = _csv_batch if fmt == "csv" else _jsonl_batch
            if fmt == "csv":
                yield _csv_line(CSV_FIELDS)
            with _read_ahead(_batches(decided_claims(filters), passage_text=fmt == "jsonl")) as batches:
                for batch in batches:
                    yield from encode(batch)
        else:
            for record in golden_records(filters):
                yield _json_line(record)


def write_export(out: BinaryIO, *, fmt: str, filters: ExportFilters) -> dict[str, Any]:
    """Write the export to `out` and return its manifest (row count and SHA-256 of the bytes written)."""
    digest, chunks = hashlib.sha256(), 0
    for chunk in export_stream(fmt, filters):
        digest.update(chunk)
        out.write(chunk)
        chunks += 1
    return {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "filters": filters.as_dict(),
        "rows": chunks - (1 if fmt == "csv" else 0),
        "sha256": digest.hexdigest(),
        "created_at": timezone.now().isoformat(),
        "snapshot": "repeatable read, read only" if connection.vendor == "postgresql" else "none (sqlite)",
    }


class NullSink:
    """Where the web manifest's bytes go: they are hashed and counted, not kept."""

    def write(self, chunk: bytes) -> int:
        return len(chunk)


def export_filename(fmt: str) -> str:
    return f"claimdesk-labels-{timezone.now():%Y%m%d-%H%M%S}.{EXTENSIONS[fmt]}"
