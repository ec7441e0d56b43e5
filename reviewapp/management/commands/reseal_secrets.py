from django.core.management.base import BaseCommand
from django.db import transaction

from reviewapp.models import WebhookEndpoint


class Command(BaseCommand):
    help = (
        "Seal every webhook secret again under the current SECRET_KEY. Run after rotating"
        " SECRET_KEY (with the old key still in SECRET_KEY_FALLBACKS); then the old key can be"
        " dropped."
    )

    def handle(self, *args, **options):
        count = 0
        with transaction.atomic():
            # Reading opens each secret with any configured key; saving seals it with SECRET_KEY.
            for endpoint in WebhookEndpoint.objects.select_for_update().only(
                "secret", "previous_secret"
            ):
                endpoint.save(update_fields=["secret", "previous_secret"])
                count += 1
        self.stdout.write(f"{count} webhook endpoints sealed under the current SECRET_KEY")
