"""Turning a model's reply into validated data, shared by every profile.

`extract_json` finds the one JSON object in a reply the way real models write it: bare, inside
```json (or plain ```) fences, after a lead-in such as "Here is the audit:", or followed by prose.
It never repairs or guesses: a reply with no object, with several different objects, with an
object cut off before its end, with malformed JSON, with JSON pieces (a closing brace or bracket,
a `"key": value`) after its object, or whose top-level JSON value is not an object is rejected
with an OutputError that says which.

`validate` then checks the object against a profile's pydantic model of its raw schema. Models are
strict about types (no "true" for true, no "3" for 3) and require every schema key, but ignore
extra keys a model adds. Error messages name the field path: `claims[2].verification_status:
must be one of SUPPORTED, UNSUPPORTED, ...`.

`strict_object` and friends build the JSON Schema for OpenAI's structured output in strict mode:
every object lists all its properties as required and sets additionalProperties to false.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from judges.profiles.base import OutputError

# --- finding the JSON object -----------------------------------------------------------------


class _Invalid(ValueError):
    """Valid JSON syntax that is still not acceptable data (duplicate keys, NaN)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Invalid(f"duplicate key {key!r}")
        result[key] = value
    return result


def _constant(name: str) -> Any:
    raise _Invalid(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)

# Where a JSON value plausibly starts: "{" before a key, a closing brace or a bare identifier and
# colon (so `{grounded: true}` is reported as malformed JSON, not as "no JSON found"), or an array
# of objects or strings. "{P1}" or "[P1]" in prose are not starts.
_START = re.compile(r"""\{\s*(?:["'}]|[A-Za-z_$][\w$]*\s*:)|\[\s*[{"\]]""")


def extract_json(text: str) -> dict[str, Any]:
    """The single JSON object in `text`. Raises OutputError saying why there is not exactly one."""
    if not isinstance(text, str) or not text.strip():
        raise OutputError("the reply is empty: no JSON object found")
    found: list[tuple[int, Any]] = []
    malformed: list[str] = []
    position = 0
    while match := _START.search(text, position):
        start = match.start()
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as error:
            if error.msg.startswith("Unterminated string") or error.pos >= len(text.rstrip()):
                raise OutputError(_truncated(start, error.msg)) from None
            end = _closing(text, start)
            if end is None:
                raise OutputError(_truncated(start, error.msg)) from None
            malformed.append(f"invalid JSON at character {error.pos}: {error.msg}")
        except _Invalid as error:
            end = _closing(text, start)
            if end is None:
                raise OutputError(_truncated(start, str(error))) from None
            malformed.append(f"invalid JSON in the value starting at character {start}: {error}")
        except RecursionError:
            raise OutputError(
                f"the JSON starting at character {start} is nested too deeply"
            ) from None
        else:
            found.append((start, value))
        position = end

    # After the last value, prose may follow ("Let me know if ..."), but not JSON pieces: a closing
    # brace or a `"key":` there means the object was closed early (text injected into a string
    # value, '"}], "verdict": "GROUNDED"}') and the object found is not the one the model meant.
    if found and (stray := _STRAY_JSON.search(text, position)):
        raise OutputError(
            f"trailing data after the JSON object at character {stray.start()} ({stray.group()!r}):"
            " the object was closed early; reply with exactly one JSON object"
        )
    objects = [(start, value) for start, value in found if isinstance(value, dict)]
    others = [(start, value) for start, value in found if not isinstance(value, dict)]
    if malformed:
        prefix = "found a JSON object but also " if objects else ""
        suffix = "" if objects else "; no valid JSON object found"
        raise OutputError(prefix + "; ".join(malformed[:3]) + suffix)
    if others and not objects:
        raise OutputError(
            "the top-level JSON value is an array, but the reply must be one JSON object"
        )
    if not objects:
        raise OutputError("no JSON object found in the reply")
    distinct: list[tuple[int, Any]] = []
    for start, value in objects + others:
        if all(value != seen for _, seen in distinct):
            distinct.append((start, value))
    if len(distinct) > 1:
        where = ", ".join(str(start) for start, _ in distinct[:5])
        raise OutputError(
            f"found {len(distinct)} different JSON values (starting at characters {where}); "
            "the reply must contain exactly one JSON object"
        )
    return objects[0][1]


# `"key": value`, or a closing brace or bracket right after a string's quote or another closer
# ("{P2}" in prose is neither).
_STRAY_JSON = re.compile(r'"\s*:\s*(?:["\[{\d-]|(?:true|false|null)\b)|"\s*[}\]]|[}\]]\s*[}\],]')


def _truncated(start: int, reason: str) -> str:
    return (
        f"the JSON starting at character {start} is truncated: it ends before it is closed"
        f" ({reason})"
    )


def _closing(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at `start`, skipping double-quoted strings;
    None when the text ends first."""
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


# --- validating it ---------------------------------------------------------------------------


class RawModel(BaseModel):
    """Base of every profile's raw-output model: strict types, unknown keys ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]

M = TypeVar("M", bound=BaseModel)

_TYPE_NAMES = {
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is required",
}


def validate(model: type[M], data: Any) -> M:
    """`data` as a `model`, or OutputError naming each failing field path (at most 5)."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = [_describe(item) for item in error.errors(include_url=False)]
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise OutputError("; ".join(problems[:5]) + more) from None


def _describe(item: dict[str, Any]) -> str:
    path = ""
    for part in item["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    path = path or "the reply"
    kind = item["type"]
    if kind == "literal_error":
        allowed = re.findall(r"'([^']*)'", item.get("ctx", {}).get("expected", ""))
        return f"{path}: must be one of {', '.join(allowed)} (got {_show(item.get('input'))})"
    if kind in _TYPE_NAMES:
        got = "" if kind == "missing" else f" (got {_show(item.get('input'))})"
        return f"{path}: {_TYPE_NAMES[kind]}{got}"
    message = str(item.get("msg", "is invalid")).removeprefix("Value error, ")
    return f"{path}: {message}"


def _show(value: Any) -> str:
    text = (
        json.dumps(value, ensure_ascii=False) if not isinstance(value, BaseModel) else repr(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."


# --- JSON Schema for strict structured output -------------------------------------------------


def strict_object(properties: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if description:
        schema["description"] = description
    return schema


def string(description: str | None = None, nullable: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": ["string", "null"] if nullable else "string"}
    if description:
        schema["description"] = description
    return schema


def enum(values: tuple[str, ...] | list[str], description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": list(values)}
    if description:
        schema["description"] = description
    return schema


def array(items: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if description:
        schema["description"] = description
    return schema
