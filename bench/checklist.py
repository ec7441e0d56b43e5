"""The minimal-edit checklist: true sentences of the shared dev passages (HAGRID, FaithBench), each
edited in one slot (bench/minimal_edits.py), judged against their own record's passages through
`judges.engine.judge` (so the deterministic checks run too). Every edit must be flagged (some claim
not SUPPORTED, or a fabrication); the verbatim controls must be kept (all claims SUPPORTED).

    python bench/checklist.py                          # the report half, offline judge
    python bench/checklist.py --split tune --show-misses 5   # what to tune on, with failures
    python bench/checklist.py --json /tmp/checklist.json
    python bench/checklist.py --backend openai --profile claim_audit --base-url URL --model M

Cases are split into halves by the stable hash of their source (judges.eval.split_of over the
record's passages, the split `python -m judges eval --split` uses): tune rules on `tune`, report
`report`. A source's passages are used once, under its first record; at most `--per-source`
sentences per source and kind, chosen by a seeded random generator, so every run is the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Appended, not prepended: PYTHONPATH can put another judges/ first, to measure a baseline.
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.minimal_edits import CONTROL_KINDS, KINDS, Context, Edit, edit, name_pool  # noqa: E402
from judges.engine import JudgeConfig, JudgeError, judge  # noqa: E402
from judges.eval import predicted_hallucinated, source_key, split_of  # noqa: E402
from judges.text import split_sentences  # noqa: E402
from judges.types import JudgeRequest, JudgeResult  # noqa: E402

# The shared data sits beside the main checkout (../shared/data); worktrees live one level deeper.
DATA = Path(
    os.environ.get("SHARED_DATA")
    or next(
        (
            p / "shared" / "data"
            for p in Path(__file__).resolve().parents
            if (p / "shared" / "data").is_dir()
        ),
        Path("../shared/data"),
    )
)
DATASETS = ("hagrid-dev.jsonl", "faithbench-dev.jsonl")
EDIT_TARGET = 0.90  # issue 16: each edit kind flagged at least this often
CONTROL_TARGET = 0.97  # and verbatim copies kept SUPPORTED at least this often


@dataclass(frozen=True)
class Case:
    source_id: str  # the first record holding these passages
    dataset: str
    split: str
    sentence_index: int
    edit: Edit
    request: JudgeRequest


@dataclass
class Outcome:
    case: Case
    flagged: bool | None  # None: the judge failed
    labels: list[str]
    explanations: list[str]
    error: str = ""

    @property
    def as_expected(self) -> bool:
        control = self.case.edit.kind in CONTROL_KINDS
        return self.flagged is not None and self.flagged != control


# --- cases ---------------------------------------------------------------------------------------

# A sentence worth editing: prose of a sensible length, not a list or a heading, no citation
# markers. FaithBench's sources are tokenised ("grossed $ 181 ."); their sentences are kept as they
# are, so a verbatim copy stays byte-exact.
def usable(sentence: str) -> bool:
    return (
        40 <= len(sentence) <= 300 and sentence[0].isupper() and sentence[-1] in ".!?"
        and "\n" not in sentence and "[" not in sentence
    )


def sources(paths: Sequence[Path]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(dataset name, source id, first record) per distinct passage set, in file order."""
    seen: set[str] = set()
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                record = json.loads(line)
                key = source_key(p["text"] for p in record["passages"])
                if key not in seen:
                    seen.add(key)
                    yield path.stem, record["id"], record


def build_cases(
    paths: Sequence[Path], *, seed: int = 16, per_source: int = 1, kinds: Sequence[str] = KINDS
) -> list[Case]:
    """Every case of every source, in a fixed order; the same for the same files and seed."""
    records = list(sources(paths))
    corpus: dict[str, list[str]] = {}
    for dataset, _, record in records:
        corpus.setdefault(dataset, [])
        corpus[dataset] += name_pool(" ".join(p["text"] for p in record["passages"]))
    pools = {dataset: sorted(set(found)) for dataset, found in corpus.items()}
    cases = []
    for dataset, source_id, record in records:
        cases += source_cases(
            dataset,
            source_id,
            record,
            pools[dataset],
            seed=seed,
            per_source=per_source,
            kinds=kinds,
        )
    return cases


def source_cases(
    dataset: str, source_id: str, record: dict[str, Any], corpus_names: Sequence[str], *,
    seed: int, per_source: int, kinds: Sequence[str],
) -> list[Case]:
    passages = [{"id": p.get("id"), "text": p["text"]} for p in record["passages"]]
    text = " ".join(p["text"] for p in passages)
    sentences = [p["text"][s:e] for p in passages for s, e in split_sentences(p["text"])]
    candidates = [(i, s) for i, s in enumerate(sentences) if usable(s)]
    context = Context(document_names=name_pool(text), corpus_names=corpus_names, passage_text=text)
    split = split_of(source_key(p["text"] for p in passages))
    request_fields = {"question": record.get("question") or "", "passages": passages}
    cases = []
    for kind in kinds:
        rng = random.Random(f"{seed}:{source_id}:{kind}")
        order = list(candidates)
        rng.shuffle(order)
        made = 0
        for index, sentence in order:
            if made >= per_source:
                break
            edited = edit(kind, sentence, rng, context)
            if edited is None:
                continue
            request = JudgeRequest.model_validate(request_fields | {"answer": edited.text})
            cases.append(Case(source_id, dataset, split, index, edited, request))
            made += 1
    return cases


# --- judging and the table
# -------------------------------------------------------------------------


def judge_case(case: Case, config: JudgeConfig) -> Outcome:
    try:
        result: JudgeResult = judge(case.request, config).result
    except JudgeError as error:
        return Outcome(case, None, [], [], error=str(error))
    return Outcome(
        case,
        predicted_hallucinated(result),
        [c.label for c in result.claims],
        [c.explanation for c in result.claims]
        + [f"fabrication: {f.reason or f.text}" for f in result.fabrications],
    )


def run(cases: Sequence[Case], config: JudgeConfig, workers: int = 1) -> list[Outcome]:
    if workers <= 1:
        return [judge_case(case, config) for case in cases]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda case: judge_case(case, config), cases))


def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Per kind: n, the share as expected (flagged for edits, kept for controls), per dataset
    too."""
    rows: dict[str, Any] = {}
    for kind in KINDS:
        group = [o for o in outcomes if o.case.edit.kind == kind]
        if not group:
            continue
        target = CONTROL_TARGET if kind in CONTROL_KINDS else EDIT_TARGET
        share = sum(o.as_expected for o in group) / len(group)
        by_dataset = {}
        for dataset in sorted({o.case.dataset for o in group}):
            part = [o for o in group if o.case.dataset == dataset]
            by_dataset[dataset] = {
                "n": len(part),
                "share": sum(o.as_expected for o in part) / len(part),
            }
        rows[kind] = {
            "n": len(group),
            "measure": "kept" if kind in CONTROL_KINDS else "flagged",
            "share": share,
            "target": target,
            "met": share >= target,
            "errors": sum(o.flagged is None for o in group),
            "by_dataset": by_dataset,
        }
    return rows


def format_table(rows: dict[str, Any], split: str, judge_name: str) -> str:
    datasets = sorted({d for row in rows.values() for d in row["by_dataset"]})
    lines = [
        f"minimal-edit checklist, split {split!r}"
        + (" (untuned half)" if split == "report" else "")
        + f", judge {judge_name}",
        "",
    ]
    lines.append(f"{'kind':<18} {'n':>5} {'measure':>8} {'share':>6} {'target':>7} {'met':>4}  "
                 + "  ".join(f"{d[:14]:>14}" for d in datasets))
    for kind, row in rows.items():
        parts = [
            (
                f"{row['by_dataset'][d]['share']:.2f} (n={row['by_dataset'][d]['n']})"
                if d in row["by_dataset"]
                else "-"
            )
            for d in datasets
        ]
        lines.append(
            f"{kind:<18} {row['n']:>5} {row['measure']:>8} {row['share']:>6.2f}"
            f" {'>=' + format(row['target'], '.2f'):>7} {'yes' if row['met'] else 'no':>4}  "
            + "  ".join(f"{p:>14}" for p in parts)
        )
    return "\n".join(lines)


def format_misses(outcomes: Sequence[Outcome], per_kind: int) -> str:
    lines = []
    for kind in KINDS:
        missed = [o for o in outcomes if o.case.edit.kind == kind and not o.as_expected][:per_kind]
        if not missed:
            continue
        lines.append(f"\n== {kind}: missed {len(missed)} shown")
        for o in missed:
            e = o.case.edit
            lines.append(
                f"- {o.case.source_id} sentence {o.case.sentence_index}: {e.before!r} ->"
                f" {e.after!r}"
            )
            lines.append(f"  source: {e.source}")
            if e.text != e.source:
                lines.append(f"  answer: {e.text}")
            lines.append(f"  judge:  {', '.join(o.labels) or o.error or 'no claims'}")
            lines += [f"          {text}" for text in o.explanations if text]
    return "\n".join(lines)


def outcome_row(o: Outcome) -> dict[str, Any]:
    return {
        "source_id": o.case.source_id,
        "dataset": o.case.dataset,
        "split": o.case.split,
        "sentence_index": o.case.sentence_index,
        **asdict(o.case.edit),
        "flagged": o.flagged,
        "as_expected": o.as_expected,
        "labels": o.labels,
        "explanations": o.explanations,
        "error": o.error,
    }


def _config(args: argparse.Namespace) -> JudgeConfig:
    return JudgeConfig(
        backend=args.backend,
        profile=args.profile,
        model=args.model or os.environ.get("JUDGE_MODEL", ""),
        base_url=args.base_url or os.environ.get("JUDGE_BASE_URL"),
        api_key=os.environ.get("JUDGE_API_KEY"),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / name for name in DATASETS],
                        help="dataset files (default: the shared HAGRID and FaithBench dev sets)")
    parser.add_argument("--split", choices=("tune", "report", "all"), default="report")
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=list(KINDS))
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--per-source", type=int, default=1, help="sentences per source and kind")
    parser.add_argument("--limit", type=int, default=None, help="judge at most N cases per kind")
    parser.add_argument("--backend", choices=("offline", "openai"), default="offline")
    parser.add_argument("--profile", default="claim_audit")
    parser.add_argument("--model", default="")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--json", default=None, metavar="OUT.json", help="write the table and every case as JSON"
    )
    parser.add_argument(
        "--show-misses", type=int, default=0, metavar="K", help="print K missed cases per kind"
    )
    args = parser.parse_args(argv)

    cases = [
        c
        for c in build_cases(
            args.data, seed=args.seed, per_source=args.per_source, kinds=args.kinds
        )
        if args.split == "all" or c.split == args.split
    ]
    if args.limit:
        cases = [
            c
            for kind in args.kinds
            for c in [c for c in cases if c.edit.kind == kind][: args.limit]
        ]
    config = _config(args)
    started = time.perf_counter()
    outcomes = run(cases, config, workers=args.workers)
    seconds = time.perf_counter() - started
    judge_name = (
        "offline"
        if config.backend == "offline"
        else f"{config.backend} {config.profile} {config.model}"
    )
    rows = summary(outcomes)
    print(format_table(rows, args.split, judge_name))
    print(f"\n{len(outcomes)} cases judged in {seconds:.1f} s; seed {args.seed}; "
          f"flagged = some claim not SUPPORTED or a fabrication; kept = none")
    if args.show_misses:
        print(format_misses(outcomes, args.show_misses))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "split": args.split,
                    "judge": judge_name,
                    "seed": args.seed,
                    "kinds": rows,
                    "cases": [outcome_row(o) for o in outcomes],
                },
                handle,
                indent=1,
                ensure_ascii=False,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
