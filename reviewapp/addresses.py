"""The client's address, for sign-in throttling (django-axes), the API's wrong-token limit and the
audit log. Behind a reverse proxy REMOTE_ADDR is the proxy's, and counting failures there would let
one client lock every client out; X-Forwarded-For is believed only when the request comes from a
proxy in TRUSTED_PROXIES (anyone else could write it)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR; from a trusted proxy, the address the outermost trusted proxy saw: the
    right-most X-Forwarded-For entry that is not itself a trusted proxy (the entries left of it were
    written by the client and prove nothing)."""
    remote = request.META.get("REMOTE_ADDR", "")
    if not _trusted(remote):
        return remote
    header = request.META.get("HTTP_X_FORWARDED_FOR", "")
    forwarded = [part.strip() for part in header.split(",") if part.strip()]
    for address in reversed(forwarded):
        if not _trusted(address):
            try:
                return str(ipaddress.ip_address(address))
            except ValueError:  # not an address: no client to tell apart, count the proxy's
                return remote
    return forwarded[0] if forwarded else remote
