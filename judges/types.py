"""The judge contract: the ingest request and the normalized judge result.

Field names follow ../shared/DESIGN.md exactly; the API, the exports and the tests share them.
Everything here is plain pydantic so `judges` stays usable without Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

Label = Literal["SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"]
LABELS: tuple[str, ...] = ("SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED")
# Labels that mean "a human should look at this claim".
FLAGGED_LABELS: frozenset[str] = frozenset({"PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"})
# How bad a label is, the one order everything uses: the checks only ever lower a label along it,
# routing reviews the worst first, a highlight covering several claims takes the worst one's colour.
# CONTRADICTED is worst: the passages say otherwise, where UNSUPPORTED only lacks their backing.
LABEL_SEVERITY: dict[str, int] = {
    "SUPPORTED": 0,
    "PARTIALLY_SUPPORTED": 1,
    "UNSUPPORTED": 2,
    "CONTRADICTED": 3,
}
# The labels of a claim the passages do not back at all: its quote is only the closest text there
# is.
NOT_SUPPORTED_LABELS: frozenset[str] = frozenset({"UNSUPPORTED", "CONTRADICTED"})

Verdict = Literal["GROUNDED", "MOSTLY_GROUNDED", "UNGROUNDED"]
VERDICTS: tuple[str, ...] = Verdict.__args__  # type: ignore[attr-defined]
VERDICT_SEVERITY: dict[str, int] = {"GROUNDED": 0, "MOSTLY_GROUNDED": 1, "UNGROUNDED": 2}


def worse_label(*labels: str) -> str:
    """The worst of the labels given (LABEL_SEVERITY)."""
    return max(labels, key=LABEL_SEVERITY.__getitem__)


def worse_verdict(*verdicts: str) -> str:
    """The least grounded of the verdicts given (VERDICT_SEVERITY)."""
    return max(verdicts, key=VERDICT_SEVERITY.__getitem__)

Category = Literal[
    "price", "age", "document", "program", "process", "date", "quote", "citation",
    "statistic", "entity", "provenance", "other",
]
CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]
Match = Literal["exact", "normalized", "fuzzy", "not_found"]
FabricationKind = Literal["quote", "citation", "statistic", "entity", "date"]
FABRICATION_KINDS: tuple[str, ...] = FabricationKind.__args__  # type: ignore[attr-defined]

# Caps keep one request from exhausting a worker; they are generous for real RAG payloads.
MAX_ANSWER_CHARS = 50_000
MAX_PASSAGE_CHARS = 100_000
MAX_PASSAGES = 100
MAX_PASSAGE_ID_CHARS = 100
MAX_TURNS = 50

Span = tuple[int, int]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Turn(_Strict):
    role: Literal["user", "assistant", "system"]
    content: str = Field(max_length=MAX_ANSWER_CHARS)


def passage_id_problem(pid: str) -> str | None:
    """Why `pid` cannot name a passage, or None when it can: any printable text up to
    MAX_PASSAGE_ID_CHARS, as retrievers emit ("doc-17#3"). An id is printed in a prompt's label
    line (judges.profiles.render), so it holds no line break and no `<<<` / `>>>`, which mark
    the data delimiters there."""
    if not pid.strip():
        return "must not be blank"
    if len(pid) > MAX_PASSAGE_ID_CHARS:
        return f"must be at most {MAX_PASSAGE_ID_CHARS} characters"
    if pid != pid.strip():
        return "must not start or end with whitespace"
    if not pid.isprintable():
        return "must be printable text (no line breaks or control characters)"
    if "<<<" in pid or ">>>" in pid:
        return (
            "must not contain '<<<' or '>>>' (they mark the data delimiters in the judge's prompt)"
        )
    return None


class Passage(_Strict):
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PASSAGE_ID_CHARS,
        description="printable text, no leading or trailing whitespace, no '<<<' or '>>>'; "
        "unique in the request; P1..Pn by position when left out",
    )
    text: str = Field(min_length=1, max_length=MAX_PASSAGE_CHARS)
    tag: str | None = Field(default=None, max_length=200)
    agency: str | None = Field(default=None, max_length=200)
    title: str | None = Field(default=None, max_length=500)
    section: str | None = Field(default=None, max_length=200)
    source_url: str | None = Field(default=None, max_length=2000)
    # The name retrievers give source_url; stored as source_url (so never dumped under its own
    # name).
    url: str | None = Field(
        default=None,
        max_length=2000,
        exclude=True,
        description="the same as source_url (the name retrievers use); give one, or both equal",
    )
    fetched_at: str | None = Field(
        default=None, max_length=40, description="ISO 8601 date or datetime"
    )
    # What the retriever said of the passage: stored, shown to reviewers and exported, never judged.
    score: float | None = Field(default=None, strict=True, allow_inf_nan=False,
                                description="the retriever's relevance score, a finite number")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="the retriever's metadata, a JSON object"
    )

    @field_validator("id")
    @classmethod
    def _usable_id(cls, value: str | None) -> str | None:
        if value is not None and (problem := passage_id_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("url")
    @classmethod
    def _one_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        source_url = info.data.get("source_url")
        if value is not None and source_url is not None and source_url != value:
            raise ValueError(
                "differs from source_url; url is another name for it: give one, or both equal"
            )
        return value

    @model_validator(mode="after")
    def _url_is_source_url(self) -> Passage:
        if self.source_url is None and self.url is not None:
            self.source_url = self.url
        return self

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("fetched_at")
    @classmethod
    def _iso_date(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            date.fromisoformat(value)
        except ValueError:
            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise ValueError("must be an ISO 8601 date or datetime, e.g. 2026-08-16") from None
        return value


def _nul_paths(value: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    if isinstance(value, dict):
        return [
            p for k, v in value.items() for p in (_nul_paths(k, path) or _nul_paths(v, (*path, k)))
        ]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _nul_paths(v, (*path, i))]
    return []


class JudgeRequest(_Strict):
    """DESIGN.md's ingest payload. Only `answer` and `passages[].text` are required."""

    external_id: str | None = Field(default=None, min_length=1, max_length=200)
    question: str = Field(default="", max_length=MAX_ANSWER_CHARS)
    prior_turns: list[Turn] = Field(default_factory=list, max_length=MAX_TURNS)
    # An empty list is allowed: a RAG system that retrieved nothing and answered anyway is the
    # plainest hallucination there is, and must reach review rather than bounce with a 400.
    passages: list[Passage] = Field(max_length=MAX_PASSAGES)
    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    metadata: dict[str, Any] = Field(default_factory=dict)
    profile: str | None = Field(default=None, max_length=100)

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        # NUL is never text, and Postgres cannot store it: refuse it up front, naming each field.
        # (Checked on the request, not on each part, so the judges library itself stays liberal.)
        paths = _nul_paths(data) if isinstance(data, dict) else []
        if paths:
            raise ValidationError.from_exception_data(cls.__name__, [
                {"type": "value_error", "loc": path or ("body",), "input": "\x00",
                 "ctx": {"error": "must not contain NUL (\\u0000) characters"}}
                for path in paths
            ])
        return data

    @field_validator("question", mode="before")
    @classmethod
    def _null_question(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("answer")
    @classmethod
    def _answer_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("passages")
    @classmethod
    def _passage_ids(cls, passages: list[Passage]) -> list[Passage]:
        # Ids default to P1..Pn by position, so a client may omit them.
        for position, passage in enumerate(passages, start=1):
            if passage.id is None:
                passage.id = f"P{position}"
        ids = [p.id for p in passages]
        duplicates = sorted({pid for pid in ids if ids.count(pid) > 1})
        if duplicates:
            raise ValueError(f"passage ids must be unique; repeated: {', '.join(duplicates)}")
        return passages

    def passage(self, pid: str) -> Passage | None:
        return next((p for p in self.passages if p.id == pid), None)


class Difference(BaseModel):
    """Words by which the claim and this evidence's text differ, as the judge's aligner read them
    (offline/align): offsets only, never the words themselves, so nothing is shown that is not in
    the answer or the passage."""

    kind: str  # offline/align Difference.kind: number, entity, negation_added, swap, opposite, ...
    span: Span | None = None  # into the passage text, inside the evidence span; None: nothing there
    answer_span: Span | None = (
        None  # into the answer text, inside the claim's span; None: nothing there
    )


class Evidence(BaseModel):
    passage_id: str
    quote: str
    span: Span | None = None  # into the passage text; None when the quote was not found
    match: Match = "not_found"
    # Added beside DESIGN.md's fields: what the judge found differing between the claim and this
    # text. Optional: judges that do not align words (the LLM profiles) leave it empty.
    differences: list[Difference] = Field(default_factory=list)


class Claim(BaseModel):
    id: str
    text: str
    answer_span: Span | None = None  # into the answer text
    label: Label
    category: Category = "other"
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str = ""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class Fabrication(BaseModel):
    kind: FabricationKind
    text: str
    answer_span: Span | None = None
    reason: str = ""


class Omission(BaseModel):
    text: str
    passage_id: str | None = None
    span: Span | None = None


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class JudgeInfo(BaseModel):
    profile: str
    prompt_version: str  # "v3", or "v3+ex2" with worked examples (judges.examples)
    backend: Literal["openai", "offline"]
    model: str
    # Added beside DESIGN.md's fields: the tag of the worked examples the prompt carried, if any.
    examples: str | None = None
    latency_ms: int = 0
    attempts: int = 1
    usage: Usage = Field(default_factory=Usage)


class JudgeResult(BaseModel):
    verdict: Verdict
    grounding_score: float = Field(ge=0.0, le=1.0)
    claims: list[Claim] = Field(default_factory=list)
    fabrications: list[Fabrication] = Field(default_factory=list)
    omissions: list[Omission] = Field(default_factory=list)
    rewrite_note: str = ""
    judge: JudgeInfo


# --- what the engine and its backends exchange (judges.engine runs them)
# ---------------------------

class JudgeError(Exception):
    """A judge call that produced no usable result.

    `transient` errors (connection trouble, 429, 5xx, timeouts) are worth retrying later;
    permanent ones (bad output after repair, refusal, misconfiguration) are not.
    """

    def __init__(
        self, message: str, *, transient: bool = False, attempts: int = 1, raw_output: str = ""
    ):
        super().__init__(message)
        self.transient = transient
        self.attempts = attempts
        self.raw_output = raw_output


@dataclass(frozen=True)
class JudgeOutput:
    result: JudgeResult
    raw_output: str  # what the model (or the offline judge) produced, kept for the audit trail


@dataclass(frozen=True)
class JudgeIdentity:
    """Which judge a configuration runs, known before the call so a run can be recorded first."""

    profile: str
    prompt_version: str  # with the examples' tag when it carries examples: "v3+ex2"
    backend: str
    model: str
    examples: str | None = None  # the tag of the worked examples it carries, if any
