"""History is append-only in the database (migration 0009): AuditEvent, Review and Policy rows
cannot be updated, deleted or truncated, whichever way the statement is sent."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from reviewapp.models import Answer, AuditEvent, Policy, Review
from reviewapp.review import service as review_service
from reviewapp.audit import audit_record
from tests import factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided():
    """An answer whose flagged claim a reviewer confirmed: one Review row, AuditEvent rows."""
    rita = make.user("rita", "reviewer")
    answer = make.in_review()
    claim = make.flagged(answer)
    review_service.lease_take(user=rita, answer=answer)
    review_service.claim_decide(user=rita, claim=claim, decision="confirm", label=None, note="ok",
                                expected_version=claim.version)
    make.next_policy(note="no answer uses it, so no PROTECT stops a delete")
    return answer


def _refused(statement, *, op: str):
    """Run statement (a callable) in a savepoint; it must be refused by the trigger, naming the
    operation."""
    with pytest.raises(DatabaseError, match=f"append-only: {op} refused"):
        with transaction.atomic():
            statement()


@pytest.mark.parametrize("model", [AuditEvent, Review, Policy])
def test_querysets_cannot_update_or_delete_history(decided, model):
    assert model.objects.exists()
    _refused(lambda: model.objects.update(note="rewritten"), op="UPDATE")
    latest = model.objects.order_by("-pk")[:1].get()
    _refused(lambda: model.objects.filter(pk=latest.pk).delete(), op="DELETE")
    assert not model.objects.filter(note="rewritten").exists()


@pytest.mark.parametrize("table", ["reviewapp_auditevent", "reviewapp_review", "reviewapp_policy"])
def test_raw_sql_cannot_update_delete_or_truncate_history(decided, table):
    def run(sql):
        with connection.cursor() as cursor:
            cursor.execute(sql)

    before = _count(table)
    # the test's own inserts leave deferred FK checks, which TRUNCATE refuses
    run("SET CONSTRAINTS ALL IMMEDIATE")
    _refused(lambda: run(f"UPDATE {table} SET note = 'rewritten'"), op="UPDATE")
    _refused(lambda: run(f"DELETE FROM {table}"), op="DELETE")
    _refused(lambda: run(f"TRUNCATE {table} CASCADE"), op="TRUNCATE")
    assert _count(table) == before > 0


def _count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return cursor.fetchone()[0]


def test_truncate_is_allowed_only_when_the_transaction_says_so_on_purpose(decided):
    with transaction.atomic():
        sid = transaction.savepoint()
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET LOCAL claimdesk.allow_truncate = 'on'")
            cursor.execute("TRUNCATE reviewapp_auditevent")
        assert not AuditEvent.objects.exists()
        transaction.savepoint_rollback(sid)
    assert AuditEvent.objects.exists()


def test_new_rows_are_still_written(decided):
    rita = Review.objects.get().reviewer
    count = AuditEvent.objects.count()
    audit_record(actor=rita, actor_label="rita", action="test.append", obj=decided)
    assert AuditEvent.objects.count() == count + 1


def test_deleting_an_answer_with_reviews_is_refused_but_one_without_is_not(decided):
    _refused(lambda: Answer.objects.filter(pk=decided.pk).delete(), op="DELETE")
    assert Answer.objects.filter(pk=decided.pk).exists()
    fresh = make.in_review()
    Answer.objects.filter(pk=fresh.pk).delete()  # no history hangs off it: nothing to protect
    assert not Answer.objects.filter(pk=fresh.pk).exists()
