"""Command line: `python -m judges check --input REQUEST.json`, `python -m judges profiles` and
`python -m judges eval --dataset FILE.jsonl` (see judges/eval/ for what it measures).

Exit codes of `check`: 0 judged, 1 judged but grounding_score < --fail-under, 2 bad input,
3 the judge itself failed (JudgeError).
Exit codes of `eval`: 0 every valid record judged (skipped records are reported, not fatal),
2 the dataset cannot be read, holds no valid record, or the profile is unknown, 3 the judge
failed on at least one record (those are listed and left out of the figures; the report is still
written).

The openai backend reads OPENAI_BASE_URL, OPENAI_API_KEY, JUDGE_MODEL and JUDGE_PROFILE from
the environment, like the app; with no OPENAI_BASE_URL the offline judge is the default.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from pydantic import ValidationError

from judges.engine import JudgeConfig, JudgeError, judge
from judges.backends.offline.judge import OFFLINE_PROFILE, OFFLINE_VERSION
from judges.types import JudgeRequest

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_BAD_INPUT = 2
EXIT_JUDGE_FAILED = 3


class BadInput(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return args.run(args)


EXAMPLES_HELP = (
    "worked examples to put in the prompt: {\"tag\": \"ex2\", \"items\": [{\"claim\", \"passage\", "
    "\"label\", \"judge_label\", \"reason\"}]} as a set's page downloads it (openai backend only)"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m judges", description="ClaimDesk judges, without Django."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser(
        "check", help="judge one request and print the normalized result as JSON"
    )
    check.add_argument("--input", required=True,
                       help="request JSON file (DESIGN.md's ingest payload), or - for stdin")
    check.add_argument("--backend", choices=("offline", "openai"),
                       default="openai" if os.environ.get("OPENAI_BASE_URL") else "offline",
                       help="default: openai when OPENAI_BASE_URL is set, else offline")
    check.add_argument(
        "--profile",
        default=None,
        metavar="NAME[@VERSION]",
        help="judge profile for the openai backend (default: the request's, then JUDGE_PROFILE, "
        "then claim_audit); see `profiles`",
    )
    check.add_argument("--fail-under", type=_score, default=None, metavar="SCORE",
                       help="exit 1 when grounding_score is below SCORE (0..1)")
    check.add_argument("--examples", default=None, metavar="SET.json", help=EXAMPLES_HELP)
    check.set_defaults(run=_check)

    evaluate = commands.add_parser(
        "eval",
        help="measure a judge on a labelled JSONL dataset (../shared/data/README.md's format)",
    )
    evaluate.add_argument(
        "--dataset", required=True, metavar="FILE.jsonl", help="labelled records, one per line"
    )
    evaluate.add_argument("--backend", choices=("offline", "openai"),
                          default="openai" if os.environ.get("OPENAI_BASE_URL") else "offline",
                          help="default: openai when OPENAI_BASE_URL is set, else offline")
    evaluate.add_argument(
        "--profile",
        default=None,
        metavar="NAME[@VERSION]",
        help="judge profile for the openai backend (default: JUDGE_PROFILE, then claim_audit)",
    )
    evaluate.add_argument("--examples", default=None, metavar="SET.json", help=EXAMPLES_HELP)
    evaluate.add_argument(
        "--report", default=None, metavar="OUT.json", help="also write the figures as JSON"
    )
    evaluate.add_argument(
        "--predictions",
        default=None,
        metavar="OUT.jsonl",
        help="also write one line per record (gold, prediction, flagged spans) for error analysis",
    )
    evaluate.add_argument(
        "--split",
        choices=("tune", "report", "all"),
        default="all",
        help="judge only one half of the records, split by a stable hash of their passages "
        "(tune on 'tune', report on 'report'); default all",
    )
    evaluate.add_argument(
        "--limit",
        type=_positive_int,
        default=None,
        metavar="N",
        help="judge the first N valid records",
    )
    evaluate.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="K",
        help="records judged at once in a thread pool (for the openai backend); default 1",
    )
    evaluate.add_argument("--timeout", type=_positive_float, default=None, metavar="SECONDS",
                          help="per LLM request (default: JUDGE_TIMEOUT_SECONDS, then 60)")
    evaluate.add_argument("--retry-budget", type=_positive_float, default=None, metavar="SECONDS",
                          help="all requests for one record, retries included (default 120)")
    evaluate.add_argument("--max-attempts", type=_positive_int, default=None, metavar="N",
                          help="failed requests per record before giving up (default 5)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    evaluate.set_defaults(run=_eval)

    profiles = commands.add_parser("profiles", help="list the judge profiles this build has")
    profiles.set_defaults(run=_profiles)
    return parser


def _number(parse, within, requirement: str):
    """An argparse type: parse the text, then check it; the messages name what was wrong."""
    kind = "an integer" if parse is int else "a number"

    def convert(value: str):
        try:
            number = parse(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {value!r}") from None
        if not within(number):
            raise argparse.ArgumentTypeError(f"{requirement}: {value!r}")
        return number

    return convert


_score = _number(float, lambda n: 0.0 <= n <= 1.0, "must be between 0 and 1")
_positive_int = _number(int, lambda n: n >= 1, "must be at least 1")
_positive_float = _number(float, lambda n: n > 0, "must be above 0")


def _eval(args: argparse.Namespace) -> int:
    import time

    from judges import eval as evaluation
    from judges.engine import identify

    profile = args.profile or os.environ.get("JUDGE_PROFILE") or "claim_audit"
    if not _profile_known(profile, args.backend):
        return EXIT_BAD_INPUT
    if args.backend == "offline" and args.profile:
        print(f"note: --profile {args.profile} is ignored by the offline backend", file=sys.stderr)
    try:
        examples = _load_examples(args.examples, args.backend)
    except BadInput as error:
        print(f"bad input: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    defaults = JudgeConfig()
    config = _config(
        args.backend,
        profile,
        examples=examples,
        timeout_s=args.timeout or _env_seconds("JUDGE_TIMEOUT_SECONDS", defaults.timeout_s),
        retry_budget_s=args.retry_budget or defaults.retry_budget_s,
        max_attempts=args.max_attempts or defaults.max_attempts,
    )
    identity = identify(config)
    try:
        records, skipped = evaluation.load_dataset(args.dataset)
    except evaluation.DatasetError as error:
        print(f"bad input: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    records = evaluation.select_split(records, args.split)[: args.limit]
    if not records:
        for item in skipped[:10]:
            print(
                f"skipped line {item.line} ({item.id or 'no id'}): {item.reason}", file=sys.stderr
            )
        print(
            f"bad input: {args.dataset} holds no valid record ({len(skipped)} skipped)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT

    started = time.perf_counter()
    step = max(1, len(records) // 10)

    def progress(done: int, total: int) -> None:
        if not args.quiet and (done % step == 0 or done == total):
            print(
                f"judged {done}/{total} ({time.perf_counter() - started:.1f} s)",
                file=sys.stderr,
                flush=True,
            )

    outcomes = evaluation.run_judge(records, config, workers=args.workers, progress=progress)
    wall = time.perf_counter() - started
    report = evaluation.build_report(
        outcomes, skipped, dataset=args.dataset, backend=identity.backend,
        profile=f"{identity.profile}@{identity.prompt_version}", split=args.split,
    )
    print(evaluation.format_report(report, wall_seconds=wall, workers=args.workers))
    try:
        if args.report:
            with open(args.report, "w", encoding="utf-8") as handle:
                json.dump(report, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
        if args.predictions:
            with open(args.predictions, "w", encoding="utf-8") as handle:
                for row in evaluation.prediction_rows(outcomes):
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as error:
        print(f"cannot write the report: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if report["errors"]:
        print(f"judge failed on {len(report['errors'])} of {len(records)} records", file=sys.stderr)
        return EXIT_JUDGE_FAILED
    return EXIT_OK


def _env_seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def _profile_known(profile: str, backend: str) -> bool:
    """The openai backend needs a real profile; say which exist when it is not one (bad input)."""
    if backend != "openai":
        return True
    from judges.profiles import UnknownProfile, get_profile

    try:
        get_profile(profile)
    except UnknownProfile as error:
        print(f"bad input: {error}", file=sys.stderr)
        return False
    return True


def _config(backend: str, profile: str, **limits) -> JudgeConfig:
    """A judge configuration from the environment, as the app reads it (OPENAI_*, JUDGE_MODEL)."""
    return JudgeConfig(
        backend=backend,
        profile=profile,
        model=os.environ.get("JUDGE_MODEL") or "gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        api_key=os.environ.get("OPENAI_API_KEY") or None,
        **limits,
    )


def _check(args: argparse.Namespace) -> int:
    try:
        request = _load_request(args.input)
    except BadInput as error:
        print(f"bad input: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    profile = args.profile or request.profile or os.environ.get("JUDGE_PROFILE") or "claim_audit"
    if not _profile_known(profile, args.backend):
        return EXIT_BAD_INPUT
    try:
        examples = _load_examples(args.examples, args.backend)
    except BadInput as error:
        print(f"bad input: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    config = _config(args.backend, profile, examples=examples)
    try:
        output = judge(request, config)
    except JudgeError as error:
        print(f"judge failed: {error}", file=sys.stderr)
        return EXIT_JUDGE_FAILED
    result = output.result
    print(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    if args.fail_under is not None and result.grounding_score < args.fail_under:
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def _load_examples(source: str | None, backend: str):
    """The --examples file as WorkedExamples (None without one); BadInput naming the field."""
    from judges.examples import WorkedExamples

    if source is None:
        return None
    if backend == "offline":
        print(
            f"note: --examples {source} is ignored by the offline backend (it reads no prompt)",
            file=sys.stderr,
        )
    try:
        return WorkedExamples.model_validate(_read_json(source))
    except ValidationError as error:
        raise BadInput(f"{source}: {_describe(error)}") from None


def _load_request(source: str) -> JudgeRequest:
    payload = _read_json(source)
    try:
        return JudgeRequest.model_validate(payload)
    except ValidationError as error:
        raise BadInput(_describe(error)) from None


def _read_json(source: str) -> Any:
    name = "stdin" if source == "-" else source
    try:
        if source == "-":
            raw = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as handle:
                raw = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read {name}: {error}") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise BadInput(f"{name} is not valid JSON: {error}") from None


def _describe(error: ValidationError) -> str:
    """One line per problem, naming the field the way a client would write it: passages[0].text."""
    lines = []
    for problem in error.errors():
        field = _field_path(problem["loc"]) or "(request)"
        lines.append(f"{field}: {problem['msg']}")
    return "; ".join(lines)


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _profiles(args: argparse.Namespace) -> int:
    from judges.profiles import list_profiles

    for name, versions in list_profiles():
        print(f"{name} {' '.join(versions)} (backend openai; latest {versions[-1]})")
    print(f"{OFFLINE_PROFILE} {OFFLINE_VERSION} (backend offline; needs no model)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
