"""Deterministic answer checks: run after every backend, no model, only ever adding findings.

`apply_checks(request, result)` adds what the checks find to any backend's result. One module per
rule, each module's docstring stating it:

- `quotes` -- check 1: a quotation in the answer stands in some passage.
- `numbers` -- check 2: every quantity the answer states is in some passage's text.
- `citations` -- check 3: every cited passage exists and the passages a sentence cites support it.
- `provenance` -- check 4: what the answer says about its sources agrees with the passage headers.
- `trust` -- checks 5-7: text that addresses the judge is no evidence, and a SUPPORTED claim rests
  on a trusted passage.
- `apply` -- runs them all and lands the findings on the claims (lower, never raise; add only).

Shared by them: `answer` (the answer read once), `findings` (what a check found), `matching`
(text matching after normalization), `spans` (masks and overlap lookups over the answer), and the
readers `answer` uses, below every check so that no check and `answer` import each other:
`quoted` (the quotations in a text) and `mentions` (its provenance statements).
"""

from judges.checks.answer import Answer
from judges.checks.apply import MAX_NOTES_PER_CLAIM, apply_checks
from judges.checks.citations import (
    CITATION_MIN_RECALL, CitationMarker, check_citations, citation_markers, resolve_citation,
)
from judges.checks.findings import Finding
from judges.checks.matching import find_in_passages
from judges.checks.mentions import ProvenanceMention, ProvenanceVerdict, provenance_mentions
from judges.checks.numbers import check_numbers
from judges.checks.provenance import PROVENANCE_FILLER, check_provenance, provenance_verdict
from judges.checks.quoted import QUOTE_MIN_CHARS, QUOTE_MIN_WORDS, Quotation, quotations
from judges.checks.quotes import check_quotations
from judges.checks.trust import (
    SUPPORT_MIN_UNDER_ATTACK, SUPPORT_MIN_WORDS, check_answer_injections,
    check_evidence, check_support, trusted_passages,
)

__all__ = [
    "CITATION_MIN_RECALL",
    "MAX_NOTES_PER_CLAIM",
    "PROVENANCE_FILLER",
    "QUOTE_MIN_CHARS",
    "QUOTE_MIN_WORDS",
    "SUPPORT_MIN_UNDER_ATTACK",
    "SUPPORT_MIN_WORDS",
    "Answer",
    "CitationMarker",
    "Finding",
    "ProvenanceMention",
    "ProvenanceVerdict",
    "Quotation",
    "apply_checks",
    "check_answer_injections",
    "check_citations",
    "check_evidence",
    "check_numbers",
    "check_provenance",
    "check_quotations",
    "check_support",
    "citation_markers",
    "find_in_passages",
    "provenance_mentions",
    "provenance_verdict",
    "quotations",
    "resolve_citation",
    "trusted_passages",
]
