"""What worked examples cost in the prompt (not a test): characters and render time per profile.

For each profile version, one fare-policy request (a 5-sentence answer, two passages) is rendered
with no examples, with two typical examples (a claim, a sentence-long excerpt, a one-line reason)
and with the largest set allowed (judges.examples caps: 8 examples, 8,000 characters in all).
"chars" counts the system and user messages together; an English prompt is roughly 4 characters
per token, so divide by 4 for a token estimate. Render time is the median of --repeat renders
(it includes drawing a delimiter absent from every input, examples included).

Run from the repo root: `python bench/example_prompts.py [--repeat N]`. Prints figures, exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import record  # noqa: E402
from judges.examples import (  # noqa: E402
    MAX_EXAMPLES,
    MAX_TOTAL_CHARS,
    WorkedExample,
    WorkedExamples,
)
from judges.profiles import get_profile, list_profiles  # noqa: E402
from judges.types import JudgeRequest  # noqa: E402

REQUEST = JudgeRequest.model_validate(
    {
        "question": "How much do seniors pay, and where do I buy a pass?",
        "passages": [
            {
                "id": "P1",
                "agency": "Metro",
                "title": "Fare Policy",
                "section": "4.2",
                "fetched_at": "2026-08-16",
                "text": (
                    "The regular adult fare is $2.75 per ride. Riders aged 65 and older pay a"
                    " reduced fare of $1.35 per ride with a valid Senior ID card. Children under 5"
                    " ride free with a paying adult."
                ),
            },
            {
                "id": "P2",
                "agency": "Metro",
                "title": "Passes",
                "text": (
                    "A 30-day pass costs $86.00 and is valid for unlimited rides on buses and"
                    " trains. Reduced Fare passes for seniors cost $43. Passes are sold at station"
                    " vending machines."
                ),
            },
        ],
        "answer": (
            "Seniors pay $1.35 per ride with a Senior ID. A 30-day pass costs $86. Senior passes"
            " cost $40. You can buy passes at vending machines. Children under 12 ride free."
        ),
    }
)

TYPICAL = WorkedExamples(
    tag="ex1",
    items=(
        WorkedExample(
            claim="Monthly senior passes cost $40.",
            passage="Reduced Fare passes for seniors cost $43.",
            label="CONTRADICTED",
            judge_label="PARTIALLY_SUPPORTED",
            reason="A different price is a contradiction, not a partial match.",
        ),
        WorkedExample(
            claim="You can get help at any station.",
            passage="Passes are sold at station vending machines.",
            label="UNSUPPORTED",
            judge_label="SUPPORTED",
            reason="Selling passes is not offering help.",
        ),
    ),
)


def largest() -> WorkedExamples:
    share = MAX_TOTAL_CHARS // MAX_EXAMPLES  # characters per example, split over its three texts
    return WorkedExamples(
        tag="ex2",
        items=tuple(
            WorkedExample(
                claim=("claim words " * 50)[: share // 5],
                passage=("passage text " * 200)[: share * 3 // 5],
                label="UNSUPPORTED",
                judge_label="SUPPORTED",
                reason=("reason " * 50)[: share // 5],
            )
            for _ in range(MAX_EXAMPLES)
        ),
    )


def measure(spec: str, examples: WorkedExamples | None, repeat: int) -> tuple[int, float]:
    profile = get_profile(spec)
    prompt = profile.render(REQUEST, examples=examples)
    chars = sum(len(message["content"]) for message in prompt.messages)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        profile.render(REQUEST, examples=examples)
        times.append((time.perf_counter() - started) * 1000)
    return chars, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    sets = {"none": None, "2 typical": TYPICAL, f"{MAX_EXAMPLES} at the cap": largest()}
    print(f"{'profile':<22} " + " ".join(f"{name + ' chars':>18} {'ms':>6}" for name in sets))
    for name, versions in list_profiles():
        for version in versions:
            spec = f"{name}@{version}"
            figures = {
                label: measure(spec, examples, args.repeat) for label, examples in sets.items()
            }
            print(
                f"{spec:<22} "
                + " ".join(f"{chars:>18,} {ms:>6.2f}" for chars, ms in figures.values())
            )
            base = figures["none"][0]
            for label, (chars, ms) in figures.items():
                if label != "none":
                    record(f"prompt chars added by {label} examples, {spec}", chars - base, "chars",
                           command="python bench/example_prompts.py")
    print("(chars: system + user message; ms: median render time on this machine, one core)")


if __name__ == "__main__":
    main()
