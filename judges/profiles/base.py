"""What a judge profile is: a versioned prompt, the JSON its model must return, and the code
that parses that JSON and normalizes it to DESIGN.md's result.

Backends (judges/backends/) know nothing of a profile's wording; they send `render()`'s
messages, ask for `output_schema`, and hand the reply text to `parse()` then `normalize()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from judges.examples import WorkedExamples
from judges.types import Claim, Fabrication, JudgeRequest, Omission, Verdict


class OutputError(ValueError):
    """The model's reply is not acceptable output for the profile. The message says exactly why
    (it is shown to the model in the one repair request, and stored if the repair fails too)."""


@dataclass(frozen=True)
class RenderedPrompt:
    messages: list[dict[str, str]]  # OpenAI chat messages: system, then user
    delimiter: str  # the per-request random marker around untrusted text (never in the input)


@dataclass
class Normalized:
    """A profile's result before the backend adds judge info (latency, usage, attempts)."""

    verdict: Verdict
    grounding_score: float
    claims: list[Claim]
    fabrications: list[Fabrication] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    rewrite_note: str = ""


class Profile(Protocol):
    name: str
    version: str
    schema_name: str  # a name for response_format json_schema: ^[a-zA-Z0-9_-]{1,64}$
    output_schema: dict[str, Any]  # JSON Schema of the raw output

    def render(
        self, request: JudgeRequest, examples: WorkedExamples | None = None
    ) -> RenderedPrompt:
        """The messages for `request`; `examples` (worked examples from human reviewers) go in as
        extra data blocks ahead of the request's material."""

    def parse(self, text: str, request: JudgeRequest | None = None) -> Any:
        """Reply text -> the validated raw output. Raises OutputError with the reason.

        `request` is optional: without it a profile checks everything the reply alone can show.
        With it, checks that need the request happen here too (sentence_map: every sentence index
        exactly once), so the repair request can name them. Backends should pass it.
        """

    def normalize(self, raw: Any, request: JudgeRequest) -> Normalized:
        """The validated raw output (what `parse` returned) -> DESIGN.md's result. Raises
        OutputError when the raw output does not fit the request."""
