"""A claim's label, human label and decision are one of their known values, checked by the database.

Before this only forms and the API held them to it; a value written another way (a script, a
direct UPDATE) reached the exports, where a golden record has no way to read it.

Each constraint is added NOT VALID (a brief lock; new and changed rows are checked
from then on) and then validated, which reads the whole table under a lock that lets ingest and
reviews go on. A plain ADD CONSTRAINT would read it under an exclusive lock: 0.3-0.4 s a million
claims during which nothing could be judged or decided. The migration is therefore not atomic: where
a row holds another value, VALIDATE fails naming the constraint, the constraint stays NOT VALID (new
rows are checked), and once the row is mended running the migration again validates it.
"""

from django.db import migrations, models

LABELS = ("SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED")


class AddCheckWithoutBlockingWrites(migrations.AddConstraint):
    """AddConstraint of a CheckConstraint: NOT VALID, then VALIDATE."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        table = schema_editor.quote_name(model._meta.db_table)
        name = schema_editor.quote_name(self.constraint.name)
        with schema_editor.connection.cursor() as cursor:
            # Left by a run that stopped at VALIDATE (a row with another value): add it once.
            cursor.execute(
                "SELECT 1 FROM pg_constraint WHERE conname = %s AND conrelid = %s::regclass",
                [self.constraint.name, model._meta.db_table],
            )
            added = cursor.fetchone() is not None
        if not added:
            schema_editor.execute(f"{self.constraint.create_sql(model, schema_editor)} NOT VALID")
        schema_editor.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}")


class Migration(migrations.Migration):
    atomic = False  # each statement commits on its own, so VALIDATE holds no lock taken before it

    dependencies = [
        ("reviewapp", "0013_answer_review_status_index"),
    ]

    operations = [
        AddCheckWithoutBlockingWrites(
            model_name="claim",
            constraint=models.CheckConstraint(
                condition=models.Q(label__in=LABELS), name="claim_label_known"
            ),
        ),
        AddCheckWithoutBlockingWrites(
            model_name="claim",
            constraint=models.CheckConstraint(
                condition=models.Q(human_label="") | models.Q(human_label__in=LABELS),
                name="claim_human_label_known",
            ),
        ),
        AddCheckWithoutBlockingWrites(
            model_name="claim",
            constraint=models.CheckConstraint(
                condition=models.Q(decision="")
                | models.Q(decision__in=("confirm", "overturn", "add")),
                name="claim_decision_known",
            ),
        ),
    ]
