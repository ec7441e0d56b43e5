"""Strict readers for settings that come from the environment.

A malformed value stops start-up with a message that names the variable, instead of
running with a silently wrong configuration (the healthchecks `envbool`/`envint` idea).
"""

from __future__ import annotations

import os
import warnings
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


# Variables renamed, new name -> old name: the old one still works for one release, with a warning.
RENAMED = {"JUDGE_HOLD_MARGIN_SECONDS": "JUDGE_CLAIM_MARGIN_SECONDS"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    old = RENAMED.get(name)
    if value is None and old is not None and old in os.environ:
        warnings.warn(f"{old} is now called {name}; the old name stops working in the next release",
                      FutureWarning, stacklevel=3)
        value = os.environ[old]
    return None if value is None else value.strip()


def env_str(name: str, default: str | None = None) -> str | None:
    value = _raw(name)
    return default if value in (None, "") else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    # Empty is unset (compose passes `${X:-}` through): a secure default must not flip to false.
    if value in (None, ""):
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off"
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be at least {minimum}")
    return number


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value in (None, ""):
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be at least {minimum}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return default
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(
            f"{name}={value!r} has an empty item; separate values with single commas"
        )
    return items


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}")
    return value


def env_url(name: str, default: str | None, *, schemes: tuple[str, ...]) -> str | None:
    value = env_str(name, default)
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name}={value!r} must be a URL starting with"
            f" {' or '.join(s + '://' for s in schemes)}"
        )
    if (
        parts.scheme in ("http", "https", "redis", "rediss", "postgres", "postgresql")
        and not parts.hostname
    ):
        raise ImproperlyConfigured(f"{name}={value!r} has no host")
    return value
