"""The first routing policy, and database triggers that keep spans inside their text.

Check constraints cannot look at another table, so a trigger refuses a claim span past the end
of its answer or an evidence span past the end of its passage. (The judging service checks the
same before writing.)
"""

from django.db import migrations

from reviewapp.models import FIRST_POLICY_NOTE

SPAN_TRIGGERS = """
CREATE FUNCTION claimdesk_claim_span_inside() RETURNS trigger AS $$
BEGIN
  IF NEW.answer_end IS NOT NULL
     AND NEW.answer_end > (SELECT char_length(answer) FROM reviewapp_answer WHERE id =
         NEW.answer_id) THEN
    RAISE EXCEPTION 'claim span [%%, %%) is outside its answer', NEW.answer_start, NEW.answer_end
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER claim_span_inside BEFORE INSERT OR UPDATE ON reviewapp_claim
  FOR EACH ROW EXECUTE FUNCTION claimdesk_claim_span_inside();

CREATE FUNCTION claimdesk_evidence_span_inside() RETURNS trigger AS $$
BEGIN
  IF NEW."end" IS NOT NULL AND (NEW.passage_id IS NULL
     OR NEW."end" > (SELECT char_length(text) FROM reviewapp_passage WHERE id = NEW.passage_id))
         THEN
    RAISE EXCEPTION 'evidence span [%%, %%) is outside its passage', NEW.start, NEW."end"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER evidence_span_inside BEFORE INSERT OR UPDATE ON reviewapp_evidence
  FOR EACH ROW EXECUTE FUNCTION claimdesk_evidence_span_inside();
"""

DROP_SPAN_TRIGGERS = """
DROP TRIGGER IF EXISTS claim_span_inside ON reviewapp_claim;
DROP FUNCTION IF EXISTS claimdesk_claim_span_inside();
DROP TRIGGER IF EXISTS evidence_span_inside ON reviewapp_evidence;
DROP FUNCTION IF EXISTS claimdesk_evidence_span_inside();
"""


def create_span_triggers(apps, schema_editor):
    schema_editor.execute(SPAN_TRIGGERS)


def drop_span_triggers(apps, schema_editor):
    schema_editor.execute(DROP_SPAN_TRIGGERS)


def create_first_policy(apps, schema_editor):
    Policy = apps.get_model("reviewapp", "Policy")
    if not Policy.objects.exists():
        # The field defaults are the first policy's values.
        Policy.objects.create(version=1, note=FIRST_POLICY_NOTE)


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0001_initial")]

    operations = [
        migrations.RunPython(create_span_triggers, drop_span_triggers),
        migrations.RunPython(create_first_policy, migrations.RunPython.noop),
    ]
