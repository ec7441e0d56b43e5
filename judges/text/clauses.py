"""Where a sentence divides into clauses: one rule for the judge that labels them and the guardrail
that removes them.

A sentence is cut before "; ", before a comma that opens a coordinate clause (", and", ", but",
", yet", ", so"), before a bare " and " / " but " that joins two full clauses (each side has a
subject and a finite auxiliary, copula or modal: "Pets are allowed and cats must be leashed", not
"Pets are allowed and must be leashed"), before a comma that opens a subordinate or relative
clause (", while", ", which", ", who", ", where", ...), around a parenthetical, and after an answer
particle ("Yes," / "No,").
Each piece keeps the joint that links it to what precedes it (", and ", "; ", " (") and is typed:
a *clause* can stand alone once its joint is dropped; a *subordinate* piece or an *aside* (a
parenthetical) leans on the clause before it; a *rest* piece continues that clause after an
aside; a *particle* answers the question with the clause after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from judges.text import Span, content_words

MIN_CLAUSE_WORDS = 3  # fewer content words than this is a fragment, not a claim of its own

_COORDINATORS = "and|but|yet|so"
_SUBORDINATORS = "while|whereas|although|though|which|who|whom|whose|where|when"
_BREAK = re.compile(
    rf";\s+|,\s+(?=(?:{_COORDINATORS}|{_SUBORDINATORS})\b)|\s+\((?=[^)]{{3,}}\))|\)(?=[\s,.;:]|$)"
)
_SUBORDINATE_JOINT = re.compile(rf",\s+(?:{_SUBORDINATORS})\b", re.IGNORECASE)
# Finite auxiliaries, copulas and modals: a closed class of English, so a clause holding one has a
# verb. A subject of one to three words (no subordinator among them) between "and" and it makes the
# right side a full clause.
_FINITE = (
    r"(?:is|are|was|were|has|have|had|can|cannot|may|might|must|will|shall|should|would|could"
    r"|does|do|did|isn't|aren't|wasn't|weren't|hasn't|haven't|can't|won't|doesn't|don't|didn't)"
)
_BARE_JOINT = re.compile(r"\s+(?=(?:and|but)\s)")
_NOT_IN_A_SUBJECT = rf"(?:{_FINITE}|because|that|if|since|as|{_SUBORDINATORS})"
_SUBJECT_THEN_FINITE = re.compile(
    rf"\s*(?:and|but)\s+(?:(?!{_NOT_IN_A_SUBJECT}\b)[\w'’-]+\s+){{1,3}}{_FINITE}\b")
_HAS_FINITE = re.compile(rf"\b{_FINITE}\b", re.IGNORECASE)
ANSWER_PARTICLE = re.compile(r"^\s*(?:yes|no)\b[,.!]?", re.IGNORECASE)
LEADING_JOINT = re.compile(rf"^[\s,;:]*(?:(?:{_COORDINATORS})\b[\s,]*)?", re.IGNORECASE)

PieceKind = Literal["clause", "subordinate", "aside", "rest", "particle"]


@dataclass(frozen=True)
class Piece:
    span: Span  # into the text, the joint to what precedes included
    kind: PieceKind


def clause_pieces(text: str, span: Span) -> list[Piece]:
    """`text[span]` (one sentence) cut into typed pieces that cover it exactly, in order."""
    start, end = span
    sentence = text[start:end]
    particle = ANSWER_PARTICLE.match(sentence)
    cuts: list[tuple[int, PieceKind]] = [(0, "clause")]
    if (
        particle
        and particle.end() < len(sentence.rstrip())
        and content_words(sentence[particle.end() :])
    ):
        cuts = [(0, "particle"), (particle.end(), "clause")]
    breaks = [match.end() if match.group().startswith(")") else match.start()
              for match in _BREAK.finditer(sentence)]
    for cut in sorted(set(breaks + _bare_joints(sentence))):
        if cuts[-1][0] < cut < len(sentence):
            cuts.append((cut, _kind_at(sentence, cut)))
    bounds = [cut for cut, _ in cuts] + [len(sentence)]
    return [
        Piece((start + bounds[i], start + bounds[i + 1]), kind) for i, (_, kind) in enumerate(cuts)
    ]


def _bare_joints(sentence: str) -> list[int]:
    """Where a bare " and " / " but " joins two full clauses."""
    cuts = []
    for match in _BARE_JOINT.finditer(sentence):
        cut = match.start()
        left = sentence[max(cuts, default=0):cut]
        if _HAS_FINITE.search(left) and _SUBJECT_THEN_FINITE.match(sentence, cut):
            cuts.append(cut)
    return cuts


def _kind_at(sentence: str, cut: int) -> PieceKind:
    if sentence[cut - 1] == ")":
        return "rest"
    if sentence[cut:].lstrip().startswith("("):
        return "aside"
    return "subordinate" if _SUBORDINATE_JOINT.match(sentence, cut) else "clause"


def split_clauses(text: str, span: Span) -> list[Span]:
    """`text[span]` (one sentence) cut at clause boundaries into spans of `text`, trimmed of their
    joints; a piece with fewer than MIN_CLAUSE_WORDS content words stays joined to its neighbour."""
    merged: list[list[int]] = []
    for piece in clause_pieces(text, span):
        piece_start, piece_end = piece.span
        small = len(content_words(text[piece_start:piece_end])) < MIN_CLAUSE_WORDS
        if merged and (
            small or len(content_words(text[merged[-1][0] : merged[-1][1]])) < MIN_CLAUSE_WORDS
        ):
            merged[-1][1] = piece_end
        else:
            merged.append([piece_start, piece_end])
    spans = []
    for piece_start, piece_end in merged:
        piece = text[piece_start:piece_end]
        lead = len(piece) - len(LEADING_JOINT.sub("", piece, count=1))
        trail = len(piece.rstrip(" ,;:"))
        if trail > lead:
            spans.append((piece_start + lead, piece_start + trail))
    return spans or [span]
