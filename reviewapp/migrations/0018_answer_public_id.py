"""Answers get a random public id (UUID4), the one clients see in the API, its URLs and webhooks,
so that ids tell no client how many answers others post (the primary key is sequential).

Added nullable, filled for the rows already stored, then made unique and required.
"""

import uuid

from django.db import migrations, models


def fill_public_ids(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "UPDATE reviewapp_answer SET public_id = gen_random_uuid() WHERE public_id IS NULL"
        )
        return
    Answer = apps.get_model("reviewapp", "Answer")
    for pk in Answer.objects.filter(public_id__isnull=True).values_list("pk", flat=True).iterator():
        Answer.objects.filter(pk=pk).update(public_id=uuid.uuid4())


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0017_decision_mode'),
    ]

    operations = [
        migrations.AddField(
            model_name='answer',
            name='public_id',
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='answer',
            name='public_id',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
