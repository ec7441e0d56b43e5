"""Webhook sends reach only the public address they checked, and hand back nothing of the reply.

The resolver is the process's own socket.getaddrinfo, replaced by one that answers a test name
as the attacker's DNS would (another answer on each call); numeric hosts and every other name go
to the real resolver. The receivers are real HTTP servers on loopback.
"""

from __future__ import annotations

import json
import socket
import ssl

import httpx2 as httpx
import pytest

from reviewapp.models import ApiClient, WebhookAttempt, WebhookEndpoint
from reviewapp.webhooks import network as webhook_network
from reviewapp.webhooks import service as webhooks_service
from tests import factories as make
from tests.webhook_receiver import Receiver

_real_getaddrinfo = socket.getaddrinfo


class AttackerDns:
    """Answers `name` with each of `answers` in turn, the last one repeating."""

    def __init__(self, name: str, *answers: str):
        self.name, self.answers, self.calls = name, answers, 0

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        if host != self.name:
            return _real_getaddrinfo(host, port, family, type, proto, flags)
        if flags & socket.AI_NUMERICHOST:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        address = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        port = int(port or 0)
        if ":" in address:
            return [
                (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port, 0, 0))
            ]
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]


@pytest.fixture
def attacker_dns(monkeypatch):
    def install(name: str, *answers: str) -> AttackerDns:
        dns = AttackerDns(name, *answers)
        monkeypatch.setattr(socket, "getaddrinfo", dns)
        return dns

    return install


@pytest.mark.django_db
def test_a_webhook_host_that_rebinds_to_loopback_is_never_connected(
    settings, attacker_dns, private_refused
):
    # The name answers a public address to whoever asks first and 127.0.0.1 afterwards, where a
    # service the client must not reach listens on the URL's port.
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    with Receiver() as internal:
        dns = attacker_dns("hooks.rebind.test", "93.184.216.34", "127.0.0.1")
        _, endpoint = make.webhook_endpoint(
            url=f"http://hooks.rebind.test:{internal.port}/hooks/claimdesk"
        )
        webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)
    assert internal.received == []
    assert dns.calls == 1  # resolved once: the connection went to the address that was checked
    [attempt] = WebhookAttempt.objects.all()
    assert attempt.http_status is None and "127.0.0.1" not in attempt.error


@pytest.mark.django_db
def test_a_pinned_connection_keeps_the_name_in_the_host_header(attacker_dns, private_ok):
    # 127.0.0.1 first, then 127.0.0.2 (another loopback service on the same port): the request
    # must reach the first, the one its lookup gave, with the registered name as its Host.
    with Receiver() as first, Receiver(host="127.0.0.2", port=first.port) as second:
        dns = attacker_dns("hooks.pinned.test", "127.0.0.1", "127.0.0.2")
        _, endpoint = make.webhook_endpoint(
            url=f"http://hooks.pinned.test:{first.port}/hooks/claimdesk"
        )
        first.secret = endpoint.secret
        outcome = webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)
    assert outcome.status == "delivered" and dns.calls == 1
    [got] = first.received
    assert got.headers["Host"] == f"hooks.pinned.test:{first.port}" and got.verified
    assert second.received == []


def test_a_pinned_https_connection_checks_the_certificate_and_sni_of_the_name(
    attacker_dns, settings
):
    trustme = pytest.importorskip("trustme")
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    ca = trustme.CA()
    server = ca.issue_cert("hooks.tls.test").configure_cert
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server(tls)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    with Receiver(tls=tls) as receiver:
        attacker_dns("hooks.tls.test", "127.0.0.1")
        with httpx.Client(transport=webhook_network.PublicOnlyTransport(client_context)) as http:
            good = http.post(
                f"https://hooks.tls.test:{receiver.port}/hooks/claimdesk", content=b"{}"
            )
            # The same server by another name: its certificate does not cover it, so no request.
            attacker_dns("hooks.other.test", "127.0.0.1")
            with pytest.raises(httpx.ConnectError, match="certificate"):
                http.post(
                    f"https://hooks.other.test:{receiver.port}/hooks/claimdesk", content=b"{}"
                )
    assert good.status_code == 200
    assert [r.headers["Host"] for r in receiver.received] == [f"hooks.tls.test:{receiver.port}"]


@pytest.mark.django_db
@pytest.mark.parametrize("answer", [
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:0:7f00:1",  # SIIT IPv4-translated
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254, the cloud metadata service
    "64:ff9b:1::a00:1",  # local-use NAT64
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
])
def test_an_ipv6_form_of_a_private_ipv4_address_is_refused_at_send_time(
    attacker_dns, private_refused, answer
):
    dns = attacker_dns("hooks.v6.test", answer)
    _, endpoint = make.webhook_endpoint(url="http://hooks.v6.test/h")
    webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)
    [attempt] = WebhookAttempt.objects.all()
    assert attempt.error == (
        "not sent: refused: hooks.v6.test resolves to a loopback, private or otherwise "
        "non-public address"
    )
    assert dns.calls == 1


@pytest.mark.parametrize(
    "address, public",
    [
        ("64:ff9b::808:808", True),
        ("2002:808:808::1", True),
        ("::ffff:8.8.8.8", True),
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("64:ff9b::a00:1", False),
        ("::a00:1", False),
        ("fe80::1", False),
        ("100.64.0.1", False),
        ("::", False),
    ],
)
def test_embedded_ipv4_addresses_are_judged_by_the_ipv4_they_carry(address, public):
    import ipaddress

    assert webhook_network.is_public(ipaddress.ip_address(address)) is public


@pytest.mark.django_db
def test_a_receivers_reply_is_never_handed_back_to_the_client(client, api_token, private_ok):
    # The "receiver" is an internal service answering 500 with what it holds, and a redirect
    # whose Location names another internal URL: the client reads neither back.
    headers = {"Authorization": f"Bearer {api_token}"}
    mine = ApiClient.objects.get(name="fares-bot")
    with Receiver(replies=(500,), reply_body=b"root:x:0:0:INTERNAL-SECRET") as internal:
        _, endpoint = make.webhook_endpoint(client=mine, url=internal.url)
        webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)
    with Receiver(
        replies=(302,), location="http://10.0.0.5/admin?token=INTERNAL-TOKEN"
    ) as redirecting:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(url=redirecting.url)
        webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)

    listed = client.get("/api/v1/webhook/deliveries", headers=headers)
    assert listed.status_code == 200
    assert b"INTERNAL" not in listed.content and b"10.0.0.5" not in listed.content
    errors = sorted(a["error"] for d in json.loads(listed.content) for a in d["attempts"])
    assert errors == [
        "HTTP 302: a redirect, not followed",
        "HTTP 500: not a 2xx reply (its body is not kept)",
    ]


@pytest.mark.django_db
def test_a_malformed_reply_is_not_quoted_back(private_ok):
    # A non-HTTP service (an SSH banner, a database greeting) makes h11 quote its first bytes.
    import socketserver
    import threading

    class Banner(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.recv(65536)
            self.request.sendall(b"SSH-2.0-OpenSSH_9.6 INTERNAL-BANNER\r\n")

    with socketserver.TCPServer(("127.0.0.1", 0), Banner) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _, endpoint = make.webhook_endpoint(url=f"http://127.0.0.1:{server.server_address[1]}/h")
        webhooks_service.delivery_send(delivery_id=make.webhook_delivery(endpoint).pk)
        server.shutdown()
    [attempt] = WebhookAttempt.objects.all()
    assert attempt.error == "RemoteProtocolError: the reply was not valid HTTP"


@pytest.mark.django_db
def test_a_name_that_resolves_to_loopback_is_refused_at_registration(
    hook_api, attacker_dns, private_refused
):
    attacker_dns("internal.attacker.test", "127.0.0.1")
    response = hook_api.put(url="https://internal.attacker.test/h")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (
        error["field"] == "url"
        and "internal.attacker.test resolves to a non-public address" in error["message"]
    )
    assert "127.0.0.1" not in error["message"]
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.django_db
def test_a_name_that_resolves_to_a_public_address_or_not_yet_is_accepted(
    hook_api, attacker_dns, private_refused
):
    attacker_dns("hooks.public.test", "93.184.216.34")
    assert hook_api.put(url="https://hooks.public.test/h").status_code == 201
    # Not in DNS yet: accepted, since every connection resolves and checks it again.
    assert hook_api.put(url="https://hooks.not-yet.invalid/h").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_receiver_bodies_stored_before_the_fix_are_rewritten_to_fixed_reasons():
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    name = "0019_webhook_attempt_errors_without_bodies"
    [before] = MigrationLoader(connection).graph.node_map[("reviewapp", name)].parents
    _, endpoint = make.webhook_endpoint()
    delivery = make.webhook_delivery(endpoint)
    old = {  # what attempts recorded when a receiver's reply or httpx's message was kept
        1: (500, "HTTP 500: Traceback (most recent call last): internal secret=hunter2"),
        2: (302, "HTTP 302: Location: http://10.0.0.5/admin"),
        3: (200, "HTTP 200: ok"),
        4: (None, "RemoteProtocolError: illegal status line: bytearray(b'SSH-2.0-OpenSSH_9.2')"),
        5: (None, "ConnectError: [Errno 111] Connection refused"),
        6: (None, "ProxyError: 407 from proxy.internal"),
        7: (None, "not sent: the endpoint was removed or deactivated"),
        8: (404, "HTTP 404" + ": not a 2xx reply (its body is not kept)"),
    }
    for number, (status, error) in old.items():
        WebhookAttempt.objects.create(
            delivery=delivery, number=number, http_status=status, error=error
        )
    call_command("migrate", "reviewapp", before[1], verbosity=0)
    call_command("migrate", "reviewapp", verbosity=0)

    errors = dict(WebhookAttempt.objects.values_list("number", "error"))
    assert errors == {
        1: webhooks_service.status_reason(500),
        2: webhooks_service.status_reason(302),
        3: "",
        4: "RemoteProtocolError: the reply was not valid HTTP",
        5: "ConnectError: could not connect (refused, unreachable or a failed TLS handshake)",
        6: "ProxyError: the request failed",
        7: "not sent: the endpoint was removed or deactivated",
        8: webhooks_service.status_reason(404),
    }
