"""Worked examples from human reviewers: few-shot beyond the anchors a profile's prompt already has.

An admin picks claims reviewers overturned; each becomes a WorkedExample (the claim, the passage
excerpt it was checked against, the label reviewers settled on and why). A JudgeConfig may carry
one set of them, `WorkedExamples`, whose `tag` ("ex2") joins the prompt version ("v3+ex2"), so a
run with examples never shares an identity (config_key, calibration row, export filter) with a
run without them, nor with a run carrying another set.

The examples are untrusted text (answers, passages and notes written by others): the renderer
puts each one in its own data block and draws the delimiter so it occurs in none of them.
Caps keep a set from crowding the answer being judged out of the model's context.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judges.types import Label

MAX_EXAMPLES = 8
MAX_CLAIM_CHARS = 600
MAX_EXCERPT_CHARS = 1_200
MAX_REASON_CHARS = 600
MAX_TOTAL_CHARS = 8_000  # all examples' text together


class WorkedExample(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: str = Field(min_length=1, max_length=MAX_CLAIM_CHARS)
    passage: str = Field(
        min_length=1, max_length=MAX_EXCERPT_CHARS, description="the relevant passage excerpt"
    )
    label: Label = Field(description="the correct label, as human reviewers decided it")
    judge_label: Label | None = Field(
        default=None, description="what the judge had said (the mistake to avoid)"
    )
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)

    def texts(self) -> list[str]:
        return [self.claim, self.passage, self.reason]


class WorkedExamples(BaseModel):
    """One frozen set of worked examples, named by `tag` (lowercase letters and digits)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tag: str = Field(pattern=r"^[a-z][a-z0-9]{0,15}$")
    items: tuple[WorkedExample, ...] = Field(min_length=1, max_length=MAX_EXAMPLES)

    @model_validator(mode="after")
    def _total_size(self) -> WorkedExamples:
        total = sum(len(text) for item in self.items for text in item.texts())
        if total > MAX_TOTAL_CHARS:
            raise ValueError(
                f"the examples hold {total} characters; at most {MAX_TOTAL_CHARS} fit in a prompt"
            )
        return self


def versioned(version: str, examples: WorkedExamples | None) -> str:
    """The prompt version a judge reports: "v3", or "v3+ex2" when it carries examples tagged ex2."""
    return f"{version}+{examples.tag}" if examples else version
