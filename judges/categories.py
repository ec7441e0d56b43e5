"""A claim's category (DESIGN.md's list) from its wording, for judges and profiles whose output
names none: the first rule that matches, else "other"."""

from __future__ import annotations

import re

# Capitalized on purpose: "may" the verb is not May the month.
_MONTH_NAME = (
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b\.?"
)

# Ordered: the first rule that matches names the category, so "Seniors pay $1.35" is a price
# claim, "Seniors need a Medicare card" a document claim and "Seniors ride at half fare" an age one.
CATEGORY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quote", re.compile(r"[\"“”][^\"“”]{3,}[\"“”]")),
    (
        "price",
        re.compile(
            r"[$€£]\s?\d|\b\d+(?:\.\d+)?\s*(?:dollars?|cents?)\b|\b(?:free|costs?|price[sd]?)\b",
            re.I,
        ),
    ),
    (
        "document",
        re.compile(
            r"\bIDs?\b|\b(?:card|proof|documents?|documentation|certificate|passport|license)s?\b",
            re.I,
        ),
    ),
    (
        "age",
        re.compile(
            r"\b(?:ages?|aged|years? old|seniors?|child(?:ren)?|kids?|youth|minors?|infants?)\b",
            re.I,
        ),
    ),
    (
        "provenance",
        re.compile(r"\b(?:fetched|retrieved|source|according to|published|last updated)\b", re.I),
    ),
    (
        "date",
        re.compile(r"\b(?:19|20)\d\d\b|\b(?:deadline|expires?|until|effective)\b|" + _MONTH_NAME),
    ),
    (
        "program",
        re.compile(r"\b(?:programs?|discounts?|reduced fares?|half fare|pass(?:es)?)\b", re.I),
    ),
    (
        "process",
        re.compile(
            r"\b(?:apply|applie[sd]|applica|submi|visit|regist|enrol|renew|sign\w* up|mail)\w*",
            re.I,
        ),
    ),
)


def category_for(sentence: str) -> str:
    return next((name for name, pattern in CATEGORY_RULES if pattern.search(sentence)), "other")
