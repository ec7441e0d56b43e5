"""Secrets the app must read back (webhook signing secrets), encrypted at rest.

A webhook secret signs every delivery, so unlike an API token it cannot be kept as a hash. It is
stored sealed with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) under a key derived from
SECRET_KEY, so a database dump or backup alone does not let anyone forge deliveries to clients.
Rotating SECRET_KEY: put the old one in SECRET_KEY_FALLBACKS (as for Django's own signing); values
sealed under it still open, and `manage.py reseal_secrets` seals them again under the new key.
"""

from __future__ import annotations

import base64
import logging
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import models

PREFIX = "sealed:v1:"
logger = logging.getLogger(__name__)


def _fernet_key(secret_key: str) -> bytes:
    # HKDF with a purpose label: the same SECRET_KEY never serves as two different keys.
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                   info=b"claimdesk sealed fields v1").derive(secret_key.encode())
    return base64.urlsafe_b64encode(derived)


@lru_cache(maxsize=4)
def _box(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(key)) for key in keys])


def box() -> MultiFernet:
    """Seals with SECRET_KEY, opens with it or any of SECRET_KEY_FALLBACKS."""
    return _box((settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS))


def seal(plain: str) -> str:
    return PREFIX + box().encrypt(plain.encode()).decode("ascii")


def is_sealed(value: str) -> bool:
    """True for a value still sealed, i.e. one no configured key opened."""
    return value.startswith(PREFIX)


def unseal(stored: str) -> str:
    """The plain value; a value no configured key opens (SECRET_KEY changed without a fallback)
    comes back still sealed, so pages listing it keep working and the code that needs the
    secret says what is wrong (`is_sealed`)."""
    if not is_sealed(stored):
        return stored  # empty, or written before sealing existed (migration 0011 seals those)
    try:
        return box().decrypt(stored[len(PREFIX):].encode("ascii")).decode()
    except InvalidToken:
        logger.warning("a sealed secret does not open with SECRET_KEY or SECRET_KEY_FALLBACKS")
        return stored


def sealed_form(value: str) -> str:
    """`value` as the column stores it: sealed, unless empty or still sealed (a value no key
    opened is kept as it is, never sealed twice)."""
    if not value or is_sealed(value):
        return value
    return seal(value)


class SealedCharField(models.TextField):
    """A text column holding `seal(value)`; Python code sees the plain value. Not searchable:
    each seal differs (random IV)."""

    def from_db_value(self, value, expression, connection):
        return unseal(value) if value else value

    def get_prep_value(self, value):
        return sealed_form(super().get_prep_value(value))
