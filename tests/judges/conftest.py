"""Fixtures for the judge library's tests. Plain pytest: no Django, no database."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# `judges` is imported from the checkout, however pytest was started.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from judges.types import JudgeRequest  # noqa: E402

FARE_POLICY = (
    "The regular adult fare is $2.75 per ride. "
    "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card. "
    "Children under 5 ride free with a paying adult."
)
PASSES = (
    "A 30-day pass costs $86.00 and is valid for unlimited rides on buses and trains. "
    "Reduced Fare passes for seniors cost $43. "
    "Passes are sold at station vending machines and at the customer service center."
)


@pytest.fixture(autouse=True)
def _fast_password_hashing():
    """Overrides the project-wide autouse fixture of this name: it needs Django's settings, and the
    judge library's tests must run without Django (also under `-p no:django`)."""


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def fare_request():
    """Build a transit-fare request around `answer`, with two policy passages from Metro."""

    def build(answer: str, **overrides) -> JudgeRequest:
        payload = {
            "question": "How much do seniors pay?",
            "passages": [
                {
                    "id": "P1",
                    "text": FARE_POLICY,
                    "agency": "Metro",
                    "title": "Fare Policy",
                    "section": "4.2",
                    "source_url": "https://metro.example/fares",
                    "fetched_at": "2026-08-16",
                },
                {"id": "P2", "text": PASSES, "agency": "Metro", "title": "Passes"},
            ],
            "answer": answer,
        }
        payload.update(overrides)
        return JudgeRequest.model_validate(payload)

    return build


@pytest.fixture
def good_request() -> JudgeRequest:
    """The request the fake LLM's GOOD reply judges (tests/judges/factories.py)."""
    from tests.judges.factories import GOOD_ANSWER, GOOD_PASSAGE

    return JudgeRequest.model_validate(
        {"passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER}
    )
