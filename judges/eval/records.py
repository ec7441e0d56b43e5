"""The labelled data: its format and validation (`load_dataset`, `parse_record`), what its labels
mean, and the tune/report halves."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.types import JudgeRequest


# --- labels ------------------------------------------------------------------------------------


def span_label_is_positive(label: str) -> bool:
    """FaithBench's rule: `Unwanted`, `Unwanted.Intrinsic`, `Unwanted.Extrinsic` and
    `Questionable` are hallucinations; `Benign`, `Unspecified` and anything else are not counted."""
    return label.startswith("Unwanted") or label == "Questionable"


# Sentence labels that mean "this sentence is fine" (the negative class). The label is compared
# after lowercasing and turning spaces and hyphens into underscores; every other label, such as
# "unsupported", "not_supported", "partially_supported", "contradicted", "hallucinated",
# "ungrounded" or "not_attributable", is positive.
#
# | label (normalized)                              | meaning in the sets that use it   |
# |-------------------------------------------------|-----------------------------------|
# | supported, fully_supported                      | claim-verification sets           |
# | grounded                                        | grounding maps (seed 004)         |
# | faithful, consistent, factual, accurate, correct| summarization and QA faithfulness |
# | attributable, entailed, entailment              | attribution / NLI sets            |
# | not_hallucinated, no_hallucination, ok, true    | binary "is it fine" flags         |
SENTENCE_NEGATIVE_LABELS: frozenset[str] = frozenset(
    {
        "supported", "fully_supported", "grounded", "faithful", "consistent", "factual", "accurate",
        "correct", "attributable", "entailed", "entailment", "not_hallucinated", "no_hallucination",
        "ok", "true",
    }
)


def normalize_label(label: str) -> str:
    return "_".join(label.strip().lower().replace("-", " ").split())


def sentence_label_is_positive(label: str) -> bool:
    """True when a gold sentence label means "not supported by the passages"."""
    return normalize_label(label) not in SENTENCE_NEGATIVE_LABELS


# FaithBench's `meta.metadata` keys, with the names the paper uses. Values are scores or 0/1
# votes where below 0.5 means "hallucinated".
DETECTORS: tuple[tuple[str, str], ...] = (
    ("gpt_4o", "GPT-4o"),
    ("gpt-4-turbo", "GPT-4-Turbo"),
    ("gpt-3.5-turbo", "GPT-3.5-Turbo"),
    ("hhem-2.1", "HHEM-2.1"),
    ("hhem-2.1-english", "HHEM-2.1-English"),
    ("hhemv1", "HHEM-1"),
    ("trueteacher", "TrueTeacher"),
    ("true_nli", "TRUE-NLI"),
)
DETECTOR_THRESHOLD = 0.5
LEXICAL_THRESHOLD = 0.5


# --- records -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldSpan:
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Record:
    id: str
    line: int
    dataset: str
    task_type: str
    request: JudgeRequest
    hallucinated: bool
    spans: tuple[GoldSpan, ...]
    sentence_labels: tuple[GoldSpan, ...] | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class Skipped:
    line: int
    id: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "id": self.id, "reason": self.reason}


class InvalidRecord(ValueError):
    pass


class DatasetError(Exception):
    """The dataset file itself cannot be read."""


def load_dataset(path: str | Path, limit: int | None = None) -> tuple[list[Record], list[Skipped]]:
    """Valid records in file order (at most `limit` of them) and every line that was not one.

    Blank lines are not records. A repeated id is skipped, naming the line of its first use.
    """
    records: list[Record] = []
    skipped: list[Skipped] = []
    first_line: dict[str, int] = {}
    try:
        handle = open(path, encoding="utf-8")
    except OSError as error:
        raise DatasetError(f"cannot read {path}: {error}") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if limit is not None and len(records) >= limit:
                    break
                if not line.strip():
                    continue
                record_id = None
                try:
                    obj = json.loads(line)
                    if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"]:
                        record_id = obj["id"]
                    record = parse_record(obj, number)
                except json.JSONDecodeError as error:
                    skipped.append(Skipped(number, None, f"not valid JSON: {error}"))
                    continue
                except InvalidRecord as error:
                    skipped.append(Skipped(number, record_id, str(error)))
                    continue
                if record.id in first_line:
                    skipped.append(
                        Skipped(
                            number,
                            record.id,
                            f"duplicate id (first used on line {first_line[record.id]})",
                        )
                    )
                    continue
                first_line[record.id] = number
                records.append(record)
        except UnicodeDecodeError as error:
            raise DatasetError(f"{path} is not UTF-8: {error}") from None
    return records, skipped


def parse_record(obj: Any, line: int = 0) -> Record:
    """One dataset line as a Record; InvalidRecord says what is wrong with it."""
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {type(obj).__name__}")
    record_id = _required(obj, "id", str)
    if not record_id:
        raise InvalidRecord("id: must not be empty")
    task_type = _required(obj, "task_type", str)
    if not task_type:
        raise InvalidRecord("task_type: must not be empty")
    dataset = obj.get("dataset", "")
    if not isinstance(dataset, str):
        raise InvalidRecord("dataset: must be a string")
    answer = _required(obj, "answer", str)
    hallucinated = _required(obj, "hallucinated", bool)
    passages = _required(obj, "passages", list)
    question = obj.get("question")
    if question is not None and not isinstance(question, str):
        raise InvalidRecord("question: must be a string or null")
    meta = obj.get("meta", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidRecord("meta: must be an object")
    spans = _spans(_required(obj, "spans", list), answer, "spans", with_text=True)
    raw_sentences = obj.get("sentence_labels")
    if raw_sentences is not None and not isinstance(raw_sentences, list):
        raise InvalidRecord("sentence_labels: must be a list or null")
    sentences = (
        None
        if raw_sentences is None
        else _spans(raw_sentences, answer, "sentence_labels", with_text=False)
    )
    try:
        request = JudgeRequest.model_validate(
            {"question": question or "", "passages": passages, "answer": answer}
        )
    except ValidationError as error:
        raise InvalidRecord(describe_validation_error(error)) from None
    return Record(
        id=record_id, line=line, dataset=dataset, task_type=task_type, request=request,
        hallucinated=hallucinated, spans=spans, sentence_labels=sentences, meta=meta,
    )


def _required(obj: dict[str, Any], key: str, kind: type) -> Any:
    if key not in obj or obj[key] is None:
        raise InvalidRecord(f"{key}: required")
    value = obj[key]
    # bool is an int in Python; neither stands in for the other here.
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InvalidRecord(f"{key}: must be {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


_KIND_NAMES = {
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    int: "an integer",
}


def _spans(raw: list[Any], answer: str, name: str, *, with_text: bool) -> tuple[GoldSpan, ...]:
    spans = []
    for position, item in enumerate(raw):
        where = f"{name}[{position}]"
        if not isinstance(item, dict):
            raise InvalidRecord(f"{where}: expected an object")
        start, end, label = item.get("start"), item.get("end"), item.get("label")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise InvalidRecord(f"{where}: start and end must be integers")
        if not 0 <= start < end <= len(answer):
            raise InvalidRecord(
                f"{where}: [{start}, {end}) is not a non-empty span of the answer ({len(answer)}"
                " chars)"
            )
        if not isinstance(label, str):
            raise InvalidRecord(f"{where}.label: must be a string")
        if with_text and "text" in item and item["text"] != answer[start:end]:
            raise InvalidRecord(
                f"{where}.text: differs from answer[{start}:{end}] (offsets must point into the"
                " answer)"
            )
        spans.append(GoldSpan(start, end, label))
    return tuple(spans)


def describe_validation_error(error: ValidationError) -> str:
    """One clause per problem, naming the field as a client writes it: passages[0].text."""
    parts = []
    for problem in error.errors():
        path = ""
        for part in problem["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        parts.append(f"{path or '(record)'}: {problem['msg']}")
    return "; ".join(parts)


# --- tune / report halves ----------------------------------------------------------------------

# Rules are tuned on one half of a dev set and figures are reported on the other. A record's half
# follows from its passages, not its id: FaithBench has ten summaries of each source, and a source
# whose summaries sat in both halves would leak what was tuned into what is reported.
SPLITS: tuple[str, ...] = ("tune", "report")


def split_of(key: str) -> str:
    """'tune' or 'report', by a stable hash of `key` (the same on every machine and run)."""
    return SPLITS[hashlib.sha256(key.encode("utf-8")).digest()[0] & 1]


def source_key(passage_texts: Iterable[str]) -> str:
    """What identifies a record's source: its passage texts, in order."""
    return hashlib.sha256("\x1e".join(passage_texts).encode("utf-8")).hexdigest()


def record_split(request: JudgeRequest) -> str:
    return split_of(source_key(passage.text for passage in request.passages))


def select_split(records: Sequence[Record], split: str) -> list[Record]:
    """The records of one half ('tune' or 'report'), or all of them ('all')."""
    if split == "all":
        return list(records)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: expected one of {SPLITS + ('all',)}")
    return [record for record in records if record_split(record.request) == split]
