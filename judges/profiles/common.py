"""What the four profiles share beyond rendering and parsing: the base class that wires a version's
template, raw model and schema together, and small normalization helpers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from judges.examples import WorkedExamples
from judges.profiles.base import Normalized, RenderedPrompt
from judges.profiles.locate import locate_in_answer
from judges.profiles.parsing import extract_json, validate
from judges.profiles.render import PromptTemplate, load_template, render_prompt
from judges.types import JudgeRequest


class TemplateProfile:
    """One version of a profile: `<folder>/<version>.txt` is its prompt.

    Subclasses set `name`, `versions`, `raw_model`, `output_schema` and implement `normalize`;
    `check` adds reply checks beyond the schema (it may use the request when it is given).
    """

    name: ClassVar[str]
    versions: ClassVar[tuple[str, ...]]
    folder: ClassVar[Path]
    raw_model: ClassVar[type[BaseModel]]
    output_schema: dict[str, Any]

    def __init__(self, version: str):
        if version not in self.versions:
            raise ValueError(f"{self.name} has no version {version!r}")
        self.version = version
        self.schema_name = f"{self.name}_{version}"
        self.template: PromptTemplate = load_template(self.folder / f"{version}.txt")

    def __repr__(self) -> str:
        return f"<judge profile {self.name}@{self.version}>"

    def render(
        self, request: JudgeRequest, examples: WorkedExamples | None = None
    ) -> RenderedPrompt:
        return render_prompt(self.template, request, examples=examples)

    def parse(self, text: str, request: JudgeRequest | None = None) -> Any:
        raw = validate(self.raw_model, extract_json(text))
        self.check(raw, request)
        return raw

    def check(self, raw: Any, request: JudgeRequest | None) -> None:
        """Checks beyond the schema; raise OutputError. None by default."""

    def coerce(self, raw: Any) -> Any:
        """normalize() takes what parse() returned, or the same data as a plain dict."""
        return raw if isinstance(raw, self.raw_model) else validate(self.raw_model, raw)

    def normalize(self, raw: Any, request: JudgeRequest) -> Normalized:  # pragma: no cover
        raise NotImplementedError


def place_claims(texts: Sequence[str], answer: str) -> list[tuple[tuple[int, int] | None, str]]:
    """Where each claim text stands in the answer, in order: (span, the answer's own words) or
    (None, the text as the judge gave it). A repeated claim text goes to its next occurrence."""
    placed, hint = [], 0
    for text in texts:
        span = locate_in_answer(text, answer, hint)
        if span:
            hint = span[1]
        placed.append((span, answer[span[0]:span[1]] if span else text))
    return placed


def claim_ids(given: Sequence[str | None]) -> list[str]:
    """The model's claim ids when every one is non-blank and unique; otherwise c1, c2, ..."""
    cleaned = [(value or "").strip() for value in given]
    if all(cleaned) and len(set(cleaned)) == len(cleaned):
        return cleaned
    return [f"c{number}" for number in range(1, len(given) + 1)]
