"""Plain-text helpers shared by the judges: sentence spans, content words and numbers.

Everything here is deterministic and works on character offsets into the original text, so a span
computed here can be stored, highlighted and sliced back out byte-exact. One module per concern:

- `sentences` -- sentence spans (pysbd, line by line) and the faster rough pieces.
- `words` -- content words, stems, and tokens with offsets and name case.
- `numeric` -- numbers, number words, dates and clock times, and their normalized values.
- `scan` -- scans that try a pattern only where a match can begin.
"""

from judges.text.numeric import (
    MONTHS,
    NUMBER_WORDS,
    NumberMention,
    Quantity,
    key_terms,
    normalize_number,
    number_values,
    numbers,
    quantities,
    quantity_pieces,
    quantity_readings,
    quantity_values,
    readings_by_start,
    year_range_values,
)
from judges.text.scan import WordStarts, matches_at, word_positions
from judges.text.sentences import rough_pieces, split_sentences
from judges.text.words import (
    META_STEMS,
    STOPWORDS,
    WORD_LETTERS,
    Token,
    content_tokens,
    content_words,
    fold_accents,
    piece_stems,
    stem,
    stems,
    token_readings,
)
from judges.types import Span

__all__ = [
    "META_STEMS",
    "MONTHS",
    "NUMBER_WORDS",
    "STOPWORDS",
    "WORD_LETTERS",
    "NumberMention",
    "Quantity",
    "Span",
    "Token",
    "WordStarts",
    "content_tokens",
    "content_words",
    "fold_accents",
    "key_terms",
    "matches_at",
    "normalize_number",
    "number_values",
    "numbers",
    "piece_stems",
    "quantities",
    "quantity_pieces",
    "quantity_readings",
    "quantity_values",
    "readings_by_start",
    "rough_pieces",
    "split_sentences",
    "stem",
    "stems",
    "token_readings",
    "word_positions",
    "year_range_values",
]
