"""Minimal edits in two text styles (issue 27, item 6): the checklist's cases (bench/checklist.py,
bench/minimal_edits.py: one slot of a true passage sentence changed, plus verbatim and framed
controls) judged as plain text and as CNN/DailyMail ships text (`--style tokenized`: passage and
answer both lowercased and PTB-tokenized by bench.minimal_edits.tokenized: "could n't", " 's",
"-lrb-", spaces around punctuation), by two judges:

* `offline`: the offline judge, then the checks (judges.judge, backend offline);
* `always`: the openai backend (claim_audit@v1 unless `--profile`) against a fake LLM that marks
  every sentence SUPPORTED quoting the closest passage sentence exactly (bench.oracle.OracleLLM),
  so the deterministic checks alone decide.

Per edit kind: the share flagged (some claim not SUPPORTED, or a fabrication; target >= 0.90 on
both styles); per control: the share kept (target >= 0.97).

    python bench/edit_styles.py                        # report half, both styles, both judges
    python bench/edit_styles.py --style tokenized --judges offline --limit 20 --show-misses 3
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.checklist import (  # noqa: E402
    CONTROL_TARGET,
    DATA,
    DATASETS,
    EDIT_TARGET,
    Case,
    build_cases,
)
from bench.minimal_edits import CONTROL_KINDS, KINDS, STYLES, tokenized  # noqa: E402
from bench.oracle import Judges, base_explanation, split_notes, spread  # noqa: E402
from bench.results import record as record_figure  # noqa: E402
from judges.eval import predicted_hallucinated  # noqa: E402
from judges.types import JudgeRequest  # noqa: E402


def styled(request: JudgeRequest, answer: str, style: str) -> JudgeRequest:
    """The case's request in `style`: for `tokenized`, every passage and the answer tokenized."""
    if style == "plain":
        return request.model_copy(update={"answer": answer})
    passages = [p.model_copy(update={"text": tokenized(p.text)}) for p in request.passages]
    return request.model_copy(update={"answer": tokenized(answer), "passages": passages,
                                      "question": tokenized(request.question or "")})


@dataclass(frozen=True)
class Outcome:
    case: Case
    style: str
    judge: str
    answer: str
    flagged: bool | None  # None: the judge failed
    notes: tuple[str, ...]

    @property
    def as_expected(self) -> bool:
        return self.flagged is not None and self.flagged != (self.case.edit.kind in CONTROL_KINDS)


def run(
    cases: Sequence[Case], styles: Sequence[str], judge_names: Sequence[str], profile: str
) -> list[Outcome]:
    outcomes = []
    with Judges(profile) as judges:
        for style in styles:
            for name in judge_names:
                started = time.perf_counter()
                for case in cases:
                    request = styled(case.request, case.edit.text, style)
                    result = judges.run(name, request)
                    if result is None:
                        outcomes.append(Outcome(case, style, name, request.answer, None, ()))
                        continue
                    notes = tuple(n for c in result.claims if c.label != "SUPPORTED"
                                  for n in split_notes(c.explanation, base_explanation(name)))
                    notes += tuple(
                        f"Fabrication: {f.reason or f.text}" for f in result.fabrications
                    )
                    outcomes.append(
                        Outcome(
                            case, style, name, request.answer, predicted_hallucinated(result), notes
                        )
                    )
                print(
                    f"{style} {name}: {len(cases)} cases in {time.perf_counter() - started:.1f} s",
                    flush=True,
                )
    return outcomes


def share(outcomes: Sequence[Outcome]) -> float:
    return sum(o.as_expected for o in outcomes) / len(outcomes) if outcomes else 0.0


def format_table(
    outcomes: Sequence[Outcome], styles: Sequence[str], judge_names: Sequence[str], split: str
) -> str:
    columns = [(s, j) for s in styles for j in judge_names]
    lines = [
        f"minimal edits by text style, split {split!r}"
        + (" (untuned half)" if split == "report" else ""),
        "flagged share for edits (target >= 0.90), kept share for controls (target >= 0.97); "
        "offline = offline judge + checks, always = always-SUPPORTED fake LLM + checks",
        "",
    ]
    lines.append(
        f"{'kind':<17} {'n':>5} {'measure':>8}  "
        + "  ".join(f"{s + ' ' + j:>18}" for s, j in columns)
    )
    for kind in KINDS:
        group = [o for o in outcomes if o.case.edit.kind == kind]
        if not group:
            continue
        target = CONTROL_TARGET if kind in CONTROL_KINDS else EDIT_TARGET
        cells = []
        for style, name in columns:
            part = [o for o in group if o.style == style and o.judge == name]
            value = share(part)
            cells.append(f"{value:.2f}{'' if value >= target else ' (no)'}" if part else "-")
        n = len({id(o.case) for o in group})
        lines.append(f"{kind:<17} {n:>5} {'kept' if kind in CONTROL_KINDS else 'flagged':>8}  "
                     + "  ".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


def format_misses(outcomes: Sequence[Outcome], per_kind: int) -> str:
    lines = []
    for style in STYLES:
        for kind in KINDS:
            for name in Judges.NAMES:
                missed = [o for o in outcomes if o.style == style and o.judge == name
                          and o.case.edit.kind == kind and not o.as_expected][:per_kind]
                if not missed:
                    continue
                lines.append(f"\n== {style} {name} {kind}: {len(missed)} shown")
                for o in missed:
                    e = o.case.edit
                    lines.append(f"- {o.case.source_id}: {e.before!r} -> {e.after!r}")
                    lines.append(f"  answer: {o.answer[:240]}")
                    lines += [f"  note:   {n[:200]}" for n in o.notes[:3]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / name for name in DATASETS])
    parser.add_argument("--split", choices=("tune", "report", "all"), default="report")
    parser.add_argument("--style", choices=(*STYLES, "both"), default="both")
    parser.add_argument("--judges", nargs="*", choices=Judges.NAMES, default=list(Judges.NAMES))
    parser.add_argument(
        "--profile", default="claim_audit@v1", help="the always-SUPPORTED fake's profile"
    )
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=list(KINDS))
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument(
        "--limit", type=int, default=None, help="at most N cases per kind (spread over the file)"
    )
    parser.add_argument("--show-misses", type=int, default=0, metavar="K")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)

    styles = STYLES if args.style == "both" else (args.style,)
    cases = [c for c in build_cases(args.data, seed=args.seed, kinds=args.kinds)
             if args.split == "all" or c.split == args.split]
    if args.limit:
        chosen = []
        for kind in args.kinds:
            of_kind = [c for c in cases if c.edit.kind == kind]
            chosen += spread(of_kind, args.limit)
        cases = chosen
    started = time.perf_counter()
    outcomes = run(cases, styles, args.judges, args.profile)
    print()
    print(format_table(outcomes, styles, args.judges, args.split))
    print(
        f"\n{len(outcomes)} judgements of {len(cases)} cases in {time.perf_counter() - started:.1f}"
        f" s; seed {args.seed}"
    )
    if args.show_misses:
        print(format_misses(outcomes, args.show_misses))
    if not args.no_record and not args.limit:
        command = f"python bench/edit_styles.py --split {args.split}"
        for style in styles:
            for name in args.judges:
                for kind in args.kinds:
                    part = [
                        o
                        for o in outcomes
                        if o.style == style and o.judge == name and o.case.edit.kind == kind
                    ]
                    if not part:
                        continue
                    control = kind in CONTROL_KINDS
                    record_figure(
                        f"minimal edits {style} {name} {kind} {'kept' if control else 'flagged'}"
                        f" {args.split}",
                        share(part),
                        "share",
                        target=CONTROL_TARGET if control else EDIT_TARGET,
                        command=command,
                        cases=len(part),
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
