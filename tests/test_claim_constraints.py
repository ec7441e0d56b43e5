"""The database holds a claim's label, human label and decision to their known values (migration
0014): exports and measurements read them as such, however a row was written."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from reviewapp.models import Claim
from tests import factories as make


@pytest.mark.django_db
@pytest.mark.parametrize("column, value", [
    ("label", "TRUE"), ("label", ""), ("human_label", "-SUPPORTED"), ("human_label", "supported"),
    ("decision", "maybe"), ("decision_mode", "glanced"),
])
def test_a_value_that_is_not_a_known_one_is_refused(column, value):
    claim = make.claim(
        make.answer(), "UNSUPPORTED", "SUPPORTED", reviewer=make.user("rita", "reviewer")
    )
    with pytest.raises(IntegrityError, match="claim_.*_known"), transaction.atomic():
        Claim.objects.filter(pk=claim.pk).update(**{column: value})
    Claim.objects.filter(pk=claim.pk).update(human_label="", decision="")  # undecided: both empty
    assert Claim.objects.get(pk=claim.pk).label == "UNSUPPORTED"


@pytest.mark.django_db(transaction=True)
def test_migration_0014_names_a_row_it_cannot_accept_and_validates_once_it_is_mended():
    claim = make.claim(
        make.answer(), "UNSUPPORTED", "SUPPORTED", reviewer=make.user("rita", "reviewer")
    )
    call_command("migrate", "reviewapp", "0013", verbosity=0)
    try:
        Claim.objects.filter(pk=claim.pk).update(human_label="maybe")  # written with no check
        with pytest.raises(IntegrityError, match="claim_human_label_known"):
            call_command("migrate", "reviewapp", "0014", verbosity=0)
        Claim.objects.filter(pk=claim.pk).update(human_label="SUPPORTED")
    finally:
        call_command("migrate", "reviewapp", verbosity=0)  # the run that stopped is taken up again
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, convalidated FROM pg_constraint WHERE conname LIKE"
            " 'claim\\_%%\\_known' ORDER BY conname"
        )
        assert cursor.fetchall() == [
            ("claim_consensus_method_known", True),
            ("claim_decision_known", True),
            ("claim_decision_mode_known", True),
            ("claim_human_label_known", True),
            ("claim_label_known", True),
        ]
