from django.core.management.base import BaseCommand

from reviewapp.webhooks.service import deliveries_resend_due


class Command(BaseCommand):
    help = (
        "Enqueue again the pending webhook deliveries whose task was lost (e.g. the broker was down"
        " when the event happened). Safe to run any time, e.g. from cron: a delivery is only ever"
        " sent by one worker."
    )

    def add_arguments(self, parser):
        parser.add_argument("--older-than", type=float, default=60.0, metavar="SECONDS",
                            help="only deliveries overdue by this long (default 60)")

    def handle(self, *args, older_than: float, **options):
        count = deliveries_resend_due(older_than_seconds=older_than)
        self.stdout.write(f"{count} overdue deliveries enqueued again")
