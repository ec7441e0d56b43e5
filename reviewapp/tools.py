"""Tool outputs as evidence: how an agent's tool call becomes a passage the judge reads.

A tool passage carries the tool's name, the call's id and arguments, and its output. The output is
the passage's text: a string as it came, a JSON value (or a string holding one) rendered to one
line per record, `key: value; key: value` in the order the tool wrote them, so the same output
always gives the same text and an evidence span into it always points at the same words. The
judge sees a tool passage as an ordinary passage whose header says which call it came from
(`tool_header`): data, never instructions, like any passage.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

MAX_ARGUMENTS_CHARS = 300  # in the header the judge and reviewers read; stored whole
TOOL_TAG = "tool result"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return str(value)  # as the tool wrote it: "1.00" stays "1.00"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e16 else repr(value)
    return str(value)


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _fields(record: dict, prefix: str, lines: list[str], where: str = "") -> list[str]:
    """`key: value` for each leaf of `record` (nested objects by dotted key, lists of plain values
    joined by commas); each object inside a list becomes a line of its own, added to `lines` and
    labelled with its whole path (`where`: the path of `record` itself)."""
    fields = []
    for key, value in record.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            fields.extend(_fields(value, path, lines, where) if value else [f"{path}: {{}}"])
        elif isinstance(value, list) and all(map(_is_leaf, value)):
            fields.append(f"{path}: {', '.join(map(_scalar, value))}" if value else f"{path}: []")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                label = f"{where}.{path}[{index}]" if where else f"{path}[{index}]"
                _record_lines(item, label, lines)
        else:
            fields.append(f"{path}: {_scalar(value)}")
    return fields


def _record_lines(value: Any, label: str, lines: list[str]) -> None:
    """One line for `value` (`label: ` first when given): an object's fields joined by `; `."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            _record_lines(item, f"{label}[{index}]" if label else "", lines)
        return
    at = len(lines)
    lines.insert(at, "")  # this record's line comes before the records nested in it
    text = (
        "; ".join(_fields(value, "", lines, label)) if isinstance(value, dict) else _scalar(value)
    )
    lines[at] = f"{label}: {text}" if label else text


def parse_json_text(text: str) -> Any | None:
    """The JSON object or array a tool's text output holds (numbers kept as written), or None when
    it holds none: plain text stays plain text."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped, parse_float=Decimal)
    except ValueError:
        return None


def render_output(output: Any) -> str:
    """A tool's output as passage text: a plain string as it is; a JSON value, or a string holding a
    JSON object or array, as one line per record, its fields `key: value` joined by `; ` in the
    order the tool wrote them (`route: 12; fare.senior: 1.00`; an object inside a list gets its own
    line, `results[0]: title: Fares; price: 2.50`), so a record reads as one sentence."""
    if isinstance(output, str):
        parsed = parse_json_text(output)
        if parsed is None:
            return output
        output = parsed
    lines: list[str] = []
    _record_lines(output, "", lines)
    return "\n".join(line for line in lines if line)


def call_signature(tool_name: str, arguments: Any) -> str:
    """`name(a=1, b="x")`, the call as reviewers and the judge read it (long arguments cut with
    …)."""
    if arguments in (None, {}, []):
        shown = ""
    elif isinstance(arguments, dict):
        shown = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
                          for key, value in arguments.items())
    elif isinstance(arguments, str):
        shown = arguments
    else:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(shown) > MAX_ARGUMENTS_CHARS:
        shown = shown[:MAX_ARGUMENTS_CHARS - 1] + "…"
    return f"{tool_name}({shown})"


def tool_header(*, tool_name: str, call_id: str | None, arguments: Any) -> dict[str, str]:
    """The header fields a tool passage is judged and shown with, where the client gave none."""
    return {"tag": TOOL_TAG, "title": call_signature(tool_name, arguments)[:500],
            "section": f"call {call_id}"[:200] if call_id else ""}
