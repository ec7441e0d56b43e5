"""Check 3, citations: every cited passage must exist and the passages a sentence cites must support
it.

**Citations** -- `[P3]`, `[3]`, `[P1, P2]`, `(P3)`: every cited passage must exist (`[3]` names
the passage "3", or "P3" when the passages are P-numbered), else a `citation` fabrication; a
sentence whose citations all name missing passages becomes UNSUPPORTED. The passages a sentence
cites (their union) must support it: contain every quantity it states and share some of its
content words; where they hold less than CITATION_MIN_RECALL (50%) of them, no uncited passage may
hold much more (words missing are no evidence that the sentence is false; a passage that says more
of it is evidence that the wrong one is cited). Else a `citation` fabrication and the sentence's
claims become at most PARTIALLY_SUPPORTED. A marker cites the sentence it stands in, or the one
before when it opens its sentence on the same line ("... free. [P2] Youth ..."). Not checked for
support: a sentence saying the sources are silent ("the policy does not specify ...") and one
that only lists sources ("Reference: [1]"). A marker copied from a passage with the words before
it ("... in 1991.[20,21]", the page's own footnotes) is part of the quote, not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from judges.checks.answer import Answer
from judges.checks.findings import Finding
from judges.checks.spans import blank
from judges.passages import index_units
from judges.silence import silence
from judges.text import META_STEMS, content_words, quantities, stem
from judges.types import Fabrication, Passage, Span


# Share of a citing sentence's content words the cited passages must contain (and every number).
CITATION_MIN_RECALL = 0.5


CITATION_MARKER = re.compile(
    r"\[\s*(?P<square>P?\d+(?:\s*[,;]\s*P?\d+)*)\s*\]"
    r"|\(\s*(?P<round>P\d+(?:\s*[,;]\s*P?\d+)*)\s*\)",
    re.IGNORECASE,
)
_MARKER_ID = re.compile(r"P?\d+", re.IGNORECASE)


@dataclass(frozen=True)
class CitationMarker:
    text: str
    span: Span
    cited: tuple[str, ...]  # as written: "P3", "3"


def citation_markers(text: str) -> list[CitationMarker]:
    return [
        CitationMarker(match.group(), match.span(),
                       tuple(_MARKER_ID.findall(match.group("square") or match.group("round"))))
        for match in CITATION_MARKER.finditer(text)
    ]


def resolve_citation(cited: str, passages: Sequence[Passage]) -> str | None:
    """The id of the passage a citation names, or None: "P3" or "p3" names "P3" (or a passage
    whose id is "3"); "3" names the passage "3", else "P3" when the passages are P-numbered."""
    ids = {passage.id for passage in passages}
    number = cited.lstrip("Pp")
    for candidate in (cited, cited.upper(), number, f"P{number}"):
        if candidate in ids:
            return candidate
    return None


def check_citations(answer: Answer) -> list[Finding]:
    markers = [m for m in citation_markers(answer.text) if not _copied(answer, m)]
    if not markers:
        return []
    by_sentence: dict[Span, list[CitationMarker]] = {}
    for marker in markers:
        sentence = _citing_sentence(answer, marker)
        by_sentence.setdefault(sentence, []).append(marker)

    findings = []
    p_numbered = all(re.fullmatch(r"P\d+", p.id or "") for p in answer.passages)
    # What a sentence says, without its markers and provenance phrases (check 4 judges those).
    said = blank(answer.text, [m.span for m in markers] + [m.span for m in answer.provenance])
    # Each cited passage is asked for the answer's values at once (one pass when they are many),
    # in the passage index the judge and the number check share (`index_units`).
    values = [quantity.value for quantity in answer.quantities]
    cited_passages = {
        resolve_citation(cited, answer.passages) for marker in markers for cited in marker.cited
    }
    for passage in answer.passages:
        if passage.id in cited_passages:
            index_units(passage.text).read_values(values)
    for sentence, cited_here in by_sentence.items():
        existing: list[str] = []
        invented: list[Finding] = []
        for marker in cited_here:
            for cited in marker.cited:
                pid = resolve_citation(cited, answer.passages)
                if pid is not None:
                    existing.append(pid)
                    continue
                shown = f"P{cited}" if cited.isdigit() and p_numbered else cited.upper()
                note = f"Citation check: {marker.text} cites {shown}, which does not exist."
                invented.append(
                    Finding(
                        check="citation",
                        span=sentence,
                        note=note,
                        lower_to="UNSUPPORTED",
                        category="citation",
                        fabrication=Fabrication(
                            kind="citation",
                            text=marker.text,
                            answer_span=marker.span,
                            reason=f"cites {shown}, which does not exist",
                        ),
                    )
                )
        if not existing:
            # Every passage the sentence cites is invented: nothing it cites supports it.
            findings.extend(invented)
            continue
        # Some cited passages exist: the sentence stands or falls with them (checked below).
        findings.extend(
            Finding(f.check, f.span, f.note, "PARTIALLY_SUPPORTED", f.category, f.fabrication)
            for f in invented
        )
        cited_ids = list(dict.fromkeys(existing))
        problem = _unsupported_by(
            said[slice(*sentence)],
            [answer.request.passage(pid) for pid in cited_ids],
            [p for p in answer.passages if p.id not in cited_ids],
        )
        if problem is None:
            continue
        last = cited_here[-1]
        names = ", ".join(cited_ids)
        verb = "does" if len(cited_ids) == 1 else "do"
        reason = f"{names} {verb} not support this sentence"
        findings.append(Finding(
            check="citation", span=sentence, note=f"Citation check: {reason} ({problem}).",
            lower_to="PARTIALLY_SUPPORTED", category="citation",
            fabrication=Fabrication(kind="citation", text=last.text, answer_span=last.span,
                                    reason=f"{reason} ({problem})"),
        ))
    return findings


COPIED_CONTEXT = 30  # characters before a marker that must be a passage's too for it to be copied


def _copied(answer: Answer, marker: CitationMarker) -> bool:
    """Whether the marker came with the words before it from a passage ("... in 1991.[20,21]"
    copied from a web page whose own footnotes those are): part of the quote, not a citation of
    passage ids."""
    start = max(0, marker.span[0] - COPIED_CONTEXT)
    while start > 0 and answer.text[start - 1].isalnum():
        start -= 1  # whole words
    stretch = answer.text[start:marker.span[1]]
    return len(stretch) > len(marker.text) + 10 and any(stretch in p.text for p in answer.passages)


def _citing_sentence(answer: Answer, marker: CitationMarker) -> Span:
    """The sentence a marker cites for: the one it stands in, or the one before when the marker
    opens its sentence ("... free. [P2] Youth pay ...") or is all the sentence has."""
    found = answer.sentence_index.overlapping((marker.span[0], marker.span[0] + 1))
    if not found:
        return marker.span
    position = found[0]
    sentence = answer.sentences[position]
    before = answer.text[sentence[0]:marker.span[0]]
    if position > 0 and not CITATION_MARKER.sub("", before).strip():
        previous = answer.sentences[position - 1]
        if (
            "\n" not in answer.text[previous[1] : sentence[0]]
        ):  # a marker opening a line cites that line
            return previous
    return sentence


# A sentence saying the sources are silent (judges.silence) asserts nothing a cited passage could
# contain, and "Sources: [1], [2]" only lists them: neither is checked for support (a citation of a
# missing passage still is).
_REFERENCE_WORDS = frozenset("reference source citation context passage document see cited".split())


def _unsupported_by(
    text: str, cited: list[Passage | None], others: Sequence[Passage] = ()
) -> str | None:
    """Why the `cited` passages together do not support `text` (a sentence), or None when they do
    (`others`: the passages it does not cite)."""
    if (
        silence(text)
        or not {w for w in content_words(text) if stem(w) not in META_STEMS} - _REFERENCE_WORDS
    ):
        return None  # "Based on the given context [1]," says nothing a passage could hold
    # Each cited passage's sets are asked in turn, not put together: a sentence may cite many
    # long passages.
    texts = [p.text for p in cited if p is not None]
    missing_numbers = [q.text for q in quantities(text)
                       if not any(index_units(t).has_value(q.value) for t in texts)]
    if missing_numbers:
        return "it does not state " + ", ".join(f"'{n}'" for n in missing_numbers)
    words = set(content_words(text))
    if not words:
        return None
    recall = _recall(words, texts)
    if recall == 0:
        return "it shares none of the sentence's words"
    if recall >= CITATION_MIN_RECALL:
        return None
    # Words the cited passages lack are no evidence by themselves (a sentence may say it in its
    # own words); another passage that holds much more of the sentence is: the wrong one is cited.
    elsewhere = max((_recall(words, [p.text]) for p in others), default=0.0)
    if elsewhere >= max(CITATION_MIN_RECALL, recall + CITATION_MIN_RECALL / 2):
        return (f"only {round(recall * 100)}% of the sentence's words are there, "
                f"{round(elsewhere * 100)}% in a passage it does not cite")
    return None


def _recall(words: set[str], texts: Sequence[str]) -> float:
    return sum(1 for word in words if any(word in _passage_words(t) for t in texts)) / len(words)


@lru_cache(maxsize=1024)
def _passage_words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))
