"""The oracle harness (issue 27, item 6): how much the deterministic checks (judges/checks/) take
away from a judge LLM that is right, and how much they still catch behind one that is always wrong.

A fake LLM (tests/fake_openai.FakeOpenAI, real HTTP) answers the real `openai` backend's prompt for
the profile (`--profile`, default claim_audit@v1), so every record goes through judges.judge():
the profile's parser and normalizer, evidence location, then judges.checks.apply.apply_checks.

* `perfect`: the fake labels each answer sentence as the gold says (HAGRID: the record's sentence
  SUPPORTED when not hallucinated, else UNSUPPORTED; FaithBench: a sentence is UNSUPPORTED when it
  overlaps an Unwanted*/Questionable span, else SUPPORTED) and quotes, for each, the passage
  sentence closest to it (most shared content words), copied exactly. Figure: the share of the
  gold-supported sentences the checks lowered (the final result has a claim over the sentence that
  is not SUPPORTED, a fabrication over it, or no claim over it). Target <= 5%.
* `always`: every sentence SUPPORTED with the closest-sentence quote. Figure: the share of the
  gold-unsupported sentences the checks still flag. Target >= 85%.

Both are printed side by side per dataset and split (judges.eval.record_split: `tune` is what
rules may be tuned on, `report` is not), with the notes the checks appended to the lowered (or,
in `always`, the missed) sentences' claims, grouped by their first words.

    python bench/oracle.py                          # report half, claim_audit@v1
    python bench/oracle.py --split all --examples   # both halves, 5 examples per note group
    python bench/oracle.py --limit 40 --no-record   # a smoke run
    python bench/oracle.py --style tokenized        # lowercased, PTB-tokenized (CNN/DailyMail
    style)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Appended, not prepended: PYTHONPATH can put another judges/ first, to measure a baseline.
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.checklist import DATA, DATASETS  # noqa: E402
from bench.minimal_edits import tokenized  # noqa: E402
from bench.results import record as record_figure  # noqa: E402
from judges.engine import JudgeConfig, JudgeError, judge  # noqa: E402
from judges.eval import Record, load_dataset, record_split, span_label_is_positive  # noqa: E402
from judges.text import content_words, split_sentences  # noqa: E402
from judges.types import JudgeRequest, JudgeResult  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402
from tests.judges.redteam import _render, read_prompt  # noqa: E402

MODES = ("perfect", "always")
LOWERED_TARGET = 0.05  # perfect: at most this share of gold-supported sentences lowered
CAUGHT_TARGET = 0.85  # always: at least this share of gold-unsupported sentences flagged
FAKE_EXPLANATION = (
    "checked"  # what tests.judges.redteam._render gives every claim; notes come after it
)


# --- gold
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldSentence:
    start: int
    end: int
    supported: bool


def gold_sentences(
    answer: str, hallucinated: bool, spans: Sequence[tuple[int, int, str]]
) -> list[GoldSentence]:
    """The answer's sentences (judges.text.split_sentences) with their gold class. With positive
    spans (Unwanted*, Questionable) a sentence is unsupported when it overlaps one; a hallucinated
    record without any (HAGRID: one claim, judged as a whole) has every sentence unsupported."""
    positive = [(s, e) for s, e, label in spans if span_label_is_positive(label)]
    out = []
    for start, end in split_sentences(answer):
        if not _WORDY.search(_MARKERS.sub("", answer[start:end])):
            # citation markers alone ("[1][2]"), split off the sentence they cite: no claim
            continue
        if positive:
            supported = not any(s < end and start < e for s, e in positive)
        else:
            supported = not hallucinated
        out.append(GoldSentence(start, end, supported))
    return out


_MARKERS = re.compile(r"\[\d+(?:[,\-–]\s*\d+)*\]")
_WORDY = re.compile(r"[^\W_]")


def record_gold(record: Record) -> list[GoldSentence]:
    return gold_sentences(record.request.answer, record.hallucinated,
                          [(s.start, s.end, s.label) for s in record.spans])


STYLES = ("plain", "tokenized")


def _joined(styled: str, gap: str, sentence: str = "") -> str:
    """`styled` followed by `gap` tokenized, then `sentence`: one space between pieces, a newline
    where the gap had one (a list item opens its line in either style)."""
    words = tokenized(gap).strip()
    glue = "\n" if "\n" in gap else " "
    for piece in (words, sentence):
        if piece:
            styled = f"{styled}{glue}{piece}" if styled else piece
            glue = " "
    return styled


def styled_record(record: Record, style: str) -> tuple[JudgeRequest, list[GoldSentence]]:
    """The record's request and gold sentences in `style` (bench.minimal_edits.STYLES): for
    `tokenized`, question, passages and answer lowercased and PTB-tokenized as CNN/DailyMail ships
    text, each gold sentence tokenized on its own so that it keeps its class (what lies between
    sentences, citation markers alone, is tokenized with them)."""
    gold = record_gold(record)
    if style == "plain":
        return record.request, gold
    answer, styled, cursor, out = record.request.answer, "", 0, []
    for g in gold:
        sentence = tokenized(answer[g.start:g.end]).strip()
        styled = _joined(styled, answer[cursor:g.start], sentence)
        out.append(GoldSentence(len(styled) - len(sentence), len(styled), g.supported))
        cursor = g.end
    styled = _joined(styled, answer[cursor:])
    request = record.request
    passages = [p.model_copy(update={"text": tokenized(p.text)}) for p in request.passages]
    return request.model_copy(update={"answer": styled, "passages": passages,
                                      "question": tokenized(request.question or "")}), out


# --- the fake LLM
# ----------------------------------------------------------------------------------


def passage_sentences(request: JudgeRequest) -> list[tuple[str, str]]:
    """(passage id, sentence) for every sentence of every passage, as the passage has it."""
    return [(p.id, p.text[s:e]) for p in request.passages for s, e in split_sentences(p.text)]


def closest(sentence: str, pool: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The pool item sharing most content words with `sentence` (the first on a tie)."""
    words = set(content_words(sentence))
    best, best_shared = pool[0] if pool else ("P1", ""), -1
    for item in pool:
        shared = len(words & set(content_words(item[1])))
        if shared > best_shared:
            best, best_shared = item, shared
    return best


@dataclass
class OracleLLM:
    """FakeOpenAI `default`. Before each judge call the harness sets `request` and `gold` (the
    answer's gold sentences); the fake then answers the profile's prompt: in `perfect` mode each
    sentence as its gold class says, in `always` mode every sentence SUPPORTED; a SUPPORTED
    sentence quotes the closest passage sentence exactly. A sentence of the prompt is matched to
    the gold sentence it overlaps in the answer (found from where the previous one ended)."""

    mode: str = "perfect"
    request: JudgeRequest | None = None
    gold: list[GoldSentence] = field(default_factory=list)
    requests: int = 0
    # claim_audit only: with 2, a SUPPORTED sentence also quotes the passage sentence that holds
    # most of the content words the closest one lacks (synthesis across sentences), if any does.
    max_quotes: int = 1

    def __call__(self, body: dict) -> Reply:
        self.requests += 1
        prompt = read_prompt(body)
        answer = self.request.answer
        pool = passage_sentences(self.request)
        verdicts, extra, cursor = [], [], 0
        for sentence in prompt.sentences:
            supported = self._gold_of(sentence, answer, cursor)
            found = answer.find(sentence, cursor)
            if found >= 0:
                cursor = found + len(sentence)
            if self.mode == "always" or supported:
                pid, quote = closest(sentence, pool)
                verdicts.append(("SUPPORTED", pid, quote))
                extra.append(self._second_quote(sentence, quote, pool))
            else:
                verdicts.append(("UNSUPPORTED", pool[0][0] if pool else "P1", ""))
                extra.append(None)
        reply = _render(prompt, verdicts)
        if prompt.profile == "claim_audit":
            for claim, more in zip(reply["claims"], extra):
                if more is not None:
                    claim["quotes"].append({"passage_id": more[0], "quote": more[1]})
        return Reply.ok(json.dumps(reply))

    def _second_quote(
        self, sentence: str, first: str, pool: Sequence[tuple[str, str]]
    ) -> tuple[str, str] | None:
        if self.max_quotes < 2:
            return None
        missing = set(content_words(sentence)) - set(content_words(first))
        if not missing:
            return None
        best = max(pool, key=lambda item: len(missing & set(content_words(item[1]))), default=None)
        if best is None or best[1] == first or not missing & set(content_words(best[1])):
            return None
        return best

    def _gold_of(self, sentence: str, answer: str, cursor: int) -> bool:
        found = answer.find(sentence, cursor)
        if found < 0:
            found = answer.find(sentence)
        if found >= 0:
            end = found + len(sentence)
            over = [g for g in self.gold if g.start < end and found < g.end]
            if over:
                return all(g.supported for g in over)
        # Not found verbatim (a profile that rewrites the sentence): the gold sentence most like it.
        words = set(content_words(sentence))
        best = max(
            self.gold,
            key=lambda g: len(words & set(content_words(answer[g.start : g.end]))),
            default=None,
        )
        return True if best is None else best.supported


def openai_config(fake: FakeOpenAI, profile: str) -> JudgeConfig:
    return JudgeConfig(
        backend="openai",
        profile=profile,
        model="fake-judge",
        base_url=fake.base_url,
        api_key="test",
        timeout_s=10.0,
        retry_budget_s=30.0,
        max_attempts=2,
    )


class Judges:
    """The two judges the control harnesses compare, as one context manager: `offline` (the
    offline judge, then the checks, through judges.judge) and `always` (the openai backend against
    an OracleLLM in `always` mode, so the checks alone decide). `run(name, request)` returns the
    final result, or None when the judge failed."""

    NAMES = ("offline", "always")

    def __init__(self, profile: str = "claim_audit@v1", max_quotes: int = 1) -> None:
        self.profile = profile
        self.llm = OracleLLM(mode="always", max_quotes=max_quotes)
        self.fake = FakeOpenAI(default=self.llm)

    def __enter__(self) -> Judges:
        self.fake.start()
        self.configs = {
            "offline": JudgeConfig(backend="offline"),
            "always": openai_config(self.fake, self.profile),
        }
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.fake.stop()

    def run(self, name: str, request: JudgeRequest) -> JudgeResult | None:
        self.llm.request, self.llm.gold = request, []
        try:
            return judge(request, self.configs[name]).result
        except JudgeError:
            return None


def base_explanation(name: str) -> str:
    """What the judge itself writes before the checks' notes: the fake's fixed text, or nothing."""
    return FAKE_EXPLANATION if name == "always" else ""


# --- reading a result
# --------------------------------------------------------------------------------


_NOTE_START = re.compile(r"(?<=[.!?)'\"”])\s+(?=[A-Z][\w-]*(?: [\w-]+){0,2} check: )")


def split_notes(explanation: str, base: str = FAKE_EXPLANATION) -> list[str]:
    """The notes the checks appended to a claim's explanation (each "<Name> check: ...")."""
    text = explanation.strip()
    if base and text.startswith(base):
        text = text[len(base):].strip()
    return [part.strip() for part in _NOTE_START.split(text) if part.strip()]


def note_group(note: str, words: int = 8) -> str:
    """A note's first words, with quoted words and passage ids blanked, so alike notes group."""
    note = re.split(r"(?<=\.)\s+(?=[A-Z])", note, maxsplit=1)[0]  # its first sentence
    text = re.sub(r"(?<!\w)'.*?'(?!\w)|\"[^\"]*\"|“[^”]*”", "'…'", note)
    text = re.sub(r"\bP\d+\b", "Px", text)
    text = re.sub(r"\d+(?:[.,]\d+)*", "N", text)
    return " ".join(text.split()[:words])


@dataclass(frozen=True)
class SentenceOutcome:
    kept: bool  # every claim over it SUPPORTED, at least one claim, no fabrication over it
    uncovered: bool  # no claim with an answer span over it
    labels: tuple[str, ...]
    notes: tuple[str, ...]


def sentence_outcome(
    result: JudgeResult, start: int, end: int, base: str = FAKE_EXPLANATION
) -> SentenceOutcome:
    claims = [
        c
        for c in result.claims
        if c.answer_span and c.answer_span[0] < end and start < c.answer_span[1]
    ]
    fabrications = [
        f
        for f in result.fabrications
        if f.answer_span and f.answer_span[0] < end and start < f.answer_span[1]
    ]
    notes = [n for c in claims for n in split_notes(c.explanation, base)]
    notes += [f"Fabrication: {f.reason or f.text}" for f in fabrications]
    kept = bool(claims) and all(c.label == "SUPPORTED" for c in claims) and not fabrications
    return SentenceOutcome(
        kept, not claims, tuple(c.label for c in claims), tuple(dict.fromkeys(notes))
    )


# --- the run
# -----------------------------------------------------------------------------------------


@dataclass
class Row:
    dataset: str
    record_id: str
    split: str
    mode: str
    sentence: str
    gold_supported: bool
    outcome: SentenceOutcome | None  # None: the judge failed
    error: str = ""

    @property
    def bad(self) -> bool:
        """perfect: a gold-supported sentence lowered; always: a gold-unsupported one not
        flagged."""
        if self.outcome is None:
            return False
        if self.mode == "perfect":
            return self.gold_supported and not self.outcome.kept
        return not self.gold_supported and self.outcome.kept


def run_records(
    records: Sequence[Record],
    dataset: str,
    mode: str,
    fake: FakeOpenAI,
    llm: OracleLLM,
    profile: str,
    style: str = "plain",
) -> list[Row]:
    config = openai_config(fake, profile)
    llm.mode = mode
    rows = []
    for record in records:
        request, gold = styled_record(record, style)
        llm.request, llm.gold = request, gold
        split = record_split(record.request)  # of the record as shipped: the halves stay the same
        answer = request.answer
        try:
            result = judge(request, config).result
        except JudgeError as error:
            rows += [
                Row(
                    dataset,
                    record.id,
                    split,
                    mode,
                    answer[g.start : g.end],
                    g.supported,
                    None,
                    str(error),
                )
                for g in gold
            ]
            continue
        rows += [Row(dataset, record.id, split, mode, answer[g.start:g.end], g.supported,
                     sentence_outcome(result, g.start, g.end)) for g in gold]
    return rows


@dataclass(frozen=True)
class Figures:
    supported: int  # gold-supported sentences judged
    lowered: int  # ... of them not kept
    unsupported: int  # gold-unsupported sentences judged
    caught: int  # ... of them flagged
    errors: int
    uncovered: int
    # Response level (one answer = one record): answers with no gold-unsupported sentence and how
    # many of them got any sentence lowered; answers with one and how many got any sentence flagged.
    clean_answers: int = 0
    clean_lowered: int = 0
    bad_answers: int = 0
    bad_caught: int = 0

    @property
    def lowered_share(self) -> float:
        return self.lowered / self.supported if self.supported else 0.0

    @property
    def caught_share(self) -> float:
        return self.caught / self.unsupported if self.unsupported else 0.0


def figures(rows: Sequence[Row]) -> Figures:
    judged = [r for r in rows if r.outcome is not None]
    supported = [r for r in judged if r.gold_supported]
    unsupported = [r for r in judged if not r.gold_supported]
    return Figures(
        supported=len(supported), lowered=sum(not r.outcome.kept for r in supported),
        unsupported=len(unsupported), caught=sum(not r.outcome.kept for r in unsupported),
        errors=len(rows) - len(judged), uncovered=sum(r.outcome.uncovered for r in judged),
        **answer_level(judged),
    )


def answer_level(rows: Sequence[Row]) -> dict[str, int]:
    by_answer: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_answer[row.record_id].append(row)
    clean = [rs for rs in by_answer.values() if all(r.gold_supported for r in rs)]
    bad = [rs for rs in by_answer.values() if not all(r.gold_supported for r in rs)]
    return {
        "clean_answers": len(clean),
        "clean_lowered": sum(any(not r.outcome.kept for r in rs) for rs in clean),
        "bad_answers": len(bad),
        "bad_caught": sum(any(not r.outcome.kept for r in rs) for rs in bad),
    }


def note_groups(rows: Sequence[Row]) -> list[tuple[str, list[Row]]]:
    """The bad rows grouped by the first words of each note they carry (a row with several notes
    is in several groups; one without is in "(no note)"), largest group first."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        if not row.bad:
            continue
        keys = dict.fromkeys(note_group(n) for n in row.outcome.notes) or {"(no note)": None}
        for key in keys:
            groups[key].append(row)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def format_table(
    by_key: dict[tuple[str, str], dict[str, Figures]], profile: str, split: str
) -> str:
    lines = [
        f"oracle harness, profile {profile}, split {split!r}"
        + (" (untuned half)" if split == "report" else ""),
        (
            "perfect = the fake labels as the gold does; always = every sentence SUPPORTED; both"
            " quote the closest passage sentence"
        ),
        "",
    ]
    lines.append(
        f"{'dataset':<18} {'split':<7} | {'perfect: gold-supported':>23} {'lowered':>8}"
        f" {'share':>7} {'<=5%':>4} | {'always: gold-unsupported':>24} {'caught':>7} {'share':>7}"
        f" {'>=85%':>5} | {'errors':>6}"
    )
    for (dataset, part), modes in by_key.items():
        p, a = modes.get("perfect"), modes.get("always")
        left = (
            f"{p.supported:>23} {p.lowered:>8} {p.lowered_share:>7.1%}"
            f" {'yes' if p.lowered_share <= LOWERED_TARGET else 'no':>4}"
            if p
            else f"{'-':>23} {'':>8} {'':>7} {'':>4}"
        )
        right = (
            f"{a.unsupported:>24} {a.caught:>7} {a.caught_share:>7.1%}"
            f" {'yes' if a.caught_share >= CAUGHT_TARGET else 'no':>5}"
            if a
            else f"{'-':>24} {'':>7} {'':>7} {'':>5}"
        )
        errors = sum(f.errors for f in modes.values())
        lines.append(f"{dataset:<18} {part:<7} | {left} | {right} | {errors:>6}")
    lines += [
        "",
        "response level (an answer is flagged when any of its sentences is):",
        f"{'dataset':<18} {'split':<7} | {'perfect: clean answers':>22} {'lowered':>8} {'share':>7}"
        f" | {'always: hallucinated answers':>28} {'caught':>7} {'share':>7}",
    ]
    for (dataset, part), modes in by_key.items():
        p, a = modes.get("perfect"), modes.get("always")
        left = (
            f"{p.clean_answers:>22} {p.clean_lowered:>8}"
            f" {_share(p.clean_lowered, p.clean_answers):>7.1%}"
            if p
            else f"{'-':>22} {'':>8} {'':>7}"
        )
        right = (
            f"{a.bad_answers:>28} {a.bad_caught:>7} {_share(a.bad_caught, a.bad_answers):>7.1%}"
            if a
            else f"{'-':>28} {'':>7} {'':>7}"
        )
        lines.append(f"{dataset:<18} {part:<7} | {left} | {right}")
    return "\n".join(lines)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def format_groups(title: str, rows: Sequence[Row], top: int, examples: int) -> str:
    groups = note_groups(rows)
    total = sum(r.bad for r in rows)
    lines = [f"\n{title}: {total} sentences, top note groups"]
    for key, members in groups[:top]:
        lines.append(f"  {len(members):>5}  {key}")
        for row in members[:examples]:
            note = next((n for n in row.outcome.notes if note_group(n) == key), "")
            lines.append(f"         - [{row.record_id}] {row.sentence[:160]!r}")
            if note:
                lines.append(f"           {note[:240]}")
    return "\n".join(lines)


def load(path: Path, split: str, limit: int | None) -> tuple[list[Record], int]:
    """The records of the split that have passages (a record without any is judged UNSUPPORTED by
    the engine before any backend or check runs: it measures nothing here), and how many had none.
    `limit` takes that many spread evenly over the file (its order groups the labels)."""
    records, _ = load_dataset(path)
    chosen = [r for r in records if split == "all" or record_split(r.request) == split]
    with_passages = [r for r in chosen if any(p.text.strip() for p in r.request.passages)]
    return spread(with_passages, limit), len(chosen) - len(with_passages)


def spread(items: list, limit: int | None) -> list:
    """At most `limit` items, evenly spaced over the list (all of them without a limit)."""
    if not limit or limit >= len(items):
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / name for name in DATASETS])
    parser.add_argument("--split", choices=("tune", "report", "all"), default="report")
    parser.add_argument("--profile", default="claim_audit@v1")
    parser.add_argument(
        "--style",
        choices=STYLES,
        default="plain",
        help="tokenized: passages and answers lowercased and PTB-tokenized (styled_record)",
    )
    parser.add_argument("--modes", nargs="*", choices=MODES, default=list(MODES))
    parser.add_argument("--limit", type=int, default=None, help="at most N records per dataset")
    parser.add_argument("--top", type=int, default=8, help="note groups shown per dataset and mode")
    parser.add_argument("--examples", type=int, nargs="?", const=5, default=0,
                        help="examples per note group (5 when given without a number)")
    parser.add_argument(
        "--json", default=None, metavar="OUT.json", help="every sentence's outcome as JSON"
    )
    parser.add_argument(
        "--no-record", action="store_true", help="do not write bench/results/latest.json"
    )
    args = parser.parse_args(argv)

    parts = ("tune", "report") if args.split == "all" else (args.split,)
    datasets = []
    for path in args.data:
        records, without = load(path, args.split, args.limit)
        datasets.append((path.stem, records))
        if without:
            print(f"{path.stem}: {without} records of the split have no passages; left out")
    llm = OracleLLM()
    all_rows: list[Row] = []
    started = time.perf_counter()
    with FakeOpenAI(default=llm) as fake:
        for name, records in datasets:
            for mode in args.modes:
                t0, before = time.perf_counter(), llm.requests
                rows = run_records(records, name, mode, fake, llm, args.profile, args.style)
                all_rows += rows
                print(
                    f"{name} {mode}: {len(records)} records, {len(rows)} sentences, "
                    f"{llm.requests - before} LLM requests in {time.perf_counter() - t0:.1f} s",
                    flush=True,
                )
    seconds = time.perf_counter() - started
    if fake.errors:
        print(f"fake LLM errors: {fake.errors[:3]}", file=sys.stderr)

    by_key: dict[tuple[str, str], dict[str, Figures]] = {}
    for name, _ in datasets:
        for part in parts + (("all",) if len(parts) > 1 else ()):
            by_key[(name, part)] = {
                mode: figures([r for r in all_rows if r.dataset == name and r.mode == mode
                               and (part == "all" or r.split == part)])
                for mode in args.modes
            }
    print()
    print(format_table(by_key, args.profile, args.split) if args.style == "plain"
          else f"text style: {args.style}\n" + format_table(by_key, args.profile, args.split))
    print(
        f"\n{len(all_rows)} sentence outcomes in {seconds:.1f} s; lowered/flagged = a claim over"
        " the sentence not SUPPORTED, a fabrication over it, or no claim over it"
    )
    for name, _ in datasets:
        for mode in args.modes:
            title = (f"{name} perfect: gold-supported sentences lowered" if mode == "perfect"
                     else f"{name} always: gold-unsupported sentences missed")
            print(
                format_groups(
                    title,
                    [r for r in all_rows if r.dataset == name and r.mode == mode],
                    args.top,
                    args.examples,
                )
            )

    if not args.no_record and not args.limit:
        styled_as = "" if args.style == "plain" else f" {args.style}"
        command = f"python bench/oracle.py --split {args.split} --profile {args.profile}" + (
            f" --style {args.style}" if styled_as else "")
        for (name, part), modes in by_key.items():
            if part != args.split and not (args.split == "all" and part == "all"):
                continue
            if "perfect" in modes:
                f = modes["perfect"]
                record_figure(
                    f"oracle perfect LLM supported lowered {name} {part} {args.profile}{styled_as}",
                    100.0 * f.lowered_share,
                    "%",
                    target=100 * LOWERED_TARGET,
                    higher_is_better=False,
                    command=command,
                    sentences=f.supported,
                    lowered=f.lowered,
                    errors=f.errors,
                    clean_answers=f.clean_answers,
                    clean_answers_lowered=f.clean_lowered,
                )
            if "always" in modes:
                f = modes["always"]
                record_figure(
                    f"oracle always-SUPPORTED LLM unsupported caught {name} {part}"
                    f" {args.profile}{styled_as}",
                    100.0 * f.caught_share,
                    "%",
                    target=100 * CAUGHT_TARGET,
                    command=command,
                    sentences=f.unsupported,
                    caught=f.caught,
                    errors=f.errors,
                    hallucinated_answers=f.bad_answers,
                    hallucinated_answers_caught=f.bad_caught,
                )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                [
                    {
                        "dataset": r.dataset,
                        "record_id": r.record_id,
                        "split": r.split,
                        "mode": r.mode,
                        "sentence": r.sentence,
                        "gold_supported": r.gold_supported,
                        "bad": r.bad,
                        "error": r.error,
                        **(
                            {
                                "kept": r.outcome.kept,
                                "labels": r.outcome.labels,
                                "notes": r.outcome.notes,
                            }
                            if r.outcome
                            else {}
                        ),
                    }
                    for r in all_rows
                ],
                handle,
                indent=1,
                ensure_ascii=False,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
