"""An index on Answer.review_status for the queue's counters, built without blocking writes.

On PostgreSQL the index is built CONCURRENTLY (outside a transaction, so this migration is not
atomic): ingest and reviews go on while it builds, however big the answer table is. SQLite (the
demo) builds it the plain way.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(AddIndexConcurrently):
    """AddIndexConcurrently where the database can, AddIndex elsewhere."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reviewapp", "0012_answer_search_document"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="answer",
            index=models.Index(fields=["review_status"], name="answer_review_status"),
        ),
    ]
