"""`manage.py evaluate [--golden NAME] [--profile NAME@VERSION] [--backend offline|openai]
[--examples SET|none] [--fail-under M=V ...]`.

Exit codes: 0 measured and every gate met; 1 a gate failed (CI blocks the change); 2 bad
arguments or nothing to measure; 3 the judge failed on some answers (listed, left out of the
figures), as `python -m judges eval` does.
"""

from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand, CommandError

from judges import JudgeError
from judges.eval import build_report, format_report
from reviewapp.labels.evaluation import (
    GATE_METRICS,
    adjudicated_outcomes,
    evaluation_config,
    gate_failures,
    golden_outcomes,
    judges_named,
    parse_gate,
)
from reviewapp.labels.examples import ExampleSetError
from reviewapp.labels.golden import golden_answers


class Command(BaseCommand):
    help = (
        "Measure the judge against human labels (a golden set, or the adjudicated answers) and"
        " print the figures `python -m judges eval` prints. Judge runs are reused when a current"
        " run of the same judge exists, otherwise made and stored as side runs."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--golden",
            default="",
            metavar="NAME",
            help="a set stored by import_golden " "(default: the answers reviewers adjudicated)",
        )
        parser.add_argument("--profile", default="", metavar="NAME[@VERSION]",
                            help="judge with this profile (default on a golden set: the policy's)")
        parser.add_argument("--backend", choices=("offline", "openai"), default="",
                            help="judge with this backend (default on a golden set: the policy's)")
        parser.add_argument(
            "--examples",
            default="",
            metavar="SET|none",
            help=(
                "carry this example set (e.g. fare_policy@v3+ex2, which fixes the profile version),"
                " or none (default: the policy's set, when it is for the profile judged)"
            ),
        )
        parser.add_argument(
            "--fail-under",
            action="append",
            default=[],
            metavar="METRIC=VALUE",
            help=f"exit 1 when METRIC < VALUE; METRIC one of {', '.join(GATE_METRICS)} "
            "(a bare name means response.NAME); repeatable",
        )
        parser.add_argument(
            "--report", default="", metavar="OUT.json", help="also write the figures as JSON"
        )

    def handle(
        self,
        *args,
        golden: str,
        profile: str,
        backend: str,
        examples: str,
        fail_under: list[str],
        report: str,
        **options,
    ):
        try:
            gates = [parse_gate(text) for text in fail_under]
        except ValueError as exc:
            raise CommandError(f"--fail-under {exc}", returncode=2) from None
        started = time.perf_counter()
        outcomes, dataset = self._outcomes(golden, profile, backend, examples)
        wall = time.perf_counter() - started
        named_profile, named_backend = judges_named(outcomes)
        figures = build_report(
            outcomes, dataset=dataset, backend=named_backend, profile=named_profile
        )
        self.stdout.write(format_report(figures, wall_seconds=wall))
        if report:
            with open(report, "w", encoding="utf-8") as handle:
                json.dump(figures, handle, indent=2, ensure_ascii=False)
        self._check_gates(figures, gates)
        if figures["errors"]:
            raise CommandError(
                f"the judge failed on {len(figures['errors'])} of {len(outcomes)} answers",
                returncode=3,
            )

    def _outcomes(self, golden: str, profile: str, backend: str, examples: str):
        try:
            config = (evaluation_config(profile=profile, backend=backend, examples=examples or None)
                      if golden or profile or backend or examples else None)
        except ExampleSetError as exc:
            raise CommandError(str(exc), returncode=2) from None
        if config and config.backend == "offline" and profile:
            self.stderr.write(f"note: --profile {profile} is ignored by the offline backend")
        if golden and not golden_answers(golden).exists():
            raise CommandError(
                f"no golden set named {golden!r} (import one with import_golden)", returncode=2
            )
        progress = self._progress()
        try:
            if golden:
                outcomes = list(golden_outcomes(name=golden, config=config, progress=progress))
            else:
                outcomes = list(adjudicated_outcomes(config=config, progress=progress))
        except JudgeError as exc:  # a judge that cannot even start (an unknown profile)
            raise CommandError(str(exc), returncode=2) from None
        if not outcomes:
            raise CommandError(
                "no adjudicated answers with a judge run to measure on", returncode=2
            )
        return outcomes, f"golden set {golden}" if golden else "adjudicated answers"

    def _progress(self):
        started = time.perf_counter()

        def report(done: int) -> None:
            if done % 100 == 0:
                self.stderr.write(f"judged {done} ({time.perf_counter() - started:.1f} s)")

        return report

    def _check_gates(self, figures: dict, gates: list[tuple[str, float]]) -> None:
        if not gates:
            return
        failures = gate_failures(figures, gates)
        self.stdout.write("")
        for metric, threshold in gates:
            failed = next((line for line in failures if line.startswith(metric + " ")), None)
            self.stdout.write(
                f"gate {metric} >= {threshold:g}: {'FAILED (' + failed + ')' if failed else 'ok'}"
            )
        if failures:
            raise CommandError(
                f"{len(failures)} gate(s) failed: " + "; ".join(failures), returncode=1
            )
