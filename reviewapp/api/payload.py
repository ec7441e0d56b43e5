"""The ingest payload as the API (and the MCP server) accept it: DESIGN.md's request plus what an
agent sends, fields added, none renamed.

- a passage of `kind: "tool"` is a tool call's output (reviewapp.tools): `tool_name`, `call_id`,
  `arguments`, and `output` (text or any JSON value) or `text`. It reaches the judge as an ordinary
  passage whose header names the call.
- `session_id` makes the answer a turn of a conversation (selectors.session_turns).

The judges library keeps its own request (judges.types.JudgeRequest), which this extends: what the
judge reads is the same either way. The classes keep the names of those they extend because the
OpenAPI document, which clients generate code from, names its schemas after them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from judges import types
from reviewapp import tools

MAX_TOOL_FIELD_CHARS = 200


def _kind(info: ValidationInfo) -> str:
    return info.data.get("kind", "document")


class Passage(types.Passage):
    kind: Literal["document", "tool"] = Field(default="document", description=(
        '"tool": a tool call\'s output (give tool_name, and output or text)'))
    tool_name: str | None = Field(default=None, min_length=1, max_length=MAX_TOOL_FIELD_CHARS,
                                  validate_default=True,
                                  description="the tool called (kind tool only; required there)")
    call_id: str | None = Field(default=None, min_length=1, max_length=MAX_TOOL_FIELD_CHARS,
                                description="the tool call's id (kind tool only)")
    arguments: dict[str, Any] | list[Any] | str | None = Field(
        default=None, description="the call's arguments, as the agent sent them (kind tool only)")
    output: Any = Field(default=None, exclude=True, description=(
        "the tool's output (kind tool only), instead of text: a string as it is, or a JSON value "
        "(or a string holding a JSON object or array) rendered as one line per record, its fields "
        "`key: value` joined by '; ', in the tool's order"))

    @model_validator(mode="before")
    @classmethod
    def _output_is_text(cls, data: Any) -> Any:
        is_tool = isinstance(data, dict) and data.get("kind") == "tool"
        if is_tool and data.get("output") is not None and "text" not in data:
            data = {**data, "text": tools.render_output(data["output"])}
        return data

    @field_validator("tool_name")
    @classmethod
    def _tool_name_for_tools(cls, value: str | None, info: ValidationInfo) -> str | None:
        if _kind(info) == "tool" and value is None:
            raise ValueError("required when kind is 'tool'")
        return cls._only_for_tools(value, info)

    @field_validator("call_id", "arguments")
    @classmethod
    def _only_for_tools(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and _kind(info) != "tool":
            raise ValueError("only for passages of kind 'tool'")
        if isinstance(value, str) and not value.isprintable() and info.field_name != "arguments":
            raise ValueError("must be printable text (no line breaks or control characters)")
        return value

    @field_validator("output")
    @classmethod
    def _output_once(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if _kind(info) != "tool":
            raise ValueError("only for passages of kind 'tool'")
        if "text" in info.data and info.data["text"] != tools.render_output(value):
            raise ValueError("give the tool's output once: as output or as text")
        return value

    @model_validator(mode="after")
    def _tool_header(self) -> Passage:
        if self.kind == "tool" and self.tool_name:
            header = tools.tool_header(tool_name=self.tool_name, call_id=self.call_id,
                                       arguments=self.arguments)
            self.tag = self.tag or header["tag"]
            self.title = self.title or header["title"]
            self.section = self.section or header["section"] or None
        return self


class JudgeRequest(types.JudgeRequest):
    """DESIGN.md's ingest payload with the fields agents add."""

    passages: list[Passage] = Field(max_length=types.MAX_PASSAGES)
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=(
            "the conversation this answer is a turn of: a client's answers sharing it are one"
            " session, in posting order; each turn's judge also reads the passages the earlier"
            " turns retrieved"
        ),
    )

    @field_validator("session_id")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and (not value.isprintable() or value != value.strip()):
            raise ValueError("must be printable text without leading or trailing whitespace")
        return value
