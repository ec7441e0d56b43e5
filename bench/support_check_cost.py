"""What judges.checks' support check (check 7) costs on honest answers, for profiles that give no
quotes (fare_policy, sentence_map): the offline judge's SUPPORTED claims with their quotes taken
away are put through check_support at several thresholds, on labelled JSONL
(../shared/data/README.md's format).

    python bench/support_check_cost.py ../shared/data/hagrid-dev.jsonl
    ../shared/data/faithbench-dev.jsonl

Prints, per file and threshold, the share of SUPPORTED claims the check lowers and the share of
hallucination-free answers in which it lowers at least one claim (a false alarm for a human).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import ValidationError  # noqa: E402

from judges import checks  # noqa: E402
from judges.checks import trust  # noqa: E402
from judges.backends.offline.judge import judge_offline  # noqa: E402
from judges.types import JudgeRequest  # noqa: E402

THRESHOLDS = (0.5, 0.6, 0.7)


def main(paths: list[str]) -> int:
    print(f"{'file':<22} {'threshold':>9} {'claims lowered':>20} {'honest answers touched':>24}")
    for path in paths:
        judged = []
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            try:
                request = JudgeRequest.model_validate(
                    {
                        "question": record.get("question") or "",
                        "passages": record["passages"],
                        "answer": record["answer"],
                    }
                )
            except ValidationError:
                continue  # eval skips these too (e.g. no passages)
            result = judge_offline(request)
            quoteless = result.model_copy(update={"claims": [c.model_copy(update={"evidence": []})
                                                             for c in result.claims]})
            judged.append((request, quoteless, bool(record.get("hallucinated"))))
        default = trust.QUOTE_COVERAGE
        try:
            for threshold in THRESHOLDS:
                trust.QUOTE_COVERAGE = threshold
                supported = lowered = honest = touched = 0
                for request, result, hallucinated in judged:
                    found = checks.check_support(checks.Answer(request), result)
                    supported += sum(c.label == "SUPPORTED" for c in result.claims)
                    lowered += len(found)
                    if not hallucinated:
                        honest += 1
                        touched += bool(found)
                print(
                    f"{Path(path).name:<22} {threshold:>9}"
                    f" {f'{lowered}/{supported} = {lowered / supported:.1%}':>20}"
                    f" {f'{touched}/{honest} = {touched / honest:.1%}':>24}"
                )
        finally:
            trust.QUOTE_COVERAGE = default
    return 0


if __name__ == "__main__":
    sys.exit(
        main(
            sys.argv[1:]
            or ["../shared/data/hagrid-dev.jsonl", "../shared/data/faithbench-dev.jsonl"]
        )
    )
