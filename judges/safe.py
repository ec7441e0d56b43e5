"""The guardrail view of a judged answer: only what the judge found SUPPORTED, and text that claims
nothing, is handed back.

Every clause (`text.clauses`) that overlaps a PARTIALLY_SUPPORTED, UNSUPPORTED or CONTRADICTED
claim's span is removed; a subordinate clause or an aside goes with the clause it leans on; an
answer particle ("Yes," / "No," opening a sentence, or a bare "Yes." sentence) goes when the
clause it answers with goes. The kept text is the original's, byte for byte, except where a removal
made a new start or end: the joint before a new first clause is dropped and its first letter
capitalized (when the sentence's was), and a sentence whose last clause went keeps its end mark.
A flagged claim without an answer span cannot be placed, so nothing is safe: the result is "".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from judges.text.clauses import ANSWER_PARTICLE, LEADING_JOINT, Piece, clause_pieces
from judges.text import Span, split_sentences
from judges.types import Claim

KEPT_LABELS = frozenset({"SUPPORTED"})

_BULLET = re.compile(r"(?:[-*•+]|\d{1,3}[.)])\s+")
_END_MARK = re.compile(r"[.!?…]+[\"'”’]*$")
_TRAILING_JOINT = re.compile(r"[\s,;:]+$")


def safe_answer(answer: str, claims: Sequence[Claim]) -> str:
    """`answer` without the clauses of every claim that is not SUPPORTED (see the module's rule)."""
    flagged = [claim.answer_span for claim in claims if claim.label not in KEPT_LABELS]
    if any(span is None for span in flagged):
        return ""
    sentences = split_sentences(answer)
    rendered = [_render(answer, span, flagged) for span in sentences]
    for index, (sentence, text) in enumerate(zip(sentences, rendered)):
        if _is_bare_particle(answer[slice(*sentence)]) and index + 1 < len(sentences):
            if rendered[index + 1] is None or _opening_removed(
                answer, sentences[index + 1], flagged
            ):
                rendered[index] = None
    if all(text == answer[slice(*span)] for text, span in zip(rendered, sentences)):
        return answer
    kept = [index for index, text in enumerate(rendered) if text is not None]
    return _join(answer, sentences, kept, rendered) if kept else ""


def _render(answer: str, sentence: Span, flagged: Sequence[Span]) -> str | None:
    """The sentence's kept pieces, joined; None when nothing of it is kept."""
    if not any(_overlaps(sentence, span) for span in flagged):
        return answer[slice(*sentence)]
    pieces = clause_pieces(answer, sentence)
    kept = _kept_pieces(answer, pieces, flagged)
    if not kept:
        return None
    text = "".join(answer[slice(*pieces[i].span)] for i in kept)
    if kept[0] != 0:
        bullet = _BULLET.match(answer, sentence[0])
        text = LEADING_JOINT.sub("", text, count=1)
        if (
            answer[sentence[0] : sentence[0] + 1].isupper()
            or bullet
            and answer[bullet.end()].isupper()
        ):
            text = text[:1].upper() + text[1:]
        text = (bullet.group() if bullet else "") + text
    if kept[-1] != len(pieces) - 1:
        end_mark = _END_MARK.search(answer[slice(*sentence)])
        text = _TRAILING_JOINT.sub("", text) + (end_mark.group() if end_mark else "")
    return text


def _kept_pieces(answer: str, pieces: list[Piece], flagged: Sequence[Span]) -> list[int]:
    """Indexes of the pieces that stay. A clause, its rest pieces and the particle before it share
    one fate; its subordinate pieces and asides fall with it or alone, except a subordinate piece
    holding a comma: it may hold the rest of the clause it interrupts ("The museum, which opened in
    1901, is free"), so its clause falls with it."""
    # one per clause: the clause, the particle before it, its rest pieces
    groups: list[list[int]] = []
    leaning: dict[int, int] = {}  # subordinate piece or aside -> its clause's group
    for index, piece in enumerate(pieces):
        if piece.kind in ("subordinate", "aside") and groups:
            leaning[index] = len(groups) - 1
        elif groups and (piece.kind == "rest" or pieces[index - 1].kind == "particle"):
            groups[-1].append(index)
        else:
            groups.append([index])
    hit = {
        i for i, piece in enumerate(pieces) if any(_overlaps(piece.span, span) for span in flagged)
    }
    for index, group in leaning.items():
        interrupts = "," in answer[pieces[index].span[0] + 1:pieces[index].span[1]]
        if index in hit and pieces[index].kind == "subordinate" and interrupts:
            hit.update(groups[group])
    kept = {i for group in groups if not hit & set(group) for i in group}
    kept |= {i for i, group in leaning.items() if i not in hit and groups[group][0] in kept}
    return sorted(kept)


def _opening_removed(answer: str, sentence: Span, flagged: Sequence[Span]) -> bool:
    pieces = clause_pieces(answer, sentence)
    return 0 not in _kept_pieces(answer, pieces, flagged)


def _is_bare_particle(sentence: str) -> bool:
    particle = ANSWER_PARTICLE.match(sentence)
    return particle is not None and not sentence[particle.end():].strip(" .,!")


def _overlaps(first: Span, second: Span) -> bool:
    return first[0] < second[1] and second[0] < first[1]


def _join(answer: str, sentences: list[Span], kept: list[int], rendered: list[str | None]) -> str:
    # gaps[i] is the text before sentence i; gaps[-1] is what follows the last sentence. The
    # answer's own leading and trailing whitespace is kept whichever sentences go; where sentences
    # went, their neighbours are joined by the skipped gap with the most line breaks, so paragraphs
    # and list items stay on their own lines.
    boundaries = [0] + [edge for span in sentences for edge in span] + [len(answer)]
    gaps = [answer[boundaries[i]:boundaries[i + 1]] for i in range(0, len(boundaries), 2)]
    parts = [gaps[0]]
    for previous, current in zip(kept, kept[1:]):
        parts.append(rendered[previous])
        parts.append(max(gaps[previous + 1:current + 1], key=lambda gap: gap.count("\n")))
    parts.append(rendered[kept[-1]])
    parts.append(gaps[-1])
    return "".join(parts)
