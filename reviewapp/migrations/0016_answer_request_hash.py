"""An answer keeps the SHA-256 of the request it was posted with (services.ingest.request_hash).

A repeated external_id with the same request is the client's retry (200, the stored answer); with a
different one it is a new answer under an old id (409). Rows stored before have NULL: not known, so
a repeat of their external_id is answered as before. A nullable column without a default: adding it
rewrites nothing and holds its lock only for a moment.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0015_scheduler_heartbeat'),
    ]

    operations = [
        migrations.AddField(
            model_name='answer',
            name='request_hash',
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
    ]
