"""Command line: `python -m judges check --input REQUEST.json` and `python -m judges profiles`.

Exit codes of `check`: 0 judged, 1 judged but grounding_score < --fail-under, 2 bad input,
3 the judge itself failed (JudgeError).

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
from judges.offline import OFFLINE_PROFILE, OFFLINE_VERSION
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m judges", description="ClaimDesk judges, without Django.")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="judge one request and print the normalized result as JSON")
    check.add_argument("--input", required=True,
                       help="request JSON file (DESIGN.md's ingest payload), or - for stdin")
    check.add_argument("--backend", choices=("offline", "openai"),
                       default="openai" if os.environ.get("OPENAI_BASE_URL") else "offline",
                       help="default: openai when OPENAI_BASE_URL is set, else offline")
    check.add_argument("--profile", default=None, metavar="NAME[@VERSION]",
                       help="judge profile for the openai backend (default: the request's, then JUDGE_PROFILE, "
                            "then claim_audit); see `profiles`")
    check.add_argument("--fail-under", type=_score, default=None, metavar="SCORE",
                       help="exit 1 when grounding_score is below SCORE (0..1)")
    check.set_defaults(run=_check)

    profiles = commands.add_parser("profiles", help="list the judge profiles this build has")
    profiles.set_defaults(run=_profiles)
    return parser


def _score(value: str) -> float:
    try:
        score = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0.0 <= score <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {value!r}")
    return score


def _check(args: argparse.Namespace) -> int:
    try:
        request = _load_request(args.input)
    except BadInput as error:
        print(f"bad input: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    profile = args.profile or request.profile or os.environ.get("JUDGE_PROFILE") or "claim_audit"
    if args.backend == "openai":
        from judges.profiles import UnknownProfile, get_profile

        try:
            get_profile(profile)
        except UnknownProfile as error:
            print(f"bad input: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
    config = JudgeConfig(
        backend=args.backend,
        profile=profile,
        model=os.environ.get("JUDGE_MODEL") or "gpt-4o-mini",
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        api_key=os.environ.get("OPENAI_API_KEY") or None,
    )
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
