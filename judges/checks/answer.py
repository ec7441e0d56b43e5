"""The answer as the checks read it: its quantities, quotations, provenance statements and sentences
worked out once, and which of its quantities the passages' text gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from judges.checks.provenance import ProvenanceMention, provenance_mentions
from judges.checks.quotes import Quotation, quotations
from judges.checks.spans import SpanIndex
from judges.text import Quantity, quantities, split_sentences, values_in
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
    def sentences(self) -> list[Span]:
        return split_sentences(self.text)

    @cached_property
    def sentence_index(self) -> SpanIndex:
        index = SpanIndex()
        for position, span in enumerate(self.sentences):
            index.add(span, position)
        return index

    def values_in_text(self, wanted: Sequence[Quantity]) -> set[str]:
        """The values of `wanted` that some passage's text gives (never their headers).

        Reading a passage's quantities is the costly part of the checks (about 0.4 ms for 1,500
        characters the first time a passage is seen), and an answer's numbers usually stand as
        written in a few sentences of the passages: so the pieces of the passages
        (judges.text.quantity_pieces, about a sentence each) where a wanted value stands as
        written are read first, and reading stops once every value is found. A value found
        nowhere still reads them all; which are found does not depend on the order."""
        forms: dict[str, set[str]] = {}
        for quantity in wanted:
            forms.setdefault(quantity.value, set()).add(quantity.text)
        return values_in([passage.text for passage in self.passages], forms)
