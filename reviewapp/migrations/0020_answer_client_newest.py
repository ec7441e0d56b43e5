"""GET /api/v1/answers reads a client's answers newest first in keyset pages: an index in that
order. Built concurrently, so posting answers goes on while it builds on a large table."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('reviewapp', '0019_webhook_attempt_errors_without_bodies'),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='answer',
            index=models.Index(
                fields=['client', '-created_at', '-public_id'], name='answer_client_newest'
            ),
        ),
    ]
