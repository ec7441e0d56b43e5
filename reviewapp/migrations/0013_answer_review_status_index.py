"""An index on Answer.review_status for the queue's counters, built without blocking writes.

The index is built CONCURRENTLY (outside a transaction, so this migration is not atomic): ingest
and reviews go on while it builds, however big the answer table is.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reviewapp", "0012_answer_search_document"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="answer",
            index=models.Index(fields=["review_status"], name="answer_review_status"),
        ),
    ]
