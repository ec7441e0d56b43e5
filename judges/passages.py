"""Passage text indexed for the offline judge: which words and numbers it contains, and which of its
sentences best matches a claim.

Only `Passage.text` is indexed. Header fields (title, agency, section, source, fetched date) are
never evidence for a policy fact, so they are not searched here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from judges.text import Span, content_words, key_terms, number_values, rough_pieces, split_sentences


@dataclass(frozen=True)
class Piece:
    span: Span
    terms: frozenset[str]


@dataclass(frozen=True)
class PassageIndex:
    text: str
    terms: frozenset[str]  # content words and normalized numbers
    numbers: frozenset[str]  # normalized numbers only

    def best_sentence(self, terms: frozenset[str]) -> Span | None:
        """The sentence sharing the most terms with `terms` (the earliest on a tie), or None.

        pysbd costs several milliseconds per passage, far more than the rest of the judge, so it
        only settles the boundaries around the best-matching rough piece: that piece and one
        neighbour on each side, which covers a sentence that an abbreviation cut into pieces.
        """
        pieces = _pieces(self.text)
        best = _most_shared(terms, pieces)
        if best is None:
            return None
        first = pieces[max(best - 1, 0)].span[0]
        last = pieces[min(best + 1, len(pieces) - 1)].span[1]
        region = self.text[first:last]
        sentences = [Piece((start + first, end + first), found) for (start, end), found in _sentences(region)]
        choice = _most_shared(terms, sentences)
        return sentences[choice].span if choice is not None else pieces[best].span


def _most_shared(terms: frozenset[str], pieces: Sequence[Piece]) -> int | None:
    best, best_count = None, 0
    for position, piece in enumerate(pieces):
        count = len(terms & piece.terms)
        if count > best_count:  # strictly greater: ties go to the earlier piece
            best, best_count = position, count
    return best


# The same policy passages come back for answer after answer, so what is learnt about a passage
# text is kept per process. Bounded, because a passage may be up to 100k characters.
@lru_cache(maxsize=512)
def index_passage(text: str) -> PassageIndex:
    numbers = frozenset(number_values(text))
    return PassageIndex(text=text, terms=frozenset(content_words(text)) | numbers, numbers=numbers)


@lru_cache(maxsize=512)
def _pieces(text: str) -> tuple[Piece, ...]:
    return tuple(Piece(span, key_terms(text[span[0]:span[1]])) for span in rough_pieces(text))


@lru_cache(maxsize=4096)  # keyed by a few hundred characters around a match, so more of them
def _sentences(text: str) -> tuple[tuple[Span, frozenset[str]], ...]:
    return tuple((span, key_terms(text[span[0]:span[1]])) for span in split_sentences(text))


def clear_caches() -> None:
    """Forget every indexed passage (benchmarks use it to measure the cold path)."""
    index_passage.cache_clear()
    _pieces.cache_clear()
    _sentences.cache_clear()
