"""Statements that the sources are silent: "the policy does not specify X", "there is no
information about X". They assert nothing a passage could contain, so the offline judge labels
them by whether some passage covers X, and the deterministic checks do not ask a passage to
support them. One definition for all three.

A "does not <verb>" statement is one of silence only when its subject is the sources ("The policy
does not include X"): "Cash fares do not include a transfer" speaks of fares, and is a claim like
any other.
"""

from __future__ import annotations

import re

_CUES = re.compile(
    r"\b(?:(?:is|are|was|were) not"
    r" (?:mentioned|specified|stated|given|provided|listed|included|addressed"
    r"|covered|clear|known|available)|no (?:information|mention|details?|data|indication)"
    r"|(?:does|do|did)(?:n't| not)"
    r" (?:specify|mention|say|state|list|provide|include|address|cover|indicate"
    r"|give|explain))\b",
    re.IGNORECASE,
)
_SOURCE_SUBJECT = re.compile(
    r"\b(?:it|they|this|these|policy|policies|rules?|passages?|sources?|documents?|texts?|"
    r"articles?|contexts?"
    r"|pages?|sites?|website|information|summary)\W*$",
    re.IGNORECASE,
)


def silence(text: str) -> re.Match[str] | None:
    """Where `text` says the sources are silent (what follows the match is what they are silent
    on), or None."""
    found = _CUES.search(text)
    if (
        found
        and found.group().lower().startswith(("do", "did"))
        and not _SOURCE_SUBJECT.search(text[: found.start()])
    ):
        return None
    return found
