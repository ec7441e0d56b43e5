"""Check 2, numbers: every quantity the answer states must be in some passage's text.

**Numbers** -- every quantity in the answer (money, percentages, ages, durations, counts, dates,
clock times; `judges.text.quantities`) must be in some passage's *text* after normalization
("$86" = "86.00" = "86 dollars", "1,500" = "1500", "50%" = "fifty percent", "January 5, 2027" =
"2027-01-05" = "1/5/2027", "14 days" = "fourteen days"). Header fields are never searched. Else
a `statistic` (or `date`) fabrication, and the claims over it become UNSUPPORTED. Not checked
here: citation markers, list numbers opening a line, URLs, quantities inside a checked quotation
(check 1 covers them) and inside a provenance statement (check 4 covers them).
"""

from __future__ import annotations

from judges.checks.answer import Answer
from judges.checks.findings import Finding
from judges.checks.spans import Mask
from judges.text import Quantity
from judges.types import Fabrication


def check_numbers(answer: Answer) -> list[Finding]:
    skip = Mask(
        len(answer.text), [q.span for q in answer.quotations] + [m.span for m in answer.provenance]
    )
    checked = [quantity for quantity in answer.quantities if not skip.covers(quantity.span)]
    in_text = answer.values_in_text(checked) if checked else set()
    findings = []
    for quantity in checked:
        if quantity.value in in_text:
            continue
        is_date = quantity.kind == "date"
        reason = f"'{quantity.text}' appears in no passage"
        findings.append(
            Finding(
                check="number",
                span=quantity.span,
                note=f"{'Date' if is_date else 'Number'} check: {reason}.",
                lower_to="UNSUPPORTED",
                category=_quantity_category(quantity),
                fabrication=Fabrication(
                    kind="date" if is_date else "statistic",
                    text=quantity.text,
                    answer_span=quantity.span,
                    reason=reason,
                ),
            )
        )
    return findings


def _quantity_category(quantity: Quantity) -> str:
    return {"date": "date", "money": "price"}.get(quantity.kind, "statistic")
