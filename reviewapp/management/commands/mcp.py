"""`python manage.py mcp`: ClaimDesk's MCP server over stdio, for an assistant to start.

With CLAIMDESK_URL it forwards to that ClaimDesk's /mcp (reviewapp.mcp.bridge); without, it works
in process against this database. Either way it acts for the API client whose token
CLAIMDESK_TOKEN holds, and sees only that client's answers. Stdout is the protocol's: everything
else this prints goes to stderr.
"""

import os

import anyio
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Serve ClaimDesk's MCP tools over stdio (CLAIMDESK_TOKEN; CLAIMDESK_URL to use a remote"
        " ClaimDesk)."
    )

    def handle(self, *args, **options):
        token = os.environ.get("CLAIMDESK_TOKEN", "").strip()
        if not token:
            raise CommandError(
                "CLAIMDESK_TOKEN is not set: give the API token the assistant acts with "
                "(python manage.py create_api_token NAME prints one)"
            )
        url = os.environ.get("CLAIMDESK_URL", "").strip()
        if url:
            from reviewapp.mcp import bridge

            anyio.run(bridge.serve, url, token)
            return
        from reviewapp.api.clients import api_client_authenticate
        from reviewapp.mcp.server import acting_client, server

        client = api_client_authenticate(token)
        if client is None:
            raise CommandError("CLAIMDESK_TOKEN: not a valid API token for this database")
        acting_client.set(client)
        anyio.run(server.run_stdio_async)
