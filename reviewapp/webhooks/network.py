"""Webhooks reach public addresses only, and only the address that was checked.

A receiver's name is resolved once per connection; every address it gives must be public, and the
socket is then opened to one of those same addresses. Resolving again to connect would let a name
answer a public address to the check and 127.0.0.1 to the connection (DNS rebinding). An IPv6
address that carries an IPv4 one (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4) is judged by
that IPv4 address too, since a translator or the kernel delivers it there. The URL keeps its name,
so the Host header, TLS SNI and the certificate check are for the name, as without the guard.

Reasons given here are shown to the client: they name its own host, never the addresses it
resolved to (a name only our DNS knows must not be a way to read our network).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterable

import httpcore2 as httpcore  # httpx2's transport layer (the openai package's httpx fork)
import httpx2 as httpx
from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 prefixes whose last 32 bits are an IPv4 address the packet ends up at.
_CARRY_IPV4_IN_LOW_BITS = [
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated, still routed by some stacks)
    ipaddress.ip_network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix
]
# Local-use NAT64 (RFC 8215) translates into the site's own network; Python calls it global.
_NEVER_PUBLIC = [ipaddress.ip_network("64:ff9b:1::/48")]


class NotSent(Exception):
    """The delivery could not go out; the message says why in words safe to show the client."""


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address delivers to, if it is one of the forms that carry one."""
    if address.version == 4:
        return None
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in network for network in _CARRY_IPV4_IN_LOW_BITS) and int(address) & 0xFFFFFFFF:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: Address) -> bool:
    if not address.is_global or any(address in network for network in _NEVER_PUBLIC):
        return False
    carried = embedded_ipv4(address)
    return carried is None or carried.is_global


def numeric_address(host: str) -> Address | None:
    """The address a numeric host means, in any spelling the resolver accepts ("2130706433",
    "0x7f.1", "[::1]"), without asking DNS; None for a name."""
    try:
        infos = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return None
    return ipaddress.ip_address(infos[0][4][0].split("%")[0])


def resolve(host: str, port: int) -> list[str]:
    """Every address the host has, in the resolver's order; NotSent if it has none."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError):
        raise NotSent(f"cannot resolve {host}") from None
    return list(dict.fromkeys(info[4][0] for info in infos))


def refusal(host: str, addresses: Iterable[str]) -> str:
    """Why these addresses of `host` must not be reached ("" when they all may)."""
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return ""
    if any(not is_public(ipaddress.ip_address(address.split("%")[0])) for address in addresses):
        return f"{host} resolves to a loopback, private or otherwise non-public address"
    return ""


def checked_addresses(host: str, port: int) -> list[str]:
    """Resolve once and check: the addresses a connection to host may use, or NotSent."""
    addresses = resolve(host, port)
    reason = refusal(host, addresses)
    if reason:
        raise NotSent(f"refused: {reason}")
    return addresses


class PublicOnlyBackend(httpcore.SyncBackend):
    """Opens each TCP connection to an address checked in the same call, never to a fresh lookup."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in checked_addresses(host, port):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next address, as socket.create_connection would
        assert failure is not None  # resolve() returns at least one address
        raise failure


class PublicOnlyTransport(httpx.HTTPTransport):
    """httpx's transport with its connection pool on PublicOnlyBackend (no proxy: we connect).

    httpx builds its pool without a way to name the network backend, so the pool is built here with
    httpx's own defaults (its limits, its certificate checks)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(trust_env=False)
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PublicOnlyBackend(),
        )
