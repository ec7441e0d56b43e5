"""The judge profiles and their registry.

    get_profile("fare_policy")      -> the latest version (also "fare_policy@latest")
    get_profile("fare_policy@v2")   -> that version
    list_profiles()                 -> [("claim_audit", ["v1"]), ("fare_policy", ["v1", "v2",
    "v3"]), ...]

Unknown names or versions raise UnknownProfile (a ValueError) whose message lists what exists.
Each profile lives in its own folder with one prompt template per version beside its code.
"""

from __future__ import annotations

from judges.profiles import claim_audit, claim_verification, fare_policy, sentence_map
from judges.profiles.base import Normalized, OutputError, Profile, RenderedPrompt

__all__ = [
    "Normalized", "OutputError", "Profile", "RenderedPrompt", "UnknownProfile",
    "get_profile", "list_profiles",
]


class UnknownProfile(ValueError):
    """No profile, or no version of it, by that name. The message lists the available ones."""


def _version_key(version: str) -> tuple[int, str]:
    digits = version.lstrip("v")
    return (int(digits), version) if digits.isdigit() else (-1, version)


_REGISTRY: dict[str, dict[str, Profile]] = {}
for _module in (claim_audit, fare_policy, claim_verification, sentence_map):
    for _profile in _module.PROFILES:
        _REGISTRY.setdefault(_profile.name, {})[_profile.version] = _profile


def list_profiles() -> list[tuple[str, list[str]]]:
    """Every profile name (sorted) with its versions, oldest first."""
    return [
        (name, sorted(versions, key=_version_key)) for name, versions in sorted(_REGISTRY.items())
    ]


def _available() -> str:
    return "; ".join(f"{name} ({', '.join(versions)})" for name, versions in list_profiles())


def get_profile(spec: str) -> Profile:
    """A profile by "name" (its latest version), "name@latest" or "name@version"."""
    name, at, version = (spec or "").partition("@")
    versions = _REGISTRY.get(name)
    if versions is None:
        raise UnknownProfile(f"unknown judge profile {spec!r}; available: {_available()}")
    if not at or version == "latest":
        return versions[max(versions, key=_version_key)]
    if version not in versions:
        known = ", ".join(sorted(versions, key=_version_key))
        raise UnknownProfile(
            f"judge profile {name!r} has no version {version!r}; available versions: {known}"
        )
    return versions[version]
