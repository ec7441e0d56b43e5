"""New content: the words of a claim that no passage has in any form.

One definition for the offline judge and the quote check (issue 27): a claim that says something
in other words than its passages is a paraphrase; a claim whose words the passages do not have at
all, as written, inflected or derived (judges.lexicon.forms), says something new.
"""

from __future__ import annotations

from collections.abc import Callable

from judges import lexicon
from judges.text import META_STEMS, content_tokens, stem

NEW_CONTENT_WORDS = 2  # new words that make a claim's content new: one is often the writer's own


def is_new_content(new: list[str], words: int, coverage: float) -> bool:
    """Whether a claim of `words` content words, `new` of them in no passage (`new_words`), says
    something new: NEW_CONTENT_WORDS or more, outweighing the share (`coverage`) its closest
    passage text holds of it. One new word is often a writer's own ("known", "located")."""
    return len(new) >= NEW_CONTENT_WORDS and len(new) / max(words, 1) >= coverage


def new_words(
    text: str, known: Callable[[str], bool], excused: frozenset[str] = frozenset()
) -> list[str]:
    """The content words of `text` (as written, each once, in order) that no passage has in any
    form: neither the word's stem nor that of one of its forms is `known` (a stem a passage has).
    Words about the text itself (META_STEMS) and the `excused` stems are never new."""
    found: dict[str, None] = {}
    for token in content_tokens(text):
        word = text[slice(*token.span)]
        if token.stem not in excused and is_new_word(word, token.stem, known):
            found.setdefault(word)
    return list(found)


def is_new_word(word: str, word_stem: str, known: Callable[[str], bool]) -> bool:
    """Whether no passage has `word` (its stem `word_stem`) in any form: neither its stem nor that
    of one of its forms is `known`. A word about the text itself (META_STEMS) is never new."""
    return (
        word_stem not in META_STEMS
        and not known(word_stem)
        and not _said_otherwise(word.lower(), known)
    )


def _said_otherwise(word: str, known: Callable[[str], bool]) -> bool:
    try:
        other = lexicon.forms(word)
    except lexicon.LexiconUnavailable:
        return False
    return any(known(stem(form)) for form in other if form != word)
