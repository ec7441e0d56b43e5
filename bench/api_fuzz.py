"""Schemathesis against the API with more examples than the test suite runs (250 per operation).

Runs tests/test_api_schema.py (the in-process WSGI app on the test database, so DATABASE_URL must
point at a Postgres where a test database may be created) and prints the responses it saw per
operation and status. Exit status is pytest's: 0 means no 5xx and every response matched the
OpenAPI document.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk python bench/api_fuzz.py [--examples
    250]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import record  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=250, help="examples per operation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = os.environ | {
            "SCHEMATHESIS_EXAMPLES": str(args.examples),
            "SCHEMATHESIS_REPORT": str(report),
        }
        started = time.monotonic()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests/test_api_schema.py",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:logging",
                "-o",
                "log_cli=false",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - started
        seen = json.loads(report.read_text())["responses"] if report.exists() else {}
    print(
        f"schemathesis, {args.examples} examples per operation: pytest exit {result.returncode} in"
        f" {seconds:.1f} s"
    )
    for key in sorted(seen):
        print(f"  {key:40} {seen[key]:6}")
    total = sum(seen.values())
    server_errors = sum(n for key, n in seen.items() if key.rsplit(" ", 1)[1].startswith("5"))
    print(f"  {'requests':40} {total:6}\n  {'5xx':40} {server_errors:6}")
    if result.returncode:
        print(result.stdout[-4000:])
    command = f"python bench/api_fuzz.py --examples {args.examples}"
    record(
        "api fuzz requests",
        total,
        "requests",
        command=command,
        examples_per_operation=args.examples,
        exit=result.returncode,
    )
    record(
        "api fuzz 5xx",
        server_errors,
        "responses",
        target=0,
        higher_is_better=False,
        command=command,
    )
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
