"""One meaning per word: "claim" is a factual claim. The worker's hold on an answer and a webhook
delivery's time being sent are named for what they are (the columns are renamed in place)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0027_db_defaults_for_raw_inserts"),
    ]

    operations = [
        migrations.RenameField(
            model_name="answer", old_name="claim_token", new_name="judging_token"
        ),
        migrations.RenameField(
            model_name="answer", old_name="claim_expires_at", new_name="judging_until"
        ),
        migrations.RenameField(
            model_name="webhookdelivery", old_name="claimed_until", new_name="sending_until"
        ),
    ]
