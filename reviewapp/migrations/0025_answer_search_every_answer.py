"""/answers/ searches every answer, not only those in review: a full-text index over all of them.

0012's index covers the rows in review only (the queue's search). /answers/ could not use it, so a
search there read the whole table: at 100k answers a word no answer holds took ~2 s a page (the
newest-first walk over every row), a rare word ~0.5 s (a sequential scan for the few ids). With
this index both are a bitmap read of well under 1 ms. The queue keeps its smaller partial index.

The answer's text never changes, so the index is written once per answer, at ingest (batched
through the pending list as 0012's is). Built concurrently: posting goes on while it builds.
"""

from django.db import migrations

FORWARD = """
CREATE INDEX CONCURRENTLY IF NOT EXISTS answer_search_every_answer ON reviewapp_answer USING gin
    (search_document)
    WITH (gin_pending_list_limit = 512)
"""
BACKWARD = "DROP INDEX CONCURRENTLY IF EXISTS answer_search_every_answer"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reviewapp", "0024_evidence_differences"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
