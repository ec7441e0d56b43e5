"""Markup is not a claim: the text a judge reads is the answer with its HTML and Markdown markup
blanked out, character for character, so every offset into it is an offset into the original.

Blanked (replaced by spaces; line breaks stay): HTML tags and comments, code fence lines and inline
code backticks, Markdown heading hashes, list bullets, emphasis marks (`**`, `__`, `*`, `_` at a
word's edge), images, and a link's brackets and target (`[text](url)` keeps `text`). Citation
markers such as "[P1]" are no links and stay. A heading's text is a title, not a claim
(`is_heading`), and a lead-in ending in a colon introduces the claims after it (`is_lead_in`).
"""

from __future__ import annotations

import re

from judges.text import quantities

_MARKUP = re.compile(
    r"<!--.*?-->"                                  # an HTML comment
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"  # an HTML tag
    r"|^[ \t]*(?:```|~~~)[^\n]*"                   # a code fence line
    r"|!\[[^\]\n]*\]\([^)\n]*\)"                   # an image
    r"|^[ \t]{0,3}#{1,6}(?=[ \t])"                 # heading hashes
    r"|^[ \t]*[-*+•](?=[ \t])"                     # a list bullet
    r"|(?<![\w*_])(?:\*\*|__|\*|_)(?=[^\s*_])"     # emphasis opening a word
    r"|(?<=[^\s*_])(?:\*\*|__|\*|_)(?![\w*_])"     # emphasis closing a word
    r"|`",                                         # inline code
    re.MULTILINE | re.DOTALL,
)
_OPENING_BEFORE = re.compile(r"(?:\*\*|__|\*|_|<[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?>)$")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]")
_LINK = re.compile(r"\[(?=[^\]\n]+\]\([^)\s]+\))|\]\([^)\s]+\)")


def plain_view(text: str) -> str:
    """`text` with its markup blanked: the same length, line breaks where they were."""
    if not any(mark in text for mark in "<`#*_[-+•~"):
        return text
    return _LINK.sub(_blank, _MARKUP.sub(_blank, text))


def is_heading(text: str, start: int) -> bool:
    """Whether the line part starting at `start` is a Markdown heading: a title, not a claim."""
    line_start = text.rfind("\n", 0, start) + 1
    return _HEADING.match(text, line_start) is not None and not text[line_start:start].strip(" \t#")


def is_lead_in(sentence: str) -> bool:
    """Whether a sentence only introduces what follows it: it ends in a colon and states no
    quantity ("Here is what the policy says:", "Key points include:"). The claims are what it
    introduces; a count ("The passage names three topics:") is a claim of its own."""
    return sentence.rstrip().endswith(":") and not quantities(sentence)


def with_open_marks(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """`span` widened over the emphasis marks or tag just before it when it holds their closing
    ones ("**Adults** pay" rather than "Adults** pay"), so a highlight never splits a pair."""
    start, end = span
    opening = _OPENING_BEFORE.search(text, 0, start)
    if opening and opening.end() == start and _closing(opening.group()) in text[start:end]:
        return opening.start(), end
    return span


def _closing(mark: str) -> str:
    return "</" + mark[1:].split(">")[0].split()[0].rstrip(">") if mark.startswith("<") else mark


def _blank(match: re.Match[str]) -> str:
    return "".join(char if char in "\r\n" else " " for char in match.group())
