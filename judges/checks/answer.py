"""The answer as the checks read it: its quantities, quotations, provenance statements and sentences
worked out once, and which of its quantities the passages' text gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from judges.checks.mentions import ProvenanceMention, provenance_mentions
from judges.checks.quoted import Quotation, quotations
from judges.checks.spans import SpanIndex
from judges.passages import index_units
from judges.text import Quantity, quantities, split_sentences
from judges.types import JudgeRequest, Span


class Answer:
    """The request with what the checks share worked out once."""

    def __init__(self, request: JudgeRequest):
        self.request = request
        self.text = request.answer
        self.passages = request.passages

    @cached_property
    def quantities(self) -> list[Quantity]:
        return quantities(self.text)

    @cached_property
    def quotations(self) -> list[Quotation]:
        return quotations(self.text)

    @cached_property
    def provenance(self) -> list[ProvenanceMention]:
        return provenance_mentions(self.text, self.request)

    @cached_property
    def provenance_index(self) -> SpanIndex:
        """The provenance statements' spans, found by overlap."""
        index = SpanIndex()
        for position, mention in enumerate(self.provenance):
            index.add(mention.span, position)
        return index

    @cached_property
    def sentences(self) -> list[Span]:
        return split_sentences(self.text)

    @cached_property
    def sentence_index(self) -> SpanIndex:
        index = SpanIndex()
        for position, span in enumerate(self.sentences):
            index.add(span, position)
        return index

    def values_in_text(self, wanted: Sequence[Quantity]) -> set[str]:
        """The values of `wanted` that some passage's text gives (never their headers):
        `quantity_values(passage.text)` holds them.

        Asked of each passage's unit index (judges.passages.index_units), the one the offline
        judge reads too: a passage is indexed once per request whichever reads it first, and
        reading its values for many asked at once is one pass over it (`UnitIndex.read_values`).
        Passages are asked in turn only for the values still missing."""
        missing = list(dict.fromkeys(quantity.value for quantity in wanted))
        found: set[str] = set()
        for passage in self.passages:
            if not missing:
                break
            index = index_units(passage.text)
            index.read_values(missing)
            found.update(value for value in missing if index.has_value(value))
            missing = [value for value in missing if value not in found]
        return found
