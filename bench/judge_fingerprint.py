"""A canonical JSON of every judgement the offline judge and the deterministic checks make (not a
test, not a timing): run it before and after a speed-up and diff the files byte for byte.

Covered, each in its own section of the output:

* every record of the labelled JSONL files given (../shared/data/README.md's format): the offline
  judge's result, then `apply_checks` on it, then `check_support` on the offline result with its
  quotes taken away (the path that profiles without quotes take);
* the answer_cost workload (bench/workload.py): the canned `claim_audit` reply parsed and
  normalized by its profile (claims and quotes placed by judges.locate), then `apply_checks`;
* the red-team cases (tests/judges/redteam_cases.py): offline judge, then `apply_checks`;
* the offline judge benchmark's requests (bench/offline_judge.py, its seed): answers against 10
  passages of 1,500, 5,000 and 15,000 characters drawn from small pools, so the same passage
  comes back for answer after answer with other claims (what a lazily filled index must survive).

Everything but the judge's latency is written, sorted keys, one record per line.

    python bench/judge_fingerprint.py ../shared/data/hagrid-dev.jsonl
    ../shared/data/faithbench-dev.jsonl > before.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import ValidationError  # noqa: E402

from bench.workload import claim_audit_reply, payload  # noqa: E402
from judges import checks  # noqa: E402
from judges.backends.offline.judge import judge_offline  # noqa: E402
from judges.profiles import get_profile  # noqa: E402
from judges.types import JudgeInfo, JudgeRequest, JudgeResult  # noqa: E402

WORKLOAD_ANSWERS = 200
# Offline judge benchmark requests per passage size (the long ones are slow to check).
BENCH_ANSWERS = {1_500: 60, 5_000: 20, 15_000: 12}


def canonical(result: JudgeResult) -> dict:
    data = result.model_dump(mode="json")
    data["judge"].pop("latency_ms", None)
    return data


def findings(found: list[checks.Finding]) -> list[dict]:
    return [
        {
            "check": f.check,
            "span": list(f.span),
            "note": f.note,
            "lower_to": f.lower_to,
            "category": f.category,
            "fabrication": f.fabrication.model_dump(mode="json") if f.fabrication else None,
        }
        for f in found
    ]


def without_quotes(result: JudgeResult) -> JudgeResult:
    return result.model_copy(
        update={"claims": [c.model_copy(update={"evidence": []}) for c in result.claims]}
    )


def offline_record(name: str, request: JudgeRequest) -> dict:
    result = judge_offline(request)
    checked = checks.apply_checks(request, result)
    answer = checks.Answer(request)
    support = checks.check_support(answer, without_quotes(result))
    return {"name": name, "offline": canonical(result), "checked": canonical(checked),
            "support_without_quotes": findings(support)}


def main(paths: list[str]) -> int:
    out = sys.stdout
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines()):
            record = json.loads(line)
            try:
                request = JudgeRequest.model_validate({
                    "question": record.get("question") or "", "passages": record["passages"],
                    "answer": record["answer"]})
            except ValidationError:
                out.write(
                    json.dumps({"name": f"{Path(path).name}:{number}", "invalid": True}) + "\n"
                )
                continue
            out.write(
                json.dumps(offline_record(f"{Path(path).name}:{number}", request), sort_keys=True)
                + "\n"
            )

    profile = get_profile("claim_audit")
    rng = random.Random(2)
    for number in range(WORKLOAD_ANSWERS):
        body = payload(rng)
        request = JudgeRequest.model_validate(body)
        normalized = profile.normalize(profile.parse(claim_audit_reply(body), request), request)
        result = JudgeResult(
            verdict=normalized.verdict,
            grounding_score=normalized.grounding_score,
            claims=normalized.claims,
            fabrications=normalized.fabrications,
            omissions=normalized.omissions,
            rewrite_note=normalized.rewrite_note,
            judge=JudgeInfo(
                profile=profile.name,
                prompt_version=profile.version,
                backend="openai",
                model="canned",
            ),
        )
        checked = checks.apply_checks(request, result)
        out.write(json.dumps({"name": f"workload:{number}", "parsed": canonical(result),
                              "checked": canonical(checked)}, sort_keys=True) + "\n")

    sys.path.insert(0, str(ROOT / "tests" / "judges"))
    import redteam_cases  # noqa: E402

    for case in redteam_cases.CASES:
        request = JudgeRequest.model_validate(case.request())
        out.write(json.dumps(offline_record(f"redteam:{case.id}", request), sort_keys=True) + "\n")

    from bench import offline_judge  # noqa: E402

    rng = random.Random(offline_judge.SEED)
    for chars, count in BENCH_ANSWERS.items():
        pool = [
            offline_judge.passage_text(rng, chars)
            for _ in range(offline_judge.PASSAGES_PER_REQUEST * 3)
        ]
        for number, request in enumerate(offline_judge.requests(count, pool, rng)):
            out.write(
                json.dumps(offline_record(f"bench:{chars}:{number}", request), sort_keys=True)
                + "\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
