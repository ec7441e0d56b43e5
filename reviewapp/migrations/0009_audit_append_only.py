"""History stays history in the database too: AuditEvent, Review and Policy rows cannot be updated,
deleted or truncated, whatever code (the app, a shell, a careless script) sends the statement.

The models refuse save()/delete() on existing rows already, but a queryset's update()/delete(),
a cascade or raw SQL goes around Python. Triggers do not. A row-level trigger raises on
UPDATE and DELETE (a cascading or bulk delete that matches no row still passes) and a
statement-level one raises on TRUNCATE. TRUNCATE alone can be allowed for one transaction with
`SET LOCAL claimdesk.allow_truncate = 'on'`: that is how an operator empties a database on purpose
and how the test suite's flush between transactional tests works (tests/conftest.py).

The triggers bind every role, but a role that owns the tables can drop them: a deployment that
wants the guarantee against its own application account runs the app as a role that does not
own the schema (migrations as the owner).
"""

from django.db import migrations

TABLES = ("reviewapp_auditevent", "reviewapp_review", "reviewapp_policy")

POSTGRES_FUNCTIONS = """
CREATE FUNCTION claimdesk_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION '%% rows are append-only: %% refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege', HINT = 'write a new row instead';
END $$ LANGUAGE plpgsql;

CREATE FUNCTION claimdesk_append_only_truncate() RETURNS trigger AS $$
BEGIN
  IF coalesce(current_setting('claimdesk.allow_truncate', true), '') <> 'on' THEN
    RAISE EXCEPTION '%% rows are append-only: TRUNCATE refused', TG_TABLE_NAME
      USING ERRCODE = 'insufficient_privilege',
            HINT = 'SET LOCAL claimdesk.allow_truncate = ''on'' in the transaction'
                   || ' to empty it on purpose';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
"""

POSTGRES_TABLE = """
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
  FOR EACH ROW EXECUTE FUNCTION claimdesk_append_only();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
  FOR EACH STATEMENT EXECUTE FUNCTION claimdesk_append_only_truncate();
"""

def create_triggers(apps, schema_editor):
    schema_editor.execute(POSTGRES_FUNCTIONS)
    for table in TABLES:
        schema_editor.execute(POSTGRES_TABLE.format(table=table))


def drop_triggers(apps, schema_editor):
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
    schema_editor.execute("DROP FUNCTION IF EXISTS claimdesk_append_only()")
    schema_editor.execute("DROP FUNCTION IF EXISTS claimdesk_append_only_truncate()")


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0008_example_sets")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
