"""The hot path's raw INSERTs (reviewapp.store) against the models: every field is written or
filled by the table, and what the table fills is what the ORM would have stored."""

import uuid

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models.fields import AutoFieldMixin

from reviewapp import store
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage
from reviewapp.judging.service import answer_judge
from tests import factories as make


@pytest.mark.parametrize("statement", sorted(store.RAW_INSERTS))
def test_every_field_of_each_raw_insert_is_written_or_has_a_database_default(statement):
    model, written = store.RAW_INSERTS[statement]
    covered = {"written": [], "identity": [], "db_default": [], "null": []}
    for field in model._meta.concrete_fields:
        if field.attname in written:
            covered["written"].append(field.name)
        elif isinstance(field, AutoFieldMixin):
            covered["identity"].append(field.name)
        elif field.has_db_default():
            covered["db_default"].append(field.name)
        elif field.null and not field.has_default():
            covered["null"].append(field.name)
    uncovered = {f.name for f in model._meta.concrete_fields} - {
        name for names in covered.values() for name in names
    }
    assert not uncovered, f"{statement}: {sorted(uncovered)} get no value"
    assert sum(map(len, covered.values())) == len(model._meta.concrete_fields)
    assert covered["written"], statement


def test_a_field_left_out_without_a_database_default_is_refused_by_name():
    # Passage.pid has no default of any kind: an INSERT that does not write it cannot be built.
    with pytest.raises(ImproperlyConfigured, match=r"\['pid'\].*no db_default"):
        store.insert_fields(Passage, set(store.PASSAGE_WRITTEN) - {"pid"})


def test_a_field_that_does_not_exist_is_refused():
    with pytest.raises(ImproperlyConfigured, match="unknown fields"):
        store.insert_fields(JudgeRun, [*store.RUN_WRITTEN, "lantency_ms"])


def test_a_nullable_field_with_a_default_must_have_a_database_default_when_left_out():
    # Answer.metadata would be [] in the ORM and must not become NULL: it has a db_default.
    assert Answer._meta.get_field("metadata").has_db_default()
    # nullable, no default: NULL is the ORM's value too
    field = Answer._meta.get_field("external_id")
    assert store.filled_by_table(field)


def _left_out(model, written):
    return [f for f in model._meta.concrete_fields
            if f.attname not in written and not isinstance(f, AutoFieldMixin)]


def _orm_default(field):
    """What Model() gives the field, its db_default aside: its default, else NULL or ''."""
    if field.has_default():
        return field.get_default()
    return None if field.null or not field.empty_strings_allowed else ""


@pytest.mark.django_db
def test_what_the_table_fills_is_what_the_orm_would_store():
    answer = make.ingested(external_id="conv-1")
    stored = Answer.objects.get(pk=answer.pk)
    assert isinstance(stored.public_id, uuid.UUID) and stored.public_id == answer.public_id
    for field in _left_out(Answer, store.ANSWER_WRITTEN):
        if field.name != "public_id":  # random either way
            assert getattr(stored, field.attname) == _orm_default(field), field.name
    # The run and claims as the worker writes them, before a reviewer touches them.
    run = answer_judge(answer_id=answer.pk)
    claim = Claim.objects.filter(run=run).first()
    for field in _left_out(Claim, store.CLAIM_WRITTEN):
        assert getattr(claim, field.attname) == _orm_default(field), field.name
    started = JudgeRun(
        answer=stored, profile="p", prompt_version="v", backend="b", model="m", config_key="k"
    )
    started.started_at = stored.created_at
    store.run_insert(started)
    started = JudgeRun.objects.get(pk=started.pk)
    for field in _left_out(JudgeRun, store.RUN_WRITTEN):
        assert getattr(started, field.attname) == _orm_default(field), field.name
    assert Evidence.objects.filter(claim__run=run).exists()


@pytest.mark.django_db
def test_a_passage_copied_without_metadata_gets_the_orms_default():
    # bench/scale_data.py leaves metadata and score to the table.
    answer = make.ingested(external_id="conv-1")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO reviewapp_passage (answer_id, pid, position, text, tag, agency, title,"
            " section, source_url, fetched_at) VALUES (%s, 'X9', 99, 't', '', '', '', '', '', '')",
            [answer.pk],
        )
    passage = Passage.objects.get(answer=answer, pid="X9")
    assert (passage.metadata, passage.score) == ({}, None)
