"""How long the policy page's preview takes over many judged answers (issue 6).

DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/scale_data.py --answers
100000 DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python
bench/policy_preview.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django  # noqa: E402

django.setup()

from bench.results import record  # noqa: E402
from reviewapp.policy import selectors  # noqa: E402
from reviewapp.models import Answer, Policy  # noqa: E402


def main(repeats: int = 5) -> None:
    current = Policy.current()
    candidate = Policy(
        **{
            f.name: getattr(current, f.name)
            for f in Policy._meta.fields
            if f.name not in ("id", "version")
        }
    )
    candidate.score_threshold = 0.6
    timings, preview = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        preview = selectors.routing_preview(current=current, candidate=candidate, days=7)
        timings.append(time.perf_counter() - started)
    print(
        f"judged answers in the window: {preview['judged']} (of {Answer.objects.count()} answers)"
    )
    print(
        f"review now {preview['review_current']}, under the candidate {preview['review_candidate']}"
    )
    print(
        f"preview time: median {statistics.median(timings):.2f} s, min {min(timings):.2f} s over"
        f" {repeats} runs ({os.cpu_count()} cores)"
    )
    record(
        "policy preview median (7 days)",
        statistics.median(timings),
        "s",
        None,
        higher_is_better=False,
        command="python bench/policy_preview.py",
        judged=preview["judged"],
        runs=repeats,
        min_s=round(min(timings), 2),
    )


if __name__ == "__main__":
    main()
