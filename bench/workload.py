"""The answer the judge benchmarks feed the pipeline, and the LLM reply that judges it.

Issue 8's shape: a 5-sentence answer (5 claims) against 10 passages of about 1,500 characters.
The answer's sentences are lifted from the passages (one with a changed price), so the canned
`claim_audit` reply's claims and quotes are found the way a real model's would be: claims in the
answer, quotes verbatim in the passages.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.offline_judge import passage_text  # noqa: E402

PASSAGES = 10
PASSAGE_CHARS = 1500


def payload(rng: random.Random, *, claims: int = 5) -> dict:
    """An ingest payload whose answer has `claims` sentences, each taken from some passage."""
    texts = [passage_text(rng, PASSAGE_CHARS) for _ in range(PASSAGES)]
    sentences = []
    for _ in range(claims):
        source = rng.randrange(PASSAGES)
        sentences.append(rng.choice(texts[source].split(". ")).rstrip(".") + ".")
    return {
        "question": "What does it cost?",
        "passages": [
            {
                "id": f"P{i + 1}",
                "text": text,
                "agency": "Metro",
                "title": "Fare Policy",
                "section": f"{i + 1}.1",
                "fetched_at": "2026-08-16",
            }
            for i, text in enumerate(texts)
        ],
        "answer": " ".join(sentences),
    }


def claim_audit_reply(body: dict) -> str:
    """The reply a careful model would give for `payload(...)`: one claim per sentence, quoting
    the passage it came from (the first claim labelled PARTIALLY_SUPPORTED, so routing has work)."""
    texts = {p["id"]: p["text"] for p in body["passages"]}
    claims = []
    for number, sentence in enumerate(_sentences(body["answer"]), start=1):
        core = sentence.rstrip(".")
        pid = next((pid for pid, text in texts.items() if core in text), "P1")
        claims.append(
            {
                "id": f"c{number}",
                "text": sentence,
                "label": "PARTIALLY_SUPPORTED" if number == 1 else "SUPPORTED",
                "category": "price" if "$" in sentence else "other",
                "quotes": [{"passage_id": pid, "quote": core}],
                "explanation": f"{pid} states it.",
            }
        )
    supported = sum(c["label"] == "SUPPORTED" for c in claims)
    return json.dumps(
        {
            "claims": claims,
            "fabrications": [],
            "omissions": [],
            "counts": {
                "total": len(claims),
                "supported": supported,
                "partially_supported": len(claims) - supported,
                "contradicted": 0,
                "unsupported": 0,
            },
            "verdict": "MOSTLY_GROUNDED",
            "rewrite_note": "Qualify the first sentence.",
        }
    )


def _sentences(answer: str) -> list[str]:
    # The answer is built from whole sentences joined by one space, each ending in a period.
    parts = answer.split(". ")
    return [part if part.endswith(".") else part + "." for part in parts]


def bench_database_url(suffix: str) -> str:
    """BENCH_DATABASE_URL, else DATABASE_URL's server with `<its database name><suffix>`: a database
    of the benchmark's own, created and dropped by it."""
    if os.environ.get("BENCH_DATABASE_URL"):
        return os.environ["BENCH_DATABASE_URL"]
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk")
    parts = urlsplit(base)
    if not parts.scheme.startswith("postgres"):
        sys.exit(
            "this benchmark needs Postgres: set DATABASE_URL or BENCH_DATABASE_URL to"
            " postgres://..."
        )
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


def admin_sql(database_url: str, statement: str) -> None:
    """Run CREATE/DROP DATABASE on the server of `database_url` (from its `postgres` database)."""
    import psycopg

    parts = urlsplit(database_url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(statement)
