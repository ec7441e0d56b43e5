"""The web process as production runs it: gunicorn with uvicorn workers (docker-compose.yml).

ASGI, so that a guardrail wait (POST /api/v1/answers?wait=S, an async view) holds an open socket
and a Redis subscription, not one of the few request workers (issue 28). Sync views run as under
WSGI, each request in a thread of its own."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
application = get_asgi_application()
