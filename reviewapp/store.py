"""The hot path's SQL: the statements run for every answer, written by hand for their round trips.

The ingest's answer and passages, the worker's hold (or take-over) of an answer, the start of a
run and the write of its result. Each INSERT names its columns from the model (`_meta`), and what
it leaves out must be filled by the table itself: a `db_default`, or NULL where the model's own
default is NULL. So a field added to one of these models without a `db_default` stops the process
at import with its name (`insert_fields`), rather than be stored as NULL (or refused) by a raw
INSERT while the ORM stores its default. The services decide what to write; this module only says
it to Postgres.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

import orjson
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, models
from django.db.models import Q
from django.db.models.fields import AutoFieldMixin

from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage


def filled_by_table(field: models.Field) -> bool:
    """The table gives the field the value the ORM would: its identity, a db_default, or NULL
    where the field's own default is NULL."""
    return (
        isinstance(field, AutoFieldMixin)
        or field.has_db_default()
        or (field.null and not field.has_default())
    )


def insert_fields(model: type[models.Model], written: Iterable[str]) -> list[models.Field]:
    """The concrete fields of `model` that an INSERT writing `written` (attnames: `client_id`, not
    `client`) names, in the model's order. Raises ImproperlyConfigured for a name the model does
    not have, or for a field left out that the table cannot fill (see filled_by_table)."""
    written = set(written)
    fields, gaps = [], []
    for field in model._meta.concrete_fields:
        if field.attname in written:
            fields.append(field)
            written.discard(field.attname)
        elif not filled_by_table(field):
            gaps.append(field.name)
    if written or gaps:
        raise ImproperlyConfigured(
            f"raw INSERT into {model._meta.db_table}: "
            + "; ".join(
                filter(
                    None,
                    [
                        f"unknown fields {sorted(written)}" if written else "",
                        (
                            f"fields {gaps} get no value and have no db_default (give them one)"
                            if gaps
                            else ""
                        ),
                    ],
                )
            )
        )
    return fields


def _name(field: models.Field) -> str:
    return connection.ops.quote_name(field.column)


def _columns(fields: Sequence[models.Field]) -> str:
    return ", ".join(_name(field) for field in fields)


def condition_sql(model: type[models.Model], condition: Q, params: int) -> str:
    """`condition` (a Q over `model`) as SQL for a hand-written statement on its table, so a rule
    the ORM states is not written again here; its values become `params` placeholders, which
    the statement fills (the values given to the Q only stand in for them)."""
    query = model.objects.filter(condition).query
    sql, values = query.get_compiler(connection=connection).compile(query.where)
    if len(values) != params:
        raise ImproperlyConfigured(
            f"{condition} takes {len(values)} parameters, not {params}: {sql}"
        )
    return sql


def _record_type(field: models.Field) -> str:
    """The column's type without a length: a value too long is refused by the INSERT, not cut."""
    return field.db_type(connection).partition("(")[0]


def _recordset(fields: Sequence[models.Field], *extra: str) -> str:
    """The column definitions of json_to_recordset(...) AS x(...) for these fields."""
    return ", ".join([*(f"{_name(field)} {_record_type(field)}" for field in fields), *extra])


def _placeholder(field: models.Field) -> str:
    return "%s::jsonb" if isinstance(field, models.JSONField) else "%s"


def _param(field: models.Field, instance: models.Model):
    value = getattr(instance, field.attname)
    return json.dumps(value) if isinstance(field, models.JSONField) else value


# --- ingest: the answer and its passages in one statement -----------------------------------------

ANSWER_WRITTEN = (
    "client_id",
    "external_id",
    "question",
    "answer",
    "prior_turns",
    "metadata",
    "requested_profile",
    "request_hash",
    "session_id",
    "created_at",
    "updated_at",
)
PASSAGE_WRITTEN = (
    "answer_id",
    "pid",
    "position",
    "text",
    "tag",
    "agency",
    "title",
    "section",
    "source_url",
    "fetched_at",
    "score",
    "metadata",
    "kind",
    "tool_name",
    "call_id",
    "tool_arguments",
)
_ANSWER_FIELDS = insert_fields(Answer, ANSWER_WRITTEN)
_PASSAGE_FIELDS = insert_fields(Passage, PASSAGE_WRITTEN)
_PASSAGE_RECORD = [field for field in _PASSAGE_FIELDS if field.attname != "answer_id"]

# The passages take the answer's id from the row just inserted; they travel as one JSON document:
# psycopg spends about 1 ms of CPU quoting ten 1,500-character strings into a text[] array, and
# ~0.05 ms sending the same text as a single JSON parameter.
_INGEST = f"""
    WITH answer AS (
        INSERT INTO {Answer._meta.db_table} ({_columns(_ANSWER_FIELDS)})
        VALUES ({", ".join(_placeholder(field) for field in _ANSWER_FIELDS)})
        RETURNING id, public_id
    ), passages AS (
        INSERT INTO {Passage._meta.db_table} ({_columns(_PASSAGE_FIELDS)})
        SELECT answer.id, {", ".join(f"p.{_name(field)}" for field in _PASSAGE_RECORD)}
        FROM answer, json_to_recordset(%s::json) AS p({_recordset(_PASSAGE_RECORD)})
    )
    SELECT id, public_id FROM answer
"""


def answer_insert(answer: Answer, passages: list[dict]) -> None:
    """Insert the answer (its ANSWER_WRITTEN fields) and its passages (dicts of PASSAGE_WRITTEN
    but answer_id); sets the answer's id and public_id from the row."""
    params = [_param(field, answer) for field in _ANSWER_FIELDS]
    params.append(orjson.dumps(passages).decode())
    with connection.cursor() as cursor:
        cursor.execute(_INGEST, params)
        answer.id, answer.public_id = cursor.fetchone()
    answer._state.adding, answer._state.db = False, connection.alias  # as if loaded: the row exists


# --- the worker's hold on an answer
# -----------------------------------------------------------------

PASSAGE_COLUMNS = (
    "id",
    "pid",
    "text",
    "tag",
    "agency",
    "title",
    "section",
    "source_url",
    "fetched_at",
)


def passage_rows(answer_id: int) -> list[tuple]:
    """The answer's passages in order, as plain rows (PASSAGE_COLUMNS): the judge reads them once
    and the hot path builds no model instances for them."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(PASSAGE_COLUMNS)} FROM reviewapp_passage WHERE answer_id = %s ORDER"
            " BY position",
            [answer_id],
        )
        return cursor.fetchall()


# What the judge needs of the answer comes back from the hold itself (no second look-up), with
# the newest policy's identity, so the cached policy is re-read only when an admin saved a new one.
_HELD = f"""
    RETURNING id, client_id, public_id, external_id, created_at, question, answer, prior_turns,
        requested_profile,
        session_id, lost_count, (SELECT id::text || '/' || xmin::text FROM reviewapp_policy ORDER
            BY version DESC LIMIT 1) AS policy_key,
        (SELECT json_agg(json_build_array({', '.join(f'p.{c}' for c in PASSAGE_COLUMNS)}) ORDER BY
            p.position)::text
         FROM reviewapp_passage p WHERE p.answer_id = reviewapp_answer.id) AS passages
"""
_HOLD_FRESH = """
    UPDATE reviewapp_answer SET status = 'judging', judging_token = %s, judging_until = %s,
        updated_at = %s
    WHERE id = %s AND status = 'queued'
""" + _HELD
# A dead holder's hold: it ran out (Answer.live_hold, its one definition; its one parameter is
# now), or it carries this very token.
_HOLD_LAPSED = condition_sql(Answer, ~Answer.live_hold(datetime.now(timezone.utc)), params=1)
_HOLD_TAKE_OVER = f"""
    UPDATE reviewapp_answer SET status = 'judging', judging_token = %s, judging_until = %s,
        updated_at = %s,
        lost_count = lost_count + 1
    WHERE id = %s AND status = 'judging' AND ({_HOLD_LAPSED} OR judging_token = %s)
""" + _HELD


class Held(NamedTuple):
    taken_over: bool
    answer: (
        Answer  # the fields the judge reads, those of its API state that judging leaves, the hold
    )
    policy_key: str | None  # the newest policy's id/xmin (None: there is none)
    passages: list[list]  # as passage_rows() gives them
    run: JudgeRun | None  # the run started with the hold (answer_hold's `run`), if it was


def answer_hold(answer_id: int, token, now: datetime, expires: datetime, *,
                 run: tuple[str, JudgeRun] | None = None) -> Held | None:
    """Hold the answer for `token` until `expires` if it is queued, else take it over if it is
    being judged by a dead holder (its hold expired, or it carries this very token); else None.
    Two conditional UPDATEs rather than one, so the common case (queued) is the first.

    `run`: (policy key, a run not yet inserted) to start in the same statement as a queued
    answer's claim, when the answer names no profile of its own and that policy is still the
    newest (its answer and started_at are the hold's); Held.run says whether it was."""
    with connection.cursor() as cursor:
        if run is None:
            cursor.execute(_HOLD_FRESH, [token, expires, now, answer_id])
        else:
            key, started = run
            started.started_at = now
            cursor.execute(
                _CLAIM_STARTING,
                [
                    token,
                    expires,
                    now,
                    answer_id,
                    *[_param(field, started) for field in _RUN_GIVEN],
                    key,
                ],
            )
        row = cursor.fetchone()
        taken_over = False
        if row is None:
            cursor.execute(_HOLD_TAKE_OVER, [token, expires, now, answer_id, now, token])
            row = cursor.fetchone()
            taken_over = True
    if row is None:
        return None
    (
        _,
        client_id,
        public_id,
        external_id,
        created_at,
        question,
        text,
        prior_turns,
        requested_profile,
        session_id,
        lost_count,
        policy_key,
        passages,
        *run_id,
    ) = row
    answer = Answer(
        id=answer_id,
        client_id=client_id,
        public_id=public_id,
        external_id=external_id,
        created_at=created_at,
        question=question,
        answer=text,
        # Django reads jsonb as text and leaves decoding to the field; a raw cursor does the same.
        prior_turns=(
            json.loads(prior_turns) if isinstance(prior_turns, (str, bytes)) else prior_turns
        ),
        requested_profile=requested_profile,
        session_id=session_id,
        lost_count=lost_count,
        status=Answer.Status.JUDGING,
        judging_token=token,
        judging_until=expires,
        updated_at=now,
    )
    answer._state.adding = False  # an existing row, as if loaded
    started_run = None
    if run_id and run_id[0] is not None:
        started_run = run[1]
        started_run.pk, started_run.answer = run_id[0], answer
        started_run._state.adding, started_run._state.db = False, connection.alias
    return Held(
        taken_over, answer, policy_key, orjson.loads(passages) if passages else [], started_run
    )


# --- a run: its start, and its result with claims and evidence
# --------------------------------------

RUN_WRITTEN = (
    "answer_id",
    "job_id",
    "example_set_id",
    "profile",
    "prompt_version",
    "backend",
    "model",
    "config_key",
    "started_at",
)
_RUN_FIELDS = insert_fields(JudgeRun, RUN_WRITTEN)
_RUN_STARTED = f"""
    INSERT INTO {JudgeRun._meta.db_table} ({_columns(_RUN_FIELDS)})
    VALUES ({", ".join(_placeholder(field) for field in _RUN_FIELDS)})
    RETURNING id
"""


# the held row gives answer_id
_RUN_GIVEN = [field for field in _RUN_FIELDS if field.attname != "answer_id"]
_CLAIM_STARTING = f"""
    WITH held AS ({_HOLD_FRESH}), run AS (
        INSERT INTO {JudgeRun._meta.db_table} ({_columns(_RUN_FIELDS)})
        SELECT {", ".join("held.id" if field.attname == "answer_id" else _placeholder(field)
                          for field in _RUN_FIELDS)}
        FROM held
        WHERE held.requested_profile = '' AND held.policy_key = %s
        RETURNING id
    )
    SELECT held.*, (SELECT id FROM run) FROM held
"""


def run_insert(run: JudgeRun) -> None:
    """Insert a running run (its RUN_WRITTEN fields; the rest are the table's defaults); sets its
    id."""
    with connection.cursor() as cursor:
        cursor.execute(_RUN_STARTED, [_param(field, run) for field in _RUN_FIELDS])
        (run.pk,) = cursor.fetchone()
    run._state.adding, run._state.db = False, connection.alias


CLAIM_WRITTEN = (
    "run_id",
    "answer_id",
    "position",
    "cid",
    "text",
    "answer_start",
    "answer_end",
    "label",
    "category",
    "explanation",
    "confidence",
)
EVIDENCE_WRITTEN = (
    "claim_id",
    "passage_id",
    "passage_pid",
    "position",
    "quote",
    "start",
    "end",
    "match",
    "differences",
)
_CLAIM_FIELDS = insert_fields(Claim, CLAIM_WRITTEN)
_CLAIM_RECORD = [field for field in _CLAIM_FIELDS if field.attname not in ("run_id", "answer_id")]
_EVIDENCE_FIELDS = insert_fields(Evidence, EVIDENCE_WRITTEN)
_EVIDENCE_RECORD = [
    field for field in _EVIDENCE_FIELDS if field.attname not in ("claim_id", "passage_id")
]


def _select_list(fields: Sequence[models.Field], alias: str, given: dict[str, str]) -> str:
    return ", ".join(given.get(field.attname, f"{alias}.{_name(field)}") for field in fields)


# The current-run switch and the run's result in one statement: `superseded` must clear the
# previous current run before `run` sets this one (the unique index on current runs is checked row
# by row), so `run` waits on a count of `superseded`'s rows, which runs it to completion first.
_SUPERSEDED = """
    UPDATE reviewapp_judgerun SET is_current = false
    WHERE answer_id = %s AND config_key = %s AND is_current AND id <> %s AND {gate}
    RETURNING id
"""
_RUN_SUCCEEDED = """
    UPDATE reviewapp_judgerun SET status = 'succeeded', is_current = true, finished_at = %s,
        latency_ms = %s,
        attempts = %s, prompt_tokens = %s, completion_tokens = %s, raw_output = %s, verdict = %s,
        grounding_score = %s, findings = %s::jsonb
    WHERE id = %s AND (SELECT count(*) FROM superseded) >= 0 AND {gate}
"""
# Claims and their evidence: the evidence finds its hold by position among the rows just
# inserted, and its passage by the row the judging service names (`passage_row`: a session's
# earlier turn's passage is not the answer's), else by pid among the answer's passages. Rows travel
# as JSON documents, not arrays (see _INGEST).
_CLAIMS = f"""
    INSERT INTO {Claim._meta.db_table} ({_columns(_CLAIM_FIELDS)})
    SELECT {_select_list(_CLAIM_FIELDS, "c", {"run_id": "%s", "answer_id": "%s"})}
    FROM json_to_recordset(%s::json) AS c({_recordset(_CLAIM_RECORD)})
    WHERE {{gate}}
    RETURNING id, position
"""
_EVIDENCE = f"""
    INSERT INTO {Evidence._meta.db_table} ({_columns(_EVIDENCE_FIELDS)})
    SELECT {_select_list(_EVIDENCE_FIELDS, "e",
                         {"claim_id": "claims.id", "passage_id": "passage.id"})}
    FROM json_to_recordset(%s::json) AS
        e({_recordset(_EVIDENCE_RECORD, "claim_position integer", "passage_row bigint")})
    JOIN claims ON claims.position = e.claim_position
    LEFT JOIN reviewapp_passage passage ON passage.id = COALESCE(
        e.passage_row, (SELECT p.id FROM reviewapp_passage p WHERE p.answer_id = %s AND p.pid =
            e.passage_pid))
"""


# The answer judged by the run it shows, if it is still held by the token.
_ANSWER_JUDGED = """
    UPDATE reviewapp_answer SET status = 'judged', verdict = %s, grounding_score = %s, judged_by_id
        = %s,
        judged_at = %s, judging_token = NULL, judging_until = NULL, review_status = %s,
        routing_reason = %s, priority = %s, policy_id = %s, reviews_required = %s, reviews_blind =
            %s,
        audit_probability = %s, updated_at = %s
    WHERE id = %s AND judging_token = %s AND status = 'judging' RETURNING id
"""


class Judged(NamedTuple):
    """What the answer becomes with the run it shows (the run's own verdict, score and id)."""
    token: object  # the hold's
    review_status: str
    routing_reason: str
    priority: int
    policy_id: int
    reviews_required: int
    reviews_blind: bool
    at: datetime
    audit_probability: float | None = None


def result_write(
    run: JudgeRun,
    claim_rows: list[dict],
    evidence_rows: list[dict],
    *,
    judged: Judged | None = None,
):
    """Store a succeeded run's result (set on `run`), its claims (dicts of CLAIM_WRITTEN but the
    run and answer) and their evidence (dicts of EVIDENCE_WRITTEN but claim_id and passage_id, plus
    claim_position); the run becomes the current one of its configuration. One statement, so atomic
    on its own. With `judged`, the answer is judged by the run first, if it is still held by
    its token, and the rest is written only then: returns the answer's id (None when it was no
    longer ours, and nothing was written), or True without `judged`."""
    if judged is None:
        judged_cte, then_params, gate, returned = "", [], "true", "true"
    else:
        judged_cte = f"judged AS ({_ANSWER_JUDGED}),"
        then_params = [
            run.verdict,
            run.grounding_score,
            run.pk,
            judged.at,
            judged.review_status,
            judged.routing_reason,
            judged.priority,
            judged.policy_id,
            judged.reviews_required,
            judged.reviews_blind,
            judged.audit_probability,
            judged.at,
            run.answer_id,
            judged.token,
        ]
        gate, returned = "EXISTS (SELECT 1 FROM judged)", "(SELECT id FROM judged)"
    answer_id = run.answer_id
    params = [
        *then_params,
        answer_id,
        run.config_key,
        run.pk,
        run.finished_at,
        run.latency_ms,
        run.attempts,
        run.prompt_tokens,
        run.completion_tokens,
        run.raw_output,
        run.verdict,
        run.grounding_score,
        json.dumps(run.findings),
        run.pk,
        run.pk,
        answer_id,
        orjson.dumps(claim_rows).decode(),
        orjson.dumps(evidence_rows).decode(),
        answer_id,
    ]
    sql = (
        f"WITH {judged_cte} superseded AS ({_SUPERSEDED.format(gate=gate)}), run AS"
        f" ({_RUN_SUCCEEDED.format(gate=gate)}), claims AS ({_CLAIMS.format(gate=gate)}), evidence"
        f" AS ({_EVIDENCE}) SELECT {returned}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        (row,) = cursor.fetchone()
    return row


# Every raw INSERT of the hot path, for the test that adds up what each one covers.
RAW_INSERTS = {
    "ingest answer": (Answer, ANSWER_WRITTEN),
    "ingest passages": (Passage, PASSAGE_WRITTEN),
    "run start": (JudgeRun, RUN_WRITTEN),
    "result claims": (Claim, CLAIM_WRITTEN),
    "result evidence": (Evidence, EVIDENCE_WRITTEN),
}
