"""Passages carry what retrievers emit: a score, a metadata object, and ids up to 100 characters
(the evidence and worked-example copies of a passage id widen with them). Widening a varchar and
adding a nullable column or one with a constant default rewrite no table in Postgres."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0020_answer_client_newest'),
    ]

    operations = [
        migrations.AlterField(
            model_name='passage',
            name='pid',
            field=models.CharField(max_length=100),
        ),
        migrations.AddField(
            model_name='passage',
            name='score',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='passage',
            name='metadata',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name='evidence',
            name='passage_pid',
            field=models.CharField(max_length=100),
        ),
        migrations.AlterField(
            model_name='workedexample',
            name='passage_pid',
            field=models.CharField(blank=True, max_length=100),
        ),
    ]
