"""Adjudicated labels out: one row per decided claim, as JSONL or CSV (or one golden record per
adjudicated answer), streamed in constant memory from one consistent snapshot.

Reads only. The command (`manage.py export_labels`) and the web download (`/exports/`) both run
`export_chunks` (`export_stream` is its bytes); `write_export` also hashes what it writes and
counts the rows into a manifest.

Rows come in (answer id, claim id) order, read in keyset batches of at most BATCH claims and
written CHUNK rows a chunk. On Postgres, JSONL and CSV: each batch is one query for the claims, in
which Postgres makes each claim's own parts of its line (its reviewer included), one each for
their quotes, reviews (each reviewer's decisions) and human evidence, also made by Postgres, one
for their answers, one for their answers' passages and one for their runs, however many rows it
holds; two reader threads, each on its own connection in the same snapshot, take blocks of BLOCK
answer ids in turn while this thread puts the lines together, encoding each answer's and run's
part once per batch (see the fast encoders below, held byte for byte to the plain ones by
tests/test_exports_parity.py). Golden records go through the plain reference encoders.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date, datetime
from datetime import time as dt_time
from datetime import timezone as dt_timezone
from itertools import chain, cycle, groupby
from typing import Any, BinaryIO

import orjson
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import BooleanField, F, Max, Min, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from reviewapp.review import selectors
from reviewapp.models import Answer, Claim, Evidence, EvidenceMark, JudgeRun, Passage, Review
from reviewapp.quality.selectors import live_claims

SCHEMA_VERSION = "1"
BATCH = 5000
# Rows a chunk of output: ~1 MB of JSONL. A whole batch a chunk (~19 MB, joined as text and then
# as bytes) raised the JSONL export's peak RSS from 123 to 210 MB.
CHUNK = 256
BLOCK = (
    500  # answer ids the export's readers take in turn: about one batch at 5-15 claims an answer
)
FORMATS = ("jsonl", "csv", "golden", "ragtruth")
CONTENT_TYPES = {
    "jsonl": "application/x-ndjson",
    "csv": "text/csv",
    "golden": "application/x-ndjson",
    "ragtruth": "application/x-ndjson",
}
EXTENSIONS = {
    "jsonl": "jsonl",
    "csv": "csv",
    "golden": "golden.jsonl",
    "ragtruth": "ragtruth.jsonl",
}
RECORD_FORMATS = ("golden", "ragtruth")  # one record per adjudicated answer, not one row per claim

CSV_FIELDS = (
    "answer_id",
    "external_id",
    "question",
    "answer",
    "passage_ids",
    "claim_id",
    "claim_text",
    "answer_start",
    "answer_end",
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
)
PASSAGE_FIELDS = (
    "tag",
    "agency",
    "title",
    "section",
    "source_url",
    "fetched_at",
    "score",
    "metadata",
)
# A passage field with one of these values was not given (golden records leave such fields out).
UNSET = ("", None, {})
# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
# A human's non-SUPPORTED label as a golden-set span label (judges.eval counts all three positive).
HUMAN_SPAN_LABELS = {
    "CONTRADICTED": "Unwanted.Intrinsic",
    "UNSUPPORTED": "Unwanted.Extrinsic",
    "PARTIALLY_SUPPORTED": "Questionable",
}


class BadFilter(ValueError):
    """A filter value the export cannot use; the message is for the person who typed it."""


@dataclass(frozen=True)
class ExportFilters:
    since: date | None = None  # decided on or after this day (UTC)
    profile: str = ""  # NAME or NAME@VERSION of the run the claim came from

    def as_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat() if self.since else None,
            "profile": self.profile or None,
        }


def parse_filters(*, since: str = "", profile: str = "") -> ExportFilters:
    try:
        day = date.fromisoformat(since) if since else None
    except ValueError:
        raise BadFilter(f"since: {since!r} is not a date like 2026-08-16") from None
    if "\x00" in profile:
        raise BadFilter("profile: must not contain NUL (\\u0000) characters")
    if len(profile) > 150 or profile.count("@") > 1:
        raise BadFilter(f"profile: {profile[:40]!r} is not NAME or NAME@VERSION")
    return ExportFilters(since=day, profile=profile.strip())


def decided_claims(filters: ExportFilters) -> QuerySet[Claim]:
    # Decisions on gold copies are reviewer-quality data (reviewapp.quality.exports), never labels.
    claims = live_claims(Claim.objects.exclude(decision=""))
    if filters.since:
        claims = claims.filter(
            decided_at__gte=datetime.combine(filters.since, dt_time.min, tzinfo=dt_timezone.utc)
        )
    if filters.profile:
        name, _, version = filters.profile.partition("@")
        claims = claims.filter(
            run__profile=name, **({"run__prompt_version": version} if version else {})
        )
    return claims


# --- the snapshot ------------------------------------------------------------------------------


SNAPSHOT_TRANSACTION = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


@contextmanager
def read_snapshot():
    """One transaction that sees the database as it was at its first query, for the whole export.

    REPEATABLE READ, READ ONLY, so a decision committed mid-export is entirely absent (and a claim
    changed mid-export shows its old state). Inside a transaction someone else opened (tests, a
    caller's atomic block) that transaction is used as it is. Yields whether it opened the
    transaction (then its snapshot is one other connections can import).
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:  # must be the transaction's first statement
                cursor.execute(SNAPSHOT_TRANSACTION)
        yield outermost


# --- rows --------------------------------------------------------------------------------------


# Read as plain values, not models: building model instances and prefetch bookkeeping cost more
# than the queries themselves (about 3x the time per row).
CLAIM_COLUMNS = (
    "id",
    "answer_id",
    "cid",
    "text",
    "answer_start",
    "answer_end",
    "label",
    "category",
    "explanation",
    "origin",
    "human_label",
    "decision",
    "decision_mode",
    "note",
    "decided_by__username",
    "decided_at",
    "consensus_method",
    "run_id",
    "confidence",
)
RUN_AT = CLAIM_COLUMNS.index("run_id")
# A claim's run, read apart from the claims like its answer: once per batch, not once per claim.
RUN_COLUMNS = ("id", "profile", "prompt_version", "model", "backend")


@dataclass(frozen=True)
class Batch:
    claims: list[tuple]  # CLAIM_COLUMNS values, in that order
    answers: dict[int, tuple]  # by answer id: ANSWER_COLUMNS values after the id
    quotes: dict[int, list]  # by claim id
    passages: dict[int, list]  # by answer id
    runs: dict[int, tuple]  # by run id: RUN_COLUMNS values after the id
    reviews: dict[int, list]  # by claim id
    marks: dict[int, list]  # by claim id: the reviewers' evidence (HUMAN_EVIDENCE_FIELDS)

    def rows(self) -> Iterator[dict[str, Any]]:
        for values in self.claims:
            claim = dict(zip(CLAIM_COLUMNS, values))
            claim |= dict(zip(("run__profile", "run__prompt_version", "run__model", "run__backend"),
                              self.runs[claim["run_id"]]))
            answer_id = claim["answer_id"]
            answer = dict(zip(ANSWER_COLUMNS[1:], self.answers[answer_id]))
            yield claim_row(
                claim,
                answer,
                self.quotes[claim["id"]],
                self.passages[answer_id],
                self.reviews[claim["id"]],
                self.marks[claim["id"]],
            )


def _keyset(rows: QuerySet) -> Iterator[list[tuple]]:
    """A values_list of claims whose first two columns are the claim's id and its answer's id, BATCH
    rows at a time in (answer, claim) order: one indexed query per batch, however deep it is."""
    rows = rows.order_by("answer_id", "id")
    last_answer, last_claim = 0, 0
    # The first condition repeats what the OR implies so Postgres can start the index scan there.
    while batch := _fetch(rows.filter(
            Q(answer_id__gte=last_answer),
            Q(answer_id__gt=last_answer) | Q(answer_id=last_answer, id__gt=last_claim))[:BATCH]):
        yield batch
        if len(batch) < BATCH:
            return  # the last: no need to ask for an empty one
        last_answer, last_claim = batch[-1][1], batch[-1][0]


def _batches(claims: QuerySet[Claim], *, passage_text: bool) -> Iterator[Batch]:
    """BATCH claims at a time, each batch with its answers, quotes, passages, runs and reviews: six
    queries."""
    for batch in _keyset(claims.values_list(*CLAIM_COLUMNS)):
        answer_ids = {c[1] for c in batch}
        claim_ids = [c[0] for c in batch]
        yield Batch(
            batch,
            _answers(answer_ids),
            _quotes(claim_ids),
            _passages(answer_ids, passage_text),
            _runs({c[RUN_AT] for c in batch}),
            _reviews(claim_ids),
            evidence_marks(claim_ids),
        )


@dataclass(frozen=True)
class LineBatch:
    """A batch of JSONL or CSV lines to put together: a claim's own parts come made by Postgres."""

    # claim id, answer id, run id, the claim's own parts of its line before and after its quotes
    # (Postgres's), its confidence
    claims: list[tuple[int, int, int, str, str, float | None]]
    answers: dict[int, tuple]  # as in Batch
    passages: dict[int, list]
    runs: dict[int, tuple]
    quotes: dict[int, str]  # by claim id: its quotes' part of the line (Postgres's), if it has any
    reviews: dict[int, str]  # by claim id: its reviews' part (Postgres's), if it has any
    evidence: dict[int, str]  # by claim id: its human evidence's part (Postgres's), if it has any


def _line_batches(claims: QuerySet[Claim], fmt: str) -> Iterator[LineBatch]:
    """BATCH claims at a time with their answers, passages, runs, quotes, reviews and human
    evidence: seven queries per batch."""
    head, tail = CLAIM_JSONL if fmt == "jsonl" else CLAIM_CSV
    # The decider's name joined (DECIDER in the parts): a subquery a claim cost Postgres 4.7 us.
    rows = (claims.alias(decider=F("decided_by__username"))
            .annotate(head=RawSQL(head, ()), tail=RawSQL(tail, ()))
            # The confidence is encoded here: a float8's text in Postgres (1) is not orjson's (1.0)
            .values_list("id", "answer_id", "run_id", "head", "tail", "confidence"))
    for batch in _keyset(rows):
        answer_ids = {c[1] for c in batch}
        yield LineBatch(batch, _answers(answer_ids), _passages(answer_ids, fmt == "jsonl"),
                        _runs({c[2] for c in batch}), _quote_parts(batch, fmt),
                        _review_parts(batch, fmt), _evidence_parts(batch, fmt))


@contextmanager
def _read_ahead(
    claims: QuerySet[Claim], fmt: str, *, readers: int
) -> Iterator[Iterator[LineBatch]]:
    """The export's line batches in order, read ahead by `readers` threads, so Postgres works on
    the next batches while this thread puts the current one together.

    Postgres makes each claim's own part of its line: ~11 us of CPU a row, more than this thread
    spends on it (~7), so one backend could bound the export. Two readers take blocks of BLOCK
    answer ids in turn (the 1st, 3rd, 5th ... and the 2nd, 4th ...), each on its own connection,
    and this thread takes their batches block by block: the same order as one reader. At load 3
    (another engineer's benchmark on the 2 cores) two readers exported JSONL at 56-74k rows/s
    against 43-48k with one, CSV at 56-65k against 46-52k. The first reader queries through this
    thread's connection (Django's connections are per thread): the same REPEATABLE READ
    transaction, which sends nothing else meanwhile. The second opens its own and imports that
    transaction's snapshot (pg_export_snapshot): it sees exactly the same rows. One reader only
    when the export runs inside a transaction it did not open (its uncommitted rows, in tests,
    are not in a snapshot another connection can import). Each reader holds at most one batch
    queued and one being read: memory stays flat. Leaving the block (end, error, a client that
    went away) stops the readers and waits for them, so no transaction ends under a running query
    and the second connection is closed."""
    shared = connections[DEFAULT_DB_ALIAS]
    span = claims.aggregate(first=Min("answer_id"), last=Max("answer_id"))
    # the blocks' first answer ids
    starts = range(span["first"] or 0, (span["last"] or -1) + 1, BLOCK)
    snapshot = _exported_snapshot() if readers > 1 else ""
    queues = [queue.Queue(maxsize=1) for _ in range(readers)]
    stop = threading.Event()

    def put(ahead: queue.Queue, item) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read(reader: int) -> None:
        connections[DEFAULT_DB_ALIAS] = shared  # this thread's `connection` is now the caller's
        ahead = queues[reader]
        try:
            with _snapshot_connection(shared, snapshot) if reader else nullcontext():
                for start in starts[reader::readers]:
                    block = claims.filter(answer_id__gte=start, answer_id__lt=start + BLOCK)
                    for item in chain(
                        _line_batches(block, fmt), [_BLOCK_END]
                    ):  # one batch at a time
                        if not put(ahead, item):
                            return
            put(ahead, _END)
        except BaseException as exc:  # handed to the consumer, who raises it
            put(ahead, exc)

    def consume() -> Iterator[LineBatch]:
        for ahead in cycle(queues):  # block by block, in the readers' turns
            while (item := ahead.get()) is not _BLOCK_END:
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item

    shared.inc_thread_sharing()
    threads = [
        threading.Thread(
            target=read, args=(reader,), name=f"export-read-ahead-{reader}", daemon=True
        )
        for reader in range(readers)
    ]
    for thread in threads:
        thread.start()
    try:
        yield consume()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        shared.dec_thread_sharing()


_END = object()
_BLOCK_END = object()


def _exported_snapshot() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_export_snapshot()")
        return cursor.fetchone()[0]


@contextmanager
def _snapshot_connection(like, snapshot: str):
    """This thread on a connection of its own (to `like`'s database) inside a REPEATABLE READ,
    READ ONLY transaction that reads `snapshot`: the exporting transaction's rows, no others."""
    own = type(like)(like.settings_dict, like.alias)
    connections[DEFAULT_DB_ALIAS] = own
    try:
        with transaction.atomic():
            with own.cursor() as cursor:  # both must come before the transaction's first query
                cursor.execute(SNAPSHOT_TRANSACTION)
                cursor.execute("SET TRANSACTION SNAPSHOT %s", [snapshot])
            yield
    finally:
        own.close()


def _ids_in(model, field: str, ids: Iterable[int]) -> RawSQL:
    """`field IN ids` as `column = ANY(array)`: one parameter (a thousand placeholders cost more to
    build and parse than the query takes to run) that the index scan walks in order
    (`IN (SELECT unnest(...))` hashes the ids first)."""
    column = f'"{model._meta.db_table}"."{model._meta.get_field(field).column}"'
    # The array as its text form: psycopg's list dumper (Python) took longer than the query.
    array = "{" + ",".join(map(str, ids)) + "}"
    return RawSQL(f"{column} = ANY(%s::bigint[])", [array], output_field=BooleanField())


def _fetch(rows: QuerySet) -> list[tuple]:
    """A values_list query's rows, with timestamps parsed by psycopg's C loader: Django's own
    timestamptz loader is a Python subclass that parsed each claim's decided_at slower than the
    rest of its row took to encode. Same values (aware datetimes in the connection's time zone,
    UTC); tests/test_exports_parity.py compares the output with the ORM's reading."""
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", _c_timestamptz_loader())
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.cache
def _c_timestamptz_loader():
    """psycopg's default timestamptz loader (its C one when psycopg[binary] or [c] is installed)."""
    import psycopg

    return psycopg.adapters.get_loader(
        psycopg.postgres.types["timestamptz"].oid, psycopg.pq.Format.TEXT
    )


ANSWER_COLUMNS = ("id", "external_id", "question", "answer", "policy__version", "prior_turns",
                  "adjudicated_verdict")
PRIOR_TURNS_AT = ANSWER_COLUMNS.index("prior_turns") - 1  # in the values after the id


def _answers(answer_ids: set[int]) -> dict[int, tuple]:
    # Read apart from the claims: an answer's text once per batch, not once per claim.
    rows = Answer.objects.filter(_ids_in(Answer, "id", answer_ids)).values_list(*ANSWER_COLUMNS)
    answers = {}
    for answer_id, *values in _fetch(rows):
        values[PRIOR_TURNS_AT] = orjson.loads(values[PRIOR_TURNS_AT])  # jsonb arrives as text here
        answers[answer_id] = tuple(values)
    return answers


def _runs(run_ids: set[int]) -> dict[int, tuple]:
    rows = JudgeRun.objects.filter(_ids_in(JudgeRun, "id", run_ids)).values_list(*RUN_COLUMNS)
    return {row[0]: row[1:] for row in _fetch(rows)}


def _span(start: int | None, end: int | None) -> list[int] | None:
    return [start, end] if start is not None else None


def _quotes(claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    quotes = defaultdict(list)
    for claim_id, pid, quote, start, end, match, differences in _fetch(
        Evidence.objects.filter(_ids_in(Evidence, "claim", claim_ids))
        .order_by("claim_id", "position")
        .values_list("claim_id", "passage_pid", "quote", "start", "end", "match", "differences")
    ):
        # jsonb arrives as text here
        quotes[claim_id].append(
            {
                "passage_id": pid,
                "quote": quote,
                "span": [start, end] if start is not None else None,
                "match": match,
                "differences": quote_differences(orjson.loads(differences)),
            }
        )
    return quotes


def quote_differences(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A quote's differing words as exported: kind, span (passage offsets), answer_span (answer
    offsets), in that order (judges.types.Difference)."""
    return [
        {"kind": d["kind"], "span": d.get("span"), "answer_span": d.get("answer_span")}
        for d in stored
    ]


REVIEW_FIELDS = (
    "reviewer",
    "stage",
    "label",
    "decision",
    "decision_mode",
    "note",
    "reason",
    "time_spent_ms",
)


def _reviews(claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Every reviewer's decision on each claim, once per stage (their own pass; a lead's
    adjudication): the latest one not undone (an undo is not a decision), in the order made."""
    rows = selectors.current_reviews(
        Review.objects.filter(_ids_in(Review, "claim", claim_ids))
    ).values_list(
        "claim_id",
        "id",
        "reviewer__username",
        "stage",
        "final_label",
        "decision",
        "decision_mode",
        "note",
        "reason",
        "time_spent_ms",
    )
    reviews = defaultdict(list)
    for claim_id, _, *values in sorted(_fetch(rows), key=lambda row: (row[0], row[1])):
        reviews[claim_id].append(dict(zip(REVIEW_FIELDS, values)))
    return reviews


HUMAN_EVIDENCE_FIELDS = ("reviewer", "passage_id", "span", "text", "stance", "cause")


def evidence_marks(claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Each claim's human evidence (EvidenceMark), one per reviewer in the order first made: the
    passage span that supports or contradicts it, the text it covers, and the cause (null: none)."""
    rows = (
        EvidenceMark.objects.filter(_ids_in(EvidenceMark, "claim", claim_ids))
        .order_by("claim_id", "id")
        .values_list(
            "claim_id",
            "reviewer__username",
            "passage__pid",
            "passage__text",
            "start",
            "end",
            "stance",
            "cause",
        )
    )
    marks = defaultdict(list)
    for claim_id, reviewer, pid, text, start, end, stance, cause in _fetch(rows):
        marks[claim_id].append(dict(zip(HUMAN_EVIDENCE_FIELDS, (
            reviewer, pid, _span(start, end), text[start:end] if start is not None else None,
            stance or None, cause or None))))
    return marks


def _passages(answer_ids: set[int], passage_text: bool) -> dict[int, list]:
    """Each answer's passages in order: objects, or (CSV) ids only, so their text is not read."""
    passages = defaultdict(list)
    rows = Passage.objects.filter(_ids_in(Passage, "answer", answer_ids)).order_by(
        "answer_id", "position"
    )
    if not passage_text:
        for answer_id, pid in _fetch(rows.values_list("answer_id", "pid")):
            passages[answer_id].append(pid)
        return passages
    for answer_id, pid, text, *header in _fetch(
        rows.values_list("answer_id", "pid", "text", *PASSAGE_FIELDS)
    ):
        fields = dict(zip(PASSAGE_FIELDS, header))
        # jsonb arrives as text (Django's loader)
        fields["metadata"] = orjson.loads(fields["metadata"])
        passages[answer_id].append({"id": pid, "text": text} | fields)
    return passages


def claim_row(claim: dict[str, Any], answer: dict[str, Any], quotes: list[dict[str, Any]],
              passages: list, reviews: list[dict[str, Any]] = (),
              human_evidence: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """A decided claim (CLAIM_COLUMNS values) as one export row (JSONL's shape; `csv_cells` flattens
    it). `human_label` is the final label, `consensus_method` how it was reached, `reviews` every
    reviewer's own decision (REVIEW_FIELDS) from which it came."""
    return {
        "answer_id": claim["answer_id"],
        "external_id": answer["external_id"],
        "question": answer["question"],
        "answer": answer["answer"],
        "passages": passages,
        "claim_id": claim["cid"],
        "claim_text": claim["text"],
        "answer_span": _span(claim["answer_start"], claim["answer_end"]),
        # A claim a reviewer added was never labelled by the judge: its label field holds the
        # human's.
        "judge_label": claim["label"] if claim["origin"] == Claim.Origin.JUDGE else None,
        "category": claim["category"],
        "explanation": claim["explanation"],
        "quotes": quotes,
        "human_label": claim["human_label"],
        "decision": claim["decision"],
        "decision_mode": claim["decision_mode"],
        "origin": claim["origin"],
        "note": claim["note"],
        "reviewer": claim["decided_by__username"],
        "decided_at": claim["decided_at"].isoformat() if claim["decided_at"] else None,
        "consensus_method": claim["consensus_method"],
        "reviews": list(reviews),
        # The passage spans reviewers marked as supporting or contradicting it, with their causes.
        "human_evidence": list(human_evidence),
        "judge_confidence": claim["confidence"],
        "judge_profile": claim["run__profile"],
        "judge_version": claim["run__prompt_version"],
        "judge_model": claim["run__model"],
        "judge_backend": claim["run__backend"],
        "policy_version": answer["policy__version"],
        # context the answer was given in (DESIGN.md's ingest payload)
        "prior_turns": answer["prior_turns"],
        # the answer's verdict after review
        "answer_human_verdict": (answer["adjudicated_verdict"] or None),
    }


# --- golden records (the import_golden format) -------------------------------------------------


def human_truth(
    answer: str, decided: Iterable[tuple[str, list[int] | None]]
) -> tuple[bool, list[dict[str, Any]]]:
    """The humans' answer-level label and spans from (human label, answer span) of decided claims:
    hallucinated when any decided claim's label is not SUPPORTED."""
    flagged = [(label, span) for label, span in decided if label != "SUPPORTED"]
    spans = []
    for label, span in flagged:
        if span and span[0] < span[1]:  # a claim without a span counts at answer level only
            start, end = span
            spans.append(
                {
                    "start": start,
                    "end": end,
                    "text": answer[start:end],
                    "label": HUMAN_SPAN_LABELS[label],
                }
            )
    return bool(flagged), spans


def golden_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One adjudicated answer's decided claims (export rows) as one golden-set record."""
    first = rows[0]
    hallucinated, spans = human_truth(
        first["answer"], [(r["human_label"], r["answer_span"]) for r in rows]
    )
    return {
        # external_id is unique per client only; the answer id is unique here.
        "id": f"claimdesk-{first['answer_id']}",
        "dataset": "ClaimDesk",
        "task_type": "rag_qa",
        "question": first["question"] or None,
        # unset left out
        "passages": [{k: v for k, v in p.items() if v not in UNSET} for p in first["passages"]],
        "answer": first["answer"],
        "hallucinated": hallucinated,
        "spans": spans,
        "sentence_labels": None,
        "meta": {
            "answer_id": first["answer_id"],
            "external_id": first["external_id"],
            # The golden format has no field for them (judges.eval reads none); import_golden reads
            # them here.
            "prior_turns": first["prior_turns"],
            "answer_human_verdict": first["answer_human_verdict"],
            "claims": [
                {
                    k: r[k]
                    for k in (
                        "claim_id",
                        "judge_label",
                        "human_label",
                        "decision",
                        "decision_mode",
                        "reviewer",
                    )
                }
                for r in rows
            ],
        },
    }


def adjudicated_answers_rows(filters: ExportFilters) -> Iterator[list[dict[str, Any]]]:
    """Adjudicated answers with a decided claim that matches the filters, each as all its decided
    claims' export rows (a record built from some of them could get the answer's label wrong).
    Answers still in review are left out: some of their claims wait for a decision."""
    answers = decided_claims(filters).values("answer_id")
    claims = decided_claims(ExportFilters()).filter(
        answer_id__in=answers, answer__review_status=Answer.ReviewStatus.ADJUDICATED)
    rows = (row for batch in _batches(claims, passage_text=True) for row in batch.rows())
    for _, group in groupby(rows, key=lambda row: row["answer_id"]):
        yield list(group)


def golden_records(filters: ExportFilters) -> Iterator[dict[str, Any]]:
    return map(golden_record, adjudicated_answers_rows(filters))


# --- RAGTruth-style records (docs/quality.md, its schema docs/ragtruth.schema.json) -------------

RAGTRUTH_SCHEMA = "claimdesk-ragtruth/1"
# A human label as RAGTruth's hallucination type: a conflict with the passages, or information
# they do not hold (partly supported: it says more than they do, a subtle addition).
RAGTRUTH_TYPES = {"CONTRADICTED": "Evident Conflict", "UNSUPPORTED": "Evident Baseless Info",
                  "PARTIALLY_SUPPORTED": "Subtle Baseless Info"}


def ragtruth_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One adjudicated answer as a RAGTruth-style record: the response, its human-labelled
    hallucination spans with their types, causes and evidence, and the response-level labels."""
    first = rows[0]
    flagged = [r for r in rows if r["human_label"] != "SUPPORTED"]
    labels = []
    for r in flagged:
        span = r["answer_span"]
        if not span or span[0] >= span[1]:
            continue  # a claim without a span counts at response level only
        labels.append({
            "start": span[0], "end": span[1], "text": first["answer"][span[0]:span[1]],
            "label_type": RAGTRUTH_TYPES[r["human_label"]], "claim_id": r["claim_id"],
            "human_label": r["human_label"], "judge_label": r["judge_label"],
            "causes": sorted({m["cause"] for m in r["human_evidence"] if m["cause"]}),
            "evidence": [{k: m[k] for k in ("passage_id", "span", "text", "stance")}
                         for m in r["human_evidence"] if m["passage_id"]],
        })
    return {
        "schema": RAGTRUTH_SCHEMA,
        "id": f"claimdesk-{first['answer_id']}",
        "source_id": str(first["answer_id"]),
        "task_type": "QA",
        "source_info": {
            "question": first["question"],
            "passages": [{"id": p["id"], "text": p["text"]} for p in first["passages"]],
        },
        "response": first["answer"],
        "labels": labels,
        "hallucinated": bool(flagged),
        "hallucination_types": sorted({RAGTRUTH_TYPES[r["human_label"]] for r in flagged}),
        "causes": sorted({m["cause"] for r in rows for m in r["human_evidence"] if m["cause"]}),
        "verdict": first["answer_human_verdict"],
    }


def ragtruth_records(filters: ExportFilters) -> Iterator[dict[str, Any]]:
    return map(ragtruth_record, adjudicated_answers_rows(filters))


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
        "reviews": orjson.dumps(row["reviews"]).decode(),
        "human_evidence": orjson.dumps(row["human_evidence"]).decode(),
        "prior_turns": orjson.dumps(row["prior_turns"]).decode(),
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
# At a million rows the per-row work is the export's cost, and one Python thread (the GIL) did all
# of it: ~16 us of CPU a row reading values and quote rows and encoding them, while Postgres used
# ~5. So each claim's own parts of its line (claim_id .. consensus_method) come made by Postgres in
# the claims query (CLAIM_JSONL, CLAIM_CSV below), and its list fields (quotes, reviews, human
# evidence) in one grouped query each a batch (_list_parts), on the other core; Python encodes
# each answer's part (question, answer text and, in JSONL, ~2 KB of passages on each of the
# answer's 5-15 claims) and each run's part once per batch, and joins the parts of each line.
# The reference encoders above stay the definition of the format: tests/test_exports_parity.py
# holds these to them byte for byte.

JUDGE = Claim.Origin.JUDGE.value
_CLAIM = f'"{Claim._meta.db_table}"'  # the claims table as decided_claims' SQL names it


def _sql_span(start: str, end: str) -> str:
    """[start,end] as orjson writes it, or null (a span's ends are null together)."""
    return (f"CASE WHEN {start} IS NULL THEN 'null' "
            f"ELSE concat('[', {start}, ',', coalesce({end}::text, 'null'), ']') END")


# decided_at as isoformat writes an aware UTC datetime: microseconds only when they are not zero.
_DECIDED_AT = (
    f"to_char({_CLAIM}.decided_at AT TIME ZONE 'UTC', "
    f"CASE WHEN date_trunc('second', {_CLAIM}.decided_at) = {_CLAIM}.decided_at "
    f"""THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US' END) || '+00:00'"""
)
# The table of the claim's decider as the claims query joins it (decided_by__username, aliased).
DECIDER = f'"{get_user_model()._meta.db_table}"'


def _sql_json_span(value: str) -> str:
    """A stored [start, end] (jsonb) as orjson writes it, or null."""
    return (f"CASE WHEN jsonb_typeof({value}) = 'array' "
            f"THEN concat('[', {value}->>0, ',', {value}->>1, ']') ELSE 'null' END")


# A quote's differing words as quote_differences writes them; most quotes have none.
_SQL_DIFFERENCES = (
    "CASE WHEN e.differences = '[]'::jsonb THEN '[]' ELSE "
    """(SELECT '[' || string_agg(concat('{"kind":', to_json(d.value->>'kind'), ',"span":', """
    f"""{_sql_json_span("d.value->'span'")}, ',"answer_span":',"""
    f""" {_sql_json_span("d.value->'answer_span'")}, """
    """'}'), ',' ORDER BY d.ordinality) || ']' FROM jsonb_array_elements(e.differences) WITH """
    """ORDINALITY AS d(value, ordinality)) END"""
)


# One quote's JSON as orjson writes it in _quotes' list. Postgres's to_json escapes a string as
# orjson does (quotes, backslashes, \\n \\r \\t \\b \\f, other control characters as \\u00XX,
# all non-ASCII including U+2028 left as UTF-8; a text column cannot hold NUL): the parity tests
# check it.
_QUOTE = (f"""concat('{{"passage_id":', to_json(e.passage_pid), ',"quote":', to_json(e.quote), """
          f"""',"span":', {_sql_span("e.start", 'e."end"')}, ',"match":', to_json(e.match), """
          f"""',"differences":', {_SQL_DIFFERENCES}, '}}')""")


def _quote_parts(claims: list[tuple], fmt: str) -> dict[int, str]:
    """Each claim's quotes as the part of its line after its explanation. A subquery of each
    claim's part (an index scan, an aggregate and its sort a claim) cost Postgres 11-16 us a row
    of its 31; one grouped query a batch costs about half."""
    return _list_parts(fmt, "quotes", _QUOTE, (
        "SELECT e.claim_id, string_agg({item}, ',' ORDER BY e.position) "
        f'FROM "{Evidence._meta.db_table}" e WHERE {{batch}} GROUP BY e.claim_id'), claims)


def _list_parts(fmt: str, key: str, item: str, query: str, claims: list[tuple]) -> dict[int, str]:
    """A list field of each claim's line (`,"KEY":[...]`, or the CSV cell after a comma), for the
    batch's claims (`claims`: each a tuple that opens with its id) that have any element, as
    orjson or csv write the reference's list: one query a batch. `query` selects each claim's id
    and its elements' JSON joined by commas (the SQL of one element written `{item}`), reading
    only the rows whose claim_id `{batch}` (a condition on one table) finds."""
    if fmt == "csv":  # JSON in a cell, quoted as csv quotes it: never a formula, no line break
        item = f"""replace({item}, '"', '""')"""
    opening, closing = (',"[', ']"') if fmt == "csv" else (f',"{key}":[', "]")
    with connection.cursor() as cursor:
        cursor.execute(query.format(item=item, batch="claim_id = ANY(%s::bigint[])"),
                       ["{" + ",".join(str(claim[0]) for claim in claims) + "}"])
        return {claim_id: opening + items + closing for claim_id, items in cursor.fetchall()}


def empty_list_part(fmt: str, key: str) -> str:
    return ",[]" if fmt == "csv" else f',"{key}":[]'


def _review_parts(claims: list[tuple], fmt: str) -> dict[int, str]:
    """Each claim's reviews as the part of its line after its own, as orjson or csv write _reviews'
    list. As a subquery of each claim's part (a DISTINCT ON sort and an anti join per claim,
    reviews or none) they cost Postgres 7-16 us a row of the 25-45 it spent, the export's bound.

    The rows are selectors.current_reviews' (the parity tests hold the two together), found among
    the batch's own reviews: an undo is on the claim it undoes. Asked of the whole table, "not
    undone" made Postgres hash every review once a batch."""
    review = ("""concat('{"reviewer":', to_json(u.username), ',"stage":', to_json(r.stage), """
              """',"label":', to_json(r.final_label), ',"decision":', to_json(r.decision), """
              """',"decision_mode":', to_json(r.decision_mode), ',"note":', to_json(r.note), """
              """',"reason":', to_json(r.reason), """
              """',"time_spent_ms":', coalesce(r.time_spent_ms::text, 'null'), '}')""")
    return _list_parts(fmt, "reviews", review, (
        f'WITH batch AS MATERIALIZED (SELECT * FROM "{Review._meta.db_table}" WHERE {{batch}}) '
        "SELECT r.claim_id, string_agg({item}, ',' ORDER BY r.id) FROM ("
        "SELECT DISTINCT ON (x.claim_id, x.reviewer_id, x.stage) x.* FROM batch x "
        f"WHERE x.decision <> '{Review.Decision.UNDO.value}' "
        "AND NOT EXISTS (SELECT 1 FROM batch y WHERE y.undoes_id = x.id) "
        "ORDER BY x.claim_id, x.reviewer_id, x.stage, x.id DESC) r "
        f'JOIN "{get_user_model()._meta.db_table}" u ON u.id = r.reviewer_id GROUP BY r.claim_id'),
        claims)


def _evidence_parts(claims: list[tuple], fmt: str) -> dict[int, str]:
    """Each claim's human evidence as the part of its line after its reviews, as orjson or csv
    write evidence_marks' list. substr counts characters as Python's slicing does (code points:
    the database is UTF-8)."""
    text = ("CASE WHEN m.start IS NULL THEN 'null' "
            """ELSE to_json(substr(p.text, m.start + 1, m."end" - m.start))::text END""")
    mark = (
        f"""concat('{{"reviewer":', to_json(u.username), ',"passage_id":', """
        f"""coalesce(to_json(p.pid)::text, 'null'), """
        f"""',"span":', {_sql_span("m.start", 'm."end"')}, ',"text":', {text}, """
        f"""',"stance":', coalesce(to_json(nullif(m.stance, ''))::text, 'null'), """
        f"""',"cause":', coalesce(to_json(nullif(m.cause, ''))::text, 'null'), '}}')"""
    )
    return _list_parts(fmt, "human_evidence", mark, (
        "SELECT m.claim_id, string_agg({item}, ',' ORDER BY m.id) "
        f'FROM (SELECT * FROM "{EvidenceMark._meta.db_table}" WHERE {{batch}}) m '
        f'JOIN "{get_user_model()._meta.db_table}" u ON u.id = m.reviewer_id '
        f'LEFT JOIN "{Passage._meta.db_table}" p ON p.id = m.passage_id GROUP BY m.claim_id'),
        claims)


# concat() builds a part in one call (a chain of || makes and copies a new string at every step).
# A claim's own parts of its line: before its quotes (_quote_parts) and after them.
CLAIM_JSONL = (
    f"""concat(',"claim_id":', to_json({_CLAIM}.cid), ',"claim_text":', to_json({_CLAIM}.text), """
    f"""',"answer_span":', {_sql_span(f"{_CLAIM}.answer_start", f"{_CLAIM}.answer_end")}, """
    f"""',"judge_label":', CASE WHEN {_CLAIM}.origin = '{JUDGE}' THEN """
    f"""to_json({_CLAIM}.label)::text ELSE 'null' END, """
    f"""',"category":', to_json({_CLAIM}.category), """
    f"""',"explanation":', to_json({_CLAIM}.explanation))""",
    f"""concat(',"human_label":', to_json({_CLAIM}.human_label), """
    f"""',"decision":', to_json({_CLAIM}.decision), ',"decision_mode":', """
    f"""to_json({_CLAIM}.decision_mode), """
    f"""',"origin":', to_json({_CLAIM}.origin), """
    f"""',"note":', to_json({_CLAIM}.note), """
    f"""',"reviewer":', coalesce(to_json({DECIDER}.username)::text, 'null'), """
    f"""',"decided_at":', coalesce(to_json({_DECIDED_AT})::text, 'null'), """
    f"""',"consensus_method":', to_json({_CLAIM}.consensus_method))""",
)


def _sql_any_of(characters: Iterable[str]) -> str:
    return ", ".join(f"chr({ord(character)})" for character in characters)


def _sql_csv_text(cell: str) -> str:
    """A text cell (a column) as csv (excel dialect, QUOTE_MINIMAL) writes neutralize(cell): with a
    leading apostrophe when it starts like a formula (FORMULA_STARTS; a text column cannot hold
    NUL), then quoted, its quotes doubled, when it holds a comma, a quote or a line break. Tested
    with strpos and left (a regular expression took 0.35 us a cell; strpos 0.03)."""
    formula = (
        f"left({cell}, 1) IN ({_sql_any_of(start for start in FORMULA_STARTS if start != chr(0))})"
    )
    quoted = " OR ".join(f"strpos({cell}, chr({ord(character)})) > 0" for character in ',"\r\n')
    neutralized = f"CASE WHEN {formula} THEN '''' || {cell} ELSE {cell} END"
    return (f"""CASE WHEN {quoted} THEN '"' || replace({neutralized}, '"', '""') || '"' """
            f"WHEN {formula} THEN '''' || {cell} ELSE {cell} END")


# The same two parts' cells, each part's joined by commas (the second's opening with one); no
# cell is null, which concat_ws would leave out.
CLAIM_CSV = tuple(
    "concat_ws(',', " + ", ".join(cells) + ")"
    for cells in (
        (
            _sql_csv_text(f"{_CLAIM}.cid"),
            _sql_csv_text(f"{_CLAIM}.text"),
            f"coalesce({_CLAIM}.answer_start::text, '')",
            (
                f"CASE WHEN {_CLAIM}.answer_start IS NULL THEN '' ELSE"
                f" coalesce({_CLAIM}.answer_end::text, '') END"
            ),
            (
                f"CASE WHEN {_CLAIM}.origin = '{JUDGE}' THEN {_sql_csv_text(f'{_CLAIM}.label')}"
                " ELSE '' END"
            ),
            _sql_csv_text(f"{_CLAIM}.category"),
            _sql_csv_text(f"{_CLAIM}.explanation"),
        ),
        (
            "''",
            *(
                _sql_csv_text(f"{_CLAIM}.{column}")
                for column in ("human_label", "decision", "decision_mode", "origin", "note")
            ),
            f"coalesce({_sql_csv_text(f'{DECIDER}.username')}, '')",
            # starts with the year's digits: never a formula, no comma
            f"coalesce({_DECIDED_AT}, '')",
            _sql_csv_text(f"{_CLAIM}.consensus_method"),
        ),
    )
)


def _stitched(batch: LineBatch, answer_parts: dict[int, tuple[str, str]], run_parts: dict[int, str],
              confidence: Callable[[float | None], str], fmt: str) -> Iterator[tuple[int, bytes]]:
    """The batch's lines, CHUNK at a time: each is its answer's head, the claim's own first part,
    its quotes, its own second part, its reviews, its human evidence, its confidence, its run's
    part and its answer's tail, joined as they are (each part brings the separators it needs)."""
    quotes, reviews, evidence = batch.quotes, batch.reviews, batch.evidence
    no_quotes, no_reviews, no_evidence = (
        empty_list_part(fmt, key) for key in ("quotes", "reviews", "human_evidence"))
    for first in range(0, len(batch.claims), CHUNK):
        parts = []
        claims = batch.claims[first:first + CHUNK]
        for claim_id, answer_id, run_id, own_head, own_tail, claim_confidence in claims:
            head, tail = answer_parts[answer_id]
            parts += (head, own_head, quotes.get(claim_id, no_quotes), own_tail,
                      reviews.get(claim_id, no_reviews), evidence.get(claim_id, no_evidence),
                      confidence(claim_confidence), run_parts[run_id], tail)
        yield len(claims), "".join(parts).encode()


def _jsonl_batch(batch: LineBatch) -> Iterator[tuple[int, bytes]]:
    """A line is one JSON object whose keys come in claim_row's order: the answer's head
    (answer_id .. passages), the claim's own fields, its run's fields, the answer's tail
    (policy_version); orjson writes compact JSON, so the parts join with commas."""
    answers = {}
    for answer_id, (
        external_id,
        question,
        text,
        policy_version,
        turns,
        verdict,
    ) in batch.answers.items():
        head = orjson.dumps(
            {
                "answer_id": answer_id,
                "external_id": external_id,
                "question": question,
                "answer": text,
                "passages": batch.passages[answer_id],
            }
        ).decode()
        tail = orjson.dumps({"policy_version": policy_version, "prior_turns": turns,
                             "answer_human_verdict": verdict or None}).decode()
        answers[answer_id] = (head[:-1], "," + tail[1:] + "\n")
    runs = {
        run_id: ","
        + orjson.dumps(
            {
                "judge_profile": profile,
                "judge_version": version,
                "judge_model": model,
                "judge_backend": backend,
            }
        ).decode()[1:-1]
        for run_id, (profile, version, model, backend) in batch.runs.items()
    }
    return _stitched(batch, answers, runs, _jsonl_confidence, "jsonl")


def _jsonl_confidence(value: float | None) -> str:
    return ',"judge_confidence":' + orjson.dumps(value).decode()


class _Lines(list):
    """A file for csv.writer that keeps each line it writes (writerow writes a line in one call)."""

    write = list.append


def _csv_batch(batch: LineBatch) -> Iterator[tuple[int, bytes]]:
    """A row is its cells, each quoted on its own, joined by commas: the answer's first five cells,
    the claim's own, its run's four and the answer's policy_version (a number: never neutralized).
    """
    lines = _Lines()
    writer = csv.writer(lines)

    def cells(values: Iterable[Any]) -> str:
        writer.writerow([neutralize(value) for value in values])
        return lines.pop()[:-2]  # less the line's end

    answers = {
        answer_id: (
            cells((answer_id, external_id, question, text, ";".join(batch.passages[answer_id])))
            + ",",
            ","
            + ("" if policy_version is None else str(policy_version))
            + ","
            + cells((orjson.dumps(turns).decode(), verdict or None))
            + "\r\n",
        )
        for answer_id, (
            external_id,
            question,
            text,
            policy_version,
            turns,
            verdict,
        ) in batch.answers.items()
    }
    runs = {run_id: "," + cells(run) for run_id, run in batch.runs.items()}
    # (csv writes a row of one empty cell as "", a null as nothing, as the reference's middle cells)
    return _stitched(
        batch, answers, runs, lambda value: "," + ("" if value is None else cells((value,))), "csv"
    )


def export_stream(fmt: str, filters: ExportFilters) -> Iterator[bytes]:
    """The export file as chunks: CSV's header line, then one chunk per batch of rows (golden: per
    record)."""
    with closing(export_chunks(fmt, filters)) as chunks:  # a client that leaves closes the snapshot
        for _, chunk in chunks:
            yield chunk


def export_chunks(fmt: str, filters: ExportFilters) -> Iterator[tuple[int, bytes]]:
    """The export file as (rows in the chunk, chunk), CHUNK rows a chunk: written and hashed a row
    at a time, the file's write and SHA-256 calls took a quarter of the exporter's time."""
    if fmt not in FORMATS:
        raise BadFilter(f"format: one of {', '.join(FORMATS)}")
    with read_snapshot() as opened:
        if fmt == "csv":
            yield 0, _csv_line(CSV_FIELDS)
        if fmt in RECORD_FORMATS:
            for record in (golden_records if fmt == "golden" else ragtruth_records)(filters):
                yield 1, _json_line(record)
        else:
            encode = _csv_batch if fmt == "csv" else _jsonl_batch
            with _read_ahead(decided_claims(filters), fmt, readers=2 if opened else 1) as batches:
                for batch in batches:
                    yield from encode(batch)


def write_export(out: BinaryIO, *, fmt: str, filters: ExportFilters) -> dict[str, Any]:
    """Write the export to `out` and return its manifest (row count and SHA-256 of the bytes
    written).

    The SHA-256 runs on a thread beside the encoding (hashlib lets go of the GIL on large
    buffers): at ~3.8 KB a JSONL row it is ~2.6 us of CPU a row, a sixth of the exporter's."""
    digest, rows = hashlib.sha256(), 0
    # closing(): a write that fails (a full disk) ends the snapshot and the readers now, not at GC.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="export-sha256") as hasher, \
            closing(export_chunks(fmt, filters)) as chunks:
        hashed = None
        for count, chunk in chunks:
            if hashed is not None:
                hashed.result()  # one chunk hashing at a time: memory stays flat
            hashed = hasher.submit(digest.update, chunk)
            out.write(chunk)
            rows += count
    return {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "filters": filters.as_dict(),
        "rows": rows,
        "sha256": digest.hexdigest(),
        "created_at": timezone.now().isoformat(),
        "snapshot": "repeatable read, read only",
    }


class NullSink:
    """Where the web manifest's bytes go: they are hashed and counted, not kept."""

    def write(self, chunk: bytes) -> int:
        return len(chunk)


def export_filename(fmt: str) -> str:
    return f"claimdesk-labels-{timezone.now():%Y%m%d-%H%M%S}.{EXTENSIONS[fmt]}"
