"""Attempts recorded before the receiver's reply stopped being kept may hold the first bytes of its
body ("HTTP 500: <body>") or an httpx message quoting what it sent: the client reads attempts back
on GET /api/v1/webhook/deliveries, so rewrite them to the status and the fixed reasons that
services.webhooks records today. The texts are copied here, not imported: a migration stays what it
was when it ran.
"""

from django.db import migrations
from django.db.models import Q, Value
from django.db.models.functions import Cast, Concat
from django.db.models import CharField

NOT_2XX = ": not a 2xx reply (its body is not kept)"
REDIRECT = ": a redirect, not followed"
FAILURES = {
    "ConnectError": "could not connect (refused, unreachable or a failed TLS handshake)",
    "RemoteProtocolError": "the reply was not valid HTTP",
    "ReadError": "the connection broke",
    "WriteError": "the connection broke",
    "CloseError": "the connection broke",
}
FALLBACK = "the request failed"


def forget_receiver_text(apps, schema_editor):
    Attempt = apps.get_model("reviewapp", "WebhookAttempt")
    status = Cast("http_status", CharField())
    Attempt.objects.filter(http_status__gte=400).exclude(error__endswith=NOT_2XX).update(
        error=Concat(Value("HTTP "), status, Value(NOT_2XX)))
    Attempt.objects.filter(http_status__gte=300, http_status__lt=400).exclude(
        error__endswith=REDIRECT
    ).update(error=Concat(Value("HTTP "), status, Value(REDIRECT)))
    Attempt.objects.filter(http_status__lt=300).exclude(error="").update(error="")
    # No status: a transport failure, recorded as "<httpx class>: <message>" before.
    for name, reason in FAILURES.items():
        Attempt.objects.filter(http_status__isnull=True, error__startswith=f"{name}: ").exclude(
            error=f"{name}: {reason}").update(error=f"{name}: {reason}")
    known = (
        Q(error="") | Q(error__startswith="not sent: ") | Q(error__startswith="timed out after ")
    )
    for name in FAILURES:
        known |= Q(error__startswith=f"{name}: ")
    for attempt in (
        Attempt.objects.filter(http_status__isnull=True)
        .exclude(known)
        .only("pk", "error")
        .iterator()
    ):
        kind = attempt.error.partition(":")[0]
        kind = kind if kind.isidentifier() else "HTTPError"
        Attempt.objects.filter(pk=attempt.pk).update(error=f"{kind}: {FALLBACK}")


class Migration(migrations.Migration):

    dependencies = [
        ('reviewapp', '0018_answer_public_id'),
    ]

    operations = [
        migrations.RunPython(forget_receiver_text, migrations.RunPython.noop, elidable=True),
    ]
