"""Each human decision records how it was made: `explicit` (the reviewer acted on that claim) or
`bulk` (accepted by "Confirm the rest & finish" without being looked at), on the claim's current
decision and on every Review row.

Decisions stored before this column cannot be told apart any more; they are marked `explicit`, as
the application presented them until now. Adding the column with a constant default rewrites no
table on Postgres; the one UPDATE touches decided claims only. The claim's column keeps its
database default ('', undecided): the judge inserts claims with its own SQL, which names no mode.
"""

from django.db import migrations, models
from django.db.models import Q

MODES = [("explicit", "Explicit"), ("bulk", "Bulk")]


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0016_answer_request_hash'),
    ]

    operations = [
        migrations.AddField(
            model_name='claim',
            name='decision_mode',
            field=models.CharField(
                blank=True, choices=MODES, db_default='', default='', max_length=8
            ),
        ),
        migrations.AddField(
            model_name='review',
            name='decision_mode',
            field=models.CharField(choices=MODES, default='explicit', max_length=8),
        ),
        migrations.RunSQL(
            "UPDATE reviewapp_claim SET decision_mode = 'explicit' WHERE decision <> ''",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name='claim',
            constraint=models.CheckConstraint(
                condition=Q(decision_mode='') | Q(decision_mode__in=['explicit', 'bulk']),
                name='claim_decision_mode_known',
            ),
        ),
    ]
