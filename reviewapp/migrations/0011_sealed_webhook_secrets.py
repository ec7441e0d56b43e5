"""Webhook signing secrets sealed at rest (reviewapp/sealed.py): the columns become text and the
secrets already stored in clear are sealed (and opened again on the way back)."""

from django.db import migrations

import reviewapp.sealed


def _rewrite(convert):
    def run(apps, schema_editor):
        # Raw SQL: the historical model's field would seal or open on its own.
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT id, secret, previous_secret FROM reviewapp_webhookendpoint")
            for pk, secret, previous in cursor.fetchall():
                cursor.execute(
                    "UPDATE reviewapp_webhookendpoint SET secret = %s, previous_secret = %s WHERE"
                    " id = %s",
                    [convert(secret), convert(previous), pk],
                )
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0010_faults'),
    ]

    operations = [
        migrations.AlterField(
            model_name='webhookendpoint',
            name='previous_secret',
            field=reviewapp.sealed.SealedCharField(blank=True),
        ),
        migrations.AlterField(
            model_name='webhookendpoint',
            name='secret',
            field=reviewapp.sealed.SealedCharField(),
        ),
        migrations.RunPython(
            _rewrite(reviewapp.sealed.sealed_form), _rewrite(reviewapp.sealed.unseal)
        ),
    ]
