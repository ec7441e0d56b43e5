from django.core.management.base import BaseCommand, CommandError

from reviewapp.models import ApiClient
from reviewapp.api.clients import api_client_create


class Command(BaseCommand):
    help = "Create an API client and print its bearer token. The token is shown this once only."

    def add_arguments(self, parser):
        parser.add_argument("name", help="a name for the client RAG system, e.g. fares-bot-prod")

    def handle(self, *args, name: str, **options):
        if ApiClient.objects.filter(name=name).exists():
            raise CommandError(f"an API client named {name!r} already exists")
        _, token = api_client_create(name=name, actor_label="cli:create_api_token")
        self.stdout.write(token)
        self.stderr.write(f"Token for {name!r} created. Store it now: it is kept only as a hash.")
