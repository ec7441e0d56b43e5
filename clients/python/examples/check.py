"""Judge one answer and print what a guardrail would use. Run against `make run`:

    CLAIMDESK_URL=http://127.0.0.1:8000 CLAIMDESK_TOKEN=<the printed token> python check.py
"""

from claimdesk_client import Client

PASSAGES = [
    {"id": "fares-4.2", "title": "Fare Policy", "section": "4.2",
     "text": "Riders aged 65 and older pay a reduced fare of $1.00 per ride. Proof of age is required."},
    {"id": "passes-2", "text": "A 30-day pass costs $92.00 and covers all buses and trains."},
]
ANSWER = "Riders aged 65 and older pay a reduced fare of $1.00 per ride. A 30-day pass costs $75.00."

with Client() as claimdesk:  # CLAIMDESK_URL and CLAIMDESK_TOKEN
    result = claimdesk.check(ANSWER, PASSAGES, question="Senior fare and a monthly pass?", timeout=30)
    print(f"{result.id}: {result.status} {result.verdict} score={result.grounding_score}")
    for claim in result.claims:
        where = ", ".join(f"{e.passage_id} {e.span}" for e in claim.evidence) or "no evidence"
        print(f"  {claim.label:<20} {claim.text!r} ({where})")
    print(f"safe answer: {result.safe_answer!r}")
    print(f"review: {result.review.status} ({result.review.reason})")
