"""How long /policy/'s and /calibration/'s miss rate and load-versus-catch curve take (issue 32).

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench
    python bench/scale_data.py --answers 100000 && python bench/miss_rate.py

scale_data's answers are in review or auto-passed; inside one transaction, rolled back at the end,
every answer in review becomes adjudicated and a 5% audit sample of the passed ones too (20% within
0.05 above the threshold), each with its inclusion probability: the worst case of every answer
having been reviewed. Then it times what the two pages recompute when their figures are older than
db.counts.COUNTS_TTL_SECONDS (on big tables; every view on small ones).
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

from django.db import transaction  # noqa: E402

from bench.results import record  # noqa: E402
from reviewapp.labels import missrate  # noqa: E402
from reviewapp.models import Answer, Policy  # noqa: E402
from reviewapp.policy.routing import AUDIT_REASON, in_audit_sample  # noqa: E402


class RolledBack(Exception):
    pass


def _reviewed(policy: Policy) -> int:
    Answer.objects.filter(review_status="in_review").update(review_status="adjudicated")
    drawn = []
    passed = Answer.objects.filter(review_status="auto_passed")
    for pk, score in passed.values_list("pk", "grounding_score"):
        chance = 0.2 if score < policy.score_threshold + 0.05 else 0.05
        if in_audit_sample(pk, chance):
            drawn.append((pk, chance))
    for chance in (0.2, 0.05):
        Answer.objects.filter(pk__in=[pk for pk, c in drawn if c == chance]).update(
            review_status="adjudicated", routing_reason=AUDIT_REASON, audit_probability=chance)
    return len(drawn)


def _timed(call, repeats: int) -> tuple[list[float], object]:
    timings, value = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        value = call()
        timings.append(time.perf_counter() - started)
    return timings, value


def main(repeats: int = 5) -> None:
    policy = Policy.current()
    try:
        with transaction.atomic():
            audited = _reviewed(policy)
            # Uncached, both: what a page view recomputes.
            rate_times, rates = _timed(lambda: missrate.miss_rates(target=0.02), repeats)
            curve_times, curve = _timed(lambda: missrate.curve_figures(policy), repeats)
            raise RolledBack
    except RolledBack:
        pass
    overall = rates["overall"]
    print(f"answers {Answer.objects.count()}, audited and adjudicated {audited}, "
          f"curve over {curve['reviewed']}")
    print(f"miss rate {overall.value:.3f} [{overall.low:.3f}, {overall.high:.3f}]")
    for name, timings in (("miss rate", rate_times), ("load-versus-catch curve", curve_times)):
        print(f"{name}: median {statistics.median(timings) * 1000:.0f} ms, "
              f"min {min(timings) * 1000:.0f} ms over {repeats} runs ({os.cpu_count()} cores)")
    record("miss rate selectors median", statistics.median(rate_times), "s", None,
           higher_is_better=False, command="python bench/miss_rate.py", audited=audited,
           runs=repeats)
    record("load-versus-catch curve median", statistics.median(curve_times), "s", None,
           higher_is_better=False, command="python bench/miss_rate.py", answers=curve["reviewed"],
           runs=repeats)


if __name__ == "__main__":
    main()
