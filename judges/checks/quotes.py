"""Check 1, quotations: a quotation in the answer must stand in some passage.

**Quotations** -- text the answer puts in quotation marks ("…", “…”, or '…' when it is clearly a
quotation and not an apostrophe) that is at least QUOTE_MIN_WORDS words or QUOTE_MIN_CHARS
characters long must be in some passage's text after normalization (Unicode NFKC, case, runs of
whitespace, curly quotes, dashes, spaces before punctuation; an ellipsis in the quotation stands
for a gap). Else a `quote` fabrication, and the claims over it become UNSUPPORTED. A title in
quotation marks ("Beauty and the Beast": every word capitalized but small joining words, at
most 10 words) is a name, not a quotation, and is not checked.
"""

from __future__ import annotations

from judges.checks.answer import Answer
from judges.checks.findings import Finding
from judges.checks.matching import find_in_passages
from judges.types import Fabrication


def check_quotations(answer: Answer) -> list[Finding]:
    findings = []
    for quotation in answer.quotations:
        if find_in_passages(answer.text[slice(*quotation.inner)], answer.passages) is not None:
            continue
        quoted = answer.text[slice(*quotation.span)]
        reason = f"{quoted} appears in no passage"
        findings.append(
            Finding(
                check="quote",
                span=quotation.span,
                note=f"Quote check: {reason}.",
                lower_to="UNSUPPORTED",
                category="quote",
                fabrication=Fabrication(
                    kind="quote", text=quoted, answer_span=quotation.span, reason=reason
                ),
            )
        )
    return findings
