"""Inputs and replies the judge library's tests and the app's tests share. No Django: the judge
library's tests run without it."""

from __future__ import annotations

import json
import re
import uuid

from judges import JudgeConfig

# The passage and answer the fake LLM's GOOD reply judges (claim_verification's reply format): its
# claims are verbatim in the answer.
GOOD_PASSAGE = (
    "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card."
)
GOOD_ANSWER = (
    "Riders aged 65 and older pay a reduced fare of $1.35 per ride. Monthly passes cost $20."
)
GOOD = json.dumps(
    {
        "claims": [
            {
                "claim_id": "c1",
                "claim_text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
                "verification_status": "SUPPORTED",
                "source_passage_id": "P1",
                "source_text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride",
                "explanation": "Stated in P1.",
            },
            {
                "claim_id": "c2",
                "claim_text": "Monthly passes cost $20.",
                "verification_status": "UNSUPPORTED",
                "source_passage_id": None,
                "source_text": None,
                "explanation": "No passage gives a monthly pass price.",
            },
        ],
        "grounding_score": 0.5,
        "total_claims": 2,
        "supported_claims": 1,
        "unsupported_claims": 1,
        "contradicted_claims": 0,
    }
)

# An answer for the `fare_request` fixture's passages: one price right, one wrong.
FARE_ANSWER = (
    "Riders aged 65 and older pay a reduced fare of $1.35 per ride. A 30-day pass costs $75.00."
)

# One answer of thousands of distinct numbers against 18 long passages of others: over a second of
# CPU for the offline judge even with its work bounded (judges/checks/bounds.py), far above 0.3 s.
# Passages are indexed once per text and the index kept, so each request gets texts of its own.
HEAVY_ANSWER = " ".join(f"Route {i} costs ${i}.{i % 100:02d}." for i in range(2000))[:50_000]


def heavy_passages() -> list[dict]:
    fresh = uuid.uuid4().hex[:8]
    return [
        {
            "text": " ".join(
                f"Line {i} runs every {i % 97 + 1} minutes from stop {i * 7 + p} ({fresh})."
                for i in range(3000)
            )[:100_000]
        }
        for p in range(18)
    ]


def openai_config(fake, **overrides) -> JudgeConfig:
    """The openai backend pointed at the fake server `fake`, with fast retries."""
    values = dict(
        backend="openai",
        profile="claim_verification",
        model="fake-judge",
        base_url=fake.base_url,
        api_key="test",
        timeout_s=2.0,
        retry_budget_s=10.0,
        max_attempts=4,
        backoff_cap_s=0.05,
    )
    return JudgeConfig(**(values | overrides))


def split_blocks(user: str, delimiter: str):
    """(label, body) of each data block, and the user message with the blocks taken out."""
    pattern = re.compile(
        rf"<<<{re.escape(delimiter)} (?P<label>[^\n]*)>>>\n(?P<body>.*?)\n<<<END"
        rf" {re.escape(delimiter)}>>>",
        re.S,
    )
    blocks = [(m.group("label"), m.group("body")) for m in pattern.finditer(user)]
    return blocks, pattern.sub("", user)


# The fare answer each profile's canned LLM reply below judges (the profile tests and
# bench/judge_faults.py).
ANSWER = (
    "Riders aged 65 and older pay a reduced fare of $1.35 per ride. "
    'A 30-day pass costs $75.00, and Metro calls it "the best deal in town".\n'
    "- Passes are sold at station vending machines."
)

CANNED = {
    "claim_audit": {
        "claims": [
            {
                "id": "c1",
                "text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
                "label": "SUPPORTED",
                "category": "price",
                "quotes": [{"passage_id": "P1", "quote": "pay a reduced fare of $1.35 per ride"}],
                "explanation": "P1 states it.",
            },
            {
                "id": "c2",
                "text": "A 30-day pass costs $75.00",
                "label": "CONTRADICTED",
                "category": "price",
                "quotes": [{"passage_id": "P2", "quote": "A 30-day pass costs $86.00"}],
                "explanation": "P2 says $86.00.",
            },
            {
                "id": "c3",
                "text": "Metro describes the pass as the best deal in town",
                "label": "UNSUPPORTED",
                "category": "quote",
                "quotes": [],
                "explanation": "No passage says this.",
            },
            {
                "id": "c4",
                "text": "Passes are sold at station vending machines.",
                "label": "PARTIALLY_SUPPORTED",
                "category": "process",
                "quotes": [
                    {"passage_id": "P1", "quote": "Passes are sold at station vending machines"}
                ],
                "explanation": (
                    "Also sold at the customer service center; the answer narrows where to buy."
                ),
            },
        ],
        "fabrications": [
            {
                "kind": "quote",
                "text": '"the best deal in town"',
                "reason": "No passage contains it.",
            }
        ],
        "omissions": [
            {
                "text": "Seniors need a valid Senior ID card.",
                "passage_id": "P1",
                "quote": "with a valid Senior ID card",
            }
        ],
        "counts": {
            "total": 4,
            "supported": 2,
            "partially_supported": 1,
            "contradicted": 1,
            "unsupported": 0,
        },
        "verdict": "MOSTLY_GROUNDED",
        "rewrite_note": "Say $86.00 and drop the quotation.",
    },
    "fare_policy": {
        "grounded": False,
        "unsupported_claims": [
            'A 30-day pass costs $75.00, and Metro calls it "the best deal in town".'
        ],
        "reasoning": "P2 gives $86.00 and no passage has the quotation.",
    },
    "claim_verification": {
        "claims": [
            {
                "claim_id": "c1",
                "claim_text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
                "verification_status": "SUPPORTED",
                "source_passage_id": "P1",
                "source_text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride",
                "explanation": "P1.",
            },
            {
                "claim_id": "c2",
                "claim_text": "A 30-day pass costs $75.00",
                "verification_status": "CONTRADICTED",
                "source_passage_id": "P2",
                "source_text": "A 30-day pass costs $86.00",
                "explanation": "P2 says $86.00.",
            },
            {
                "claim_id": "c3",
                "claim_text": "Metro calls it the best deal in town",
                "verification_status": "UNSUPPORTED",
                "source_passage_id": None,
                "source_text": None,
                "explanation": "Not in the passages.",
            },
            {
                "claim_id": "c4",
                "claim_text": "Passes are sold at station vending machines.",
                "verification_status": "SUPPORTED",
                "source_passage_id": "P2",
                "source_text": "Passes are sold at station vending machines",
                "explanation": "P2.",
            },
        ],
        "grounding_score": 0.5,
        "total_claims": 4,
        "supported_claims": 2,
        "unsupported_claims": 1,
        "contradicted_claims": 1,
    },
    "sentence_map": {
        "sentences": [
            {
                "index": 0,
                "text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
                "verdict": "GROUNDED",
                "reason": None,
            },
            {
                "index": 1,
                "text": "A 30-day pass costs $75.00.",
                "verdict": "CONTRADICTED",
                "reason": 'P2: "A 30-day pass costs $86.00"',
            },
            {
                "index": 2,
                "text": "Passes are sold at station vending machines.",
                "verdict": "PARTIALLY_GROUNDED",
                "reason": "Also at the customer service center.",
            },
        ],
        "summary": {
            "total_sentences": 3,
            "grounded_count": 1,
            "unsupported_count": 1,
            "contradicted_count": 1,
        },
    },
}
