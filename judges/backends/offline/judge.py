"""The offline judge (v6): deterministic lexical, numeric and entity rules; no model, no network.

It is the default when no model endpoint is configured, so the app runs on a bare machine.

Claims. Every answer sentence that states something is split at clause boundaries ("; ",
", and/but/while/whereas/although ...", ", which/who/where ...", a parenthetical) when both sides
keep at least MIN_CLAUSE_WORDS content words (`text.clauses`); each piece is one claim with its
exact answer span.
Hedges, redirects ("contact customer service"), lead-ins ending in ":" and references to the text
itself ("Here is a summary of the passage") are not claims.

Evidence. Passages are cut into sentence-like units (`judges.passages.index_units`, cached per
passage text). A claim's terms are the stems of its content words (`judges.text.stem`) and its
quantities; each term weighs its inverse unit frequency over the request's passages
(log((N + 1) / (df + 0.5)), so a word no passage has weighs most), doubled for names (capitalized
words) and quantities. The claim's *support* is the weighted share of its terms found in the best
window: one unit, or it and a neighbour. The window's text is the claim's evidence, quoted exactly;
for a claim not SUPPORTED it carries the aligner's differences (the differing words' offsets in the
passage and in the answer), which the review page marks inside both highlights.
A clause leans on the rest of its sentence (", which usually targets X" has its subject in the other
clause), so when a sentence is split into clauses, a clause with at least PARTIALLY_SUPPORTED_AT
support is held to SUPPORTED_AT by the larger of its support and the whole sentence's (v3); every
other rule looks at the clause alone.

Labels, in order:
* a provenance sentence that agrees with the passage headers (`checks.provenance_verdict`) is
  SUPPORTED, with the header as the reason; a statement that the sources are silent on X ("the
  policy does not specify X") is SUPPORTED when no unit covers X, else UNSUPPORTED;
* the claim is aligned with its window (`align.py`), which picks the one unit it was taken
  from, or both when it needs both; a two-unit window the aligner does not need is cut to that one
  unit, so a neighbour's words never support the claim (v4);
* CONTRADICTED when the aligned sentence says otherwise in one slot while the rest of the claim
  copies it (CONTRADICTION_COVERAGE of its other content words, no other slot different): a
  negation on one side only, another number, unit or name in the slot, an opposite word, roles
  exchanged around the verb or around the same words ("B in A" for "A in B") (v5). The
  explanation quotes the source ("P1 says 'not allowed'"). A name in the slot of another counts
  when the passages have it elsewhere (a place swapped for another they name, v5);
* UNSUPPORTED when a quantity or a name of the claim is in no passage (a fabrication, for numbers;
  a name put in the slot of another too, v5), or its content is new: NEW_CONTENT_WORDS or more of
  its words are in no passage in any form, and they outweigh the share its aligned sentence holds
  (v6: new content, not new wording; the support thresholds no longer label);
* PARTIALLY_SUPPORTED when the claim adds a causal link ("because",
  "due to", "led to") that its window does not state, or an absolute ("all", "always", "only",
  "never") its window does not have, or a weaker/stronger word on one scale (all/some,
  must/may), or a slot filled with the words of a neighbouring sentence where its own sentence
  says something else (two statements fused into one neither makes) (v4);
* SUPPORTED otherwise. `confidence` is the support (0..1, two decimals).

Only passage text is evidence: header fields (title, agency, section, source, fetched date) support
provenance statements and nothing else.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

from judges.align import (
    ABSOLUTES, Alignment, Difference, align, cased, evident_difference, moved_in, new_in_slot)
from judges.categories import category_for
from judges.checks import provenance_mentions, provenance_verdict, quotations
from judges.checks.bounds import MAX_CLAIMS, MAX_SCORED, Extent, checked_extent, unchecked_claim
from judges.checks.spans import blank
from judges.text.clauses import split_clauses
from judges.markup import is_heading, is_lead_in, plain_view, with_open_marks
from judges.novelty import is_new_content, new_words
from judges.passages import CAUSAL, UnitIndex, index_units
from judges.scoring import grounding_score, verdict_for
from judges.silence import silence
from judges.text import (
    META_STEMS,
    Quantity,
    Span,
    content_tokens,
    content_words,
    quantities,
    split_sentences,
    stem,
)
from judges.text import (
    stems as stems_of,
)
from judges.types import (
    NOT_SUPPORTED_LABELS,
    Claim,
    Evidence,
    Fabrication,
    JudgeInfo,
    JudgeRequest,
    JudgeResult,
    Passage,
)
from judges.types import Difference as DifferenceResult

OFFLINE_PROFILE = "offline"
OFFLINE_VERSION = "v6"
OFFLINE_MODEL = "rules"

# Thresholds on support (the weighted share of a claim's terms in its best window). How they were
# chosen is in README.md ("Accuracy"): SUPPORTED_AT on one half of each dev file, checked on the
# other half; the others are round values that were not tuned.
SUPPORTED_AT = 0.55
PARTIALLY_SUPPORTED_AT = 0.35
NAME_WEIGHT = 2.0  # names and quantities weigh double
WINDOW_CANDIDATES = 6  # the best-scoring units, over all passages, whose neighbours are tried

# Words of hedging, courtesy and "ask the agency" redirects. A sentence made only of these (plus
# the agency's own name) tells the rider nothing checkable, so it is not a claim.
HEDGE_WORDS = frozenset(
    """
    advice advise agency assistance best call check confirm consult contact current customer
    department detail directly feel happy help hope info information know latest like line
    need note office online page phone question reach recommend representative service site
    staff suggest support sure team telephone time touch visit want web website
    """.split()
)

_COURTESY_REQUEST = re.compile(r"(?:^|[,;:]\s*)please\b", re.IGNORECASE)
_WORD_SPLIT = re.compile(r"[A-Za-z]+")
_CITATION_MARK = re.compile(
    r"\[\s*P?\d+(?:\s*[,;]\s*P?\d+)*\s*\]|\(\s*P\d+(?:\s*[,;]\s*P?\d+)*\s*\)", re.I
)


@dataclass
class _Request:
    """What every claim of one request is compared with, worked out once."""

    request: JudgeRequest
    indexes: list[UnitIndex]
    total_units: int
    question_stems: frozenset[str]
    # Where the answer says where its information comes from (check 4 judges those against the
    # headers): their words are no terms of a claim.
    provenance: tuple[Span, ...] = ()
    frequency: dict[str, int] = field(default_factory=dict)
    scored: int = 0  # (unit, term) pairs scored so far by `_best_window`, held to MAX_SCORED

    @classmethod
    def of(cls, request: JudgeRequest, answer: str) -> _Request:
        """What the claims of `answer` (the request's answer, or the part of it that is read) are
        compared with."""
        indexes = [index_units(passage.text) for passage in request.passages]
        # Every claim asks each passage for its words and values: find them for the whole answer
        # at once.
        answer_stems = stems_of(answer)
        values = [quantity.value for quantity in quantities(answer)]
        for index in indexes:
            index.learn_stems(answer_stems)
            index.read_values(values)
        return cls(
            request=request,
            indexes=indexes,
            total_units=sum(index.size for index in indexes),
            question_stems=frozenset(stem(w) for w in content_words(request.question or "")),
        )

    def units_with(self, term: str) -> int:
        """How many units of the request's passages hold a word with this stem."""
        df = self.frequency.get(term)
        if df is None:
            df = self.frequency[term] = sum(len(index.postings(term)) for index in self.indexes)
        return df

    def weight(self, term: str, is_name: bool) -> float:
        weight = math.log((self.total_units + 1) / (self.units_with(term) + 0.5))
        return max(weight, 0.05) * (NAME_WEIGHT if is_name else 1.0)

    def has_stem(self, word_stem: str) -> bool:
        """Whether some passage has a word with this stem."""
        return self.units_with(word_stem) > 0

    def has_value(self, value: str) -> bool:
        """Whether some passage offers the quantity value (`quantity_values`)."""
        return any(index.has_value(value) for index in self.indexes)


@dataclass(frozen=True)
class _Terms:
    weights: dict[str, float]  # stem -> weight
    names: frozenset[str]
    quantities: tuple[Quantity, ...]  # checkable quantities of the claim
    causal: bool
    absolutes: frozenset[str]


@dataclass(frozen=True)
class _Window:
    passage: int  # index into request.passages
    units: tuple[int, ...]  # consecutive unit indexes
    stems: frozenset[str]
    quantities: frozenset[str]  # the claim's quantity values a unit of the window gives
    names: frozenset[str]
    support: float  # weighted share of the claim's terms (words and quantities) found


def judge_offline(request: JudgeRequest) -> JudgeResult:
    started = time.perf_counter()
    # Only the answer's first part is read when it passes one of the caps on work (judges.checks.
    # bounds); the rest becomes one UNSUPPORTED claim saying so.
    extent = checked_extent(request.answer)
    answer = request.answer if extent.complete else request.answer[:extent.end]
    context = _Request.of(request, answer)
    redirect_words = HEDGE_WORDS | _agency_words(request.passages)
    mentions = provenance_mentions(answer, request)
    skip = [q.span for q in quotations(answer)] + [m.span for m in mentions]
    context.provenance = tuple(m.span for m in mentions)

    claims: list[Claim] = []
    fabrications: list[Fabrication] = []
    # markup is no claim: claims are read in the text, at the same offsets
    text = plain_view(answer)
    for sentence_span in split_sentences(text):
        if len(claims) >= MAX_CLAIMS - 1:
            extent = _claims_cap(sentence_span[0])
            break
        if context.scored > MAX_SCORED:
            extent = Extent(sentence_span[0], f"claims whose words fill the passages: more than "
                                              f"{MAX_SCORED:,} passage sentences scored")
            break
        sentence = answer[slice(*sentence_span)]
        has_provenance = any(
            m.span[0] < sentence_span[1] and sentence_span[0] < m.span[1] for m in mentions
        )
        if has_provenance and provenance_verdict(sentence, request) == "agrees":
            claims.append(
                _provenance_claim(f"c{len(claims) + 1}", sentence, sentence_span, request)
            )
            continue
        if is_heading(answer, sentence_span[0]) or not _is_claim(
            text[slice(*sentence_span)], redirect_words
        ):
            continue
        spans = split_clauses(text, sentence_span)
        sentence_support = _support(text, sentence_span, context, skip) if len(spans) > 1 else None
        room = MAX_CLAIMS - 1 - len(claims)
        if len(spans) > room:  # a sentence of more clauses than the cap leaves room for
            extent = _claims_cap(spans[room][0])
            spans = spans[:room]
        for span in (piece for span in spans for piece in _around_mentions(text, span, mentions)):
            mention = next(
                (m for m in mentions if m.span == span and m.verdict not in (None, "agrees")), None
            )
            if mention is not None:
                claims.append(
                    _provenance_claim(
                        f"c{len(claims) + 1}",
                        answer[slice(*span)],
                        span,
                        request,
                        disagreement=mention.reason,
                    )
                )
                continue
            claim, invented = _judge_claim(
                f"c{len(claims) + 1}", text, span, context, skip, sentence_support=sentence_support)
            shown = with_open_marks(answer, span)
            claims.append(
                claim.model_copy(update={"text": answer[slice(*shown)], "answer_span": shown})
            )
            fabrications.extend(invented)
        if not extent.complete and extent.end <= sentence_span[1]:
            break
    unchecked = unchecked_claim(f"c{len(claims) + 1}", request.answer, extent)
    if unchecked is not None:
        claims.append(unchecked)

    return JudgeResult(
        verdict=verdict_for(claims),
        grounding_score=grounding_score(claims),
        claims=claims,
        fabrications=fabrications,
        rewrite_note=rewrite_note(claims),
        judge=JudgeInfo(
            profile=OFFLINE_PROFILE,
            prompt_version=OFFLINE_VERSION,
            backend="offline",
            model=OFFLINE_MODEL,
            latency_ms=round((time.perf_counter() - started) * 1000),
            attempts=1,
        ),
    )


def _claims_cap(end: int) -> Extent:
    """The extent read when the judge stops at MAX_CLAIMS claims (the last one saying so)."""
    return Extent(end, f"more than {MAX_CLAIMS - 1:,} claims")


# --- what counts as a claim, and where claims split ---------------------------------------------


def _is_claim(sentence: str, redirect_words: frozenset[str]) -> bool:
    has_number = bool(quantities(sentence))
    words = content_words(_CITATION_MARK.sub(" ", sentence))
    if not words and not has_number:
        return False
    if is_lead_in(sentence):
        return False  # "Here is what the policy says:" introduces claims
    if has_number:
        return True
    courtesy = _COURTESY_REQUEST.search(sentence)
    if courtesy:  # what precedes "please" only frames the request: "For a decision, please call us"
        words = content_words(sentence[courtesy.end():])
    return not {w for w in words if stem(w) not in META_STEMS} <= redirect_words


def _agency_words(passages: list[Passage]) -> frozenset[str]:
    # "Contact Metro for details" is a redirect when Metro is the agency the passages come from.
    return frozenset(word for p in passages if p.agency for word in content_words(p.agency))


# --- labelling ---------------------------------------------------------------------------------


def _terms(text: str, offset: int, context: _Request, skip: list[Span]) -> _Terms:
    weights: dict[str, float] = {}
    names: set[str] = set()
    for token in content_tokens(text):
        if token.stem in META_STEMS:
            continue
        is_name = token.is_name
        weight = context.weight(token.stem, is_name)
        if token.stem in context.question_stems and not context.has_stem(token.stem):
            weight *= 0.5  # the answer restating the question's wording
        if weights.get(token.stem, 0) < weight:
            weights[token.stem] = weight
        if is_name:
            names.add(token.stem)
    found = tuple(
        q for q in quantities(text)
        if not any(s[0] <= q.span[0] + offset < s[1] for s in skip)
    )
    lowered = {w.lower() for w in _WORD_SPLIT.findall(text)}
    return _Terms(
        weights=weights, names=frozenset(names), quantities=found,
        causal=CAUSAL.search(text) is not None,
        absolutes=frozenset(lowered & ABSOLUTES),
    )


def _best_window(terms: _Terms, context: _Request) -> _Window | None:
    """The unit, or unit and neighbour, with the largest weighted share of the claim's terms."""
    quantity_weight = NAME_WEIGHT * math.log(context.total_units + 1.5)
    total = sum(terms.weights.values()) + quantity_weight * len(terms.quantities)
    if total <= 0:
        return None
    # Each unit's score, its terms' weights added in the claim's order (every weight is positive,
    # so a unit scored is a unit with a term). Only the units holding a term are scored: the
    # work is the claim's postings, whatever the passages' length.
    passage_scores: list[dict[int, float]] = []
    for index in context.indexes:
        scores: dict[int, float] = {}
        for units, weight in (
            *((index.postings(term), weight) for term, weight in terms.weights.items()),
            *((index.value_units(q.value), quantity_weight) for q in terms.quantities),
        ):
            context.scored += len(units)
            if scores:
                for u in units:
                    scores[u] = scores.get(u, 0.0) + weight
            else:
                scores = dict.fromkeys(units, weight)  # 0.0 + weight, in C
        passage_scores.append(scores)
    # The claim's terms each unit tried holds (`UnitIndex.held`): only the best window's units are
    # read, which cost ~0.7 ms an answer when no passage had been read before.
    held: dict[tuple[int, int], frozenset[str]] = {}
    best: tuple[float, int, tuple[int, ...], frozenset[str], frozenset[str]] | None = None
    for _, p, u in _best_units(passage_scores, WINDOW_CANDIDATES):
        index = context.indexes[p]
        for window in ((u,), (u - 1, u), (u, u + 1)):
            if window[0] < 0 or window[-1] >= index.size:
                continue
            for i in window:
                if (p, i) not in held:
                    held[p, i] = index.held(i, terms.weights)
            found = frozenset().union(*(held[p, i] for i in window))
            # The claim's values that a unit of the window gives.
            values = frozenset(q.value for q in terms.quantities
                               if any(i in index.value_units(q.value) for i in window))
            words = sum(w for t, w in terms.weights.items() if t in found)
            numbers = quantity_weight * sum(1 for q in terms.quantities if q.value in values)
            support = (words + numbers) / total
            if len(window) > 1:
                support -= 0.02  # a single sentence wins a tie
            if best is None or support > best[0] + 1e-9:
                best = (support, p, window, found, values)
    if best is None:
        return None
    support, p, window, found, values = best
    units = [context.indexes[p].unit(i) for i in window]
    return _Window(
        passage=p,
        units=window,
        stems=frozenset().union(*(unit.stems for unit in units)),
        quantities=values,
        names=frozenset().union(*(unit.names for unit in units)),
        support=support if len(window) == 1 else min(1.0, support + 0.02),
    )


def _best_units(passage_scores: list[dict[int, float]], limit: int) -> list[tuple[float, int, int]]:
    """The `limit` units with the best scores over all passages (each passage's scores by unit),
    as (-score, passage, unit): the best first, the earliest on a tie, none scoring 0. The
    passages are taken in order of their best score, and each one's units sorted in C, until no
    unit of the next can be kept: putting
    every unit scored of every passage in one heap cost twice as much (~1 ms an answer at 15,000
    characters a passage)."""
    best_scores = [max(scores.values(), default=0.0) for scores in passage_scores]
    found: list[tuple[float, int, int]] = []
    # Sorted stably: passages with the same best score come in order, so once one cannot beat the
    # last unit kept, no passage after it can.
    for p in sorted(range(len(passage_scores)), key=best_scores.__getitem__, reverse=True):
        if best_scores[p] <= 0 or (len(found) == limit and (-best_scores[p], p) > found[-1][:2]):
            break
        scores = passage_scores[p]
        ranked = sorted(sorted(scores), key=scores.__getitem__, reverse=True)[:limit]
        found.extend((-scores[u], p, u) for u in ranked if scores[u] > 0)
        found = sorted(found)[:limit]
    return found


def _support(answer: str, span: Span, context: _Request, skip: list[Span]) -> float:
    """The support of `answer[span]` as one claim: the weighted share of its terms in its best
    window."""
    said = _CITATION_MARK.sub(lambda m: " " * len(m.group()), answer[slice(*span)])
    window = _best_window(_terms(said, span[0], context, skip), context)
    return window.support if window else 0.0


def _judge_claim(
    claim_id: str, answer: str, span: Span, context: _Request, skip: list[Span],
    sentence_support: float | None = None,
) -> tuple[Claim, list[Fabrication]]:
    """One claim's label. `sentence_support` is the support of the whole sentence when the claim is
    one of its clauses: a clause leans on its sentence (", which usually targets X" names its
    subject in the other clause), so a clause with at least PARTIALLY_SUPPORTED_AT support is
    compared with SUPPORTED_AT by the larger of the two; a clause below it stays UNSUPPORTED (a
    clause the passages mostly lack is flagged however well the rest of its sentence is covered),
    and every other rule (quantities, names, the aligner's differences, causal and absolute words)
    looks at the clause alone."""
    text = answer[slice(*span)]
    said = blank(_CITATION_MARK.sub(lambda m: " " * len(m.group()), text),
                 [(max(start, span[0]) - span[0], min(end, span[1]) - span[0])
                  for start, end in context.provenance if start < span[1] and span[0] < end])
    terms = _terms(said, span[0], context, skip)
    window = _best_window(terms, context)
    alignment = _alignment(said, window, context) if window else None
    aligned = window  # the text the alignment's source offsets count from
    if window is not None and alignment is not None:
        window = _narrowed(window, alignment, terms, context)
    invented = [q for q in terms.quantities if not context.has_value(q.value)]
    missing = _words_for(said, [t for t in terms.weights if not context.has_stem(t)])
    missing_names = sorted(
        t for t in terms.names if not context.has_stem(t) and t not in context.question_stems
    )
    support = window.support if window else (0.0 if terms.weights or terms.quantities else 1.0)
    label, reasons = _label(
        said, terms, window, alignment, support, invented, _words_for(said, missing_names), context,
        sentence_support=sentence_support,
    )
    if missing and label == "PARTIALLY_SUPPORTED":
        reasons.append("Not in any passage: " + ", ".join(_shown(missing)) + ".")
    fabrications = [
        Fabrication(
            kind="date" if q.kind == "date" else "statistic", text=q.text,
            answer_span=(span[0] + q.span[0], span[0] + q.span[1]),
            reason=f"'{q.text}' appears in no passage.",
        )
        for q in invented
    ]
    evidence = _evidence(window, context)
    if label != "SUPPORTED" and alignment is not None and aligned is not None:
        start = context.indexes[aligned.passage].spans[aligned.units[0]][0]
        evidence = _with_differences(evidence, alignment, source_start=start, answer_start=span[0])
    claim = Claim(
        id=claim_id, text=text, answer_span=span, label=label, category=category_for(text),
        evidence=evidence, explanation=" ".join(reasons),
        confidence=round(max(0.0, min(1.0, support)), 2),
    )
    return claim, fabrications


def _words_for(text: str, wanted: list[str]) -> list[str]:
    """The words of `text` (as written) whose stems are `wanted`, in the text's order: what a
    reviewer reads instead of a stem."""
    stems_wanted = set(wanted)
    return list(
        dict.fromkeys(text[slice(*t.span)] for t in content_tokens(text) if t.stem in stems_wanted)
    )


def _alignment(said: str, window: _Window, context: _Request) -> Alignment | None:
    """The claim aligned with the window's sentence (or both, when it needs both: `align.py`)."""
    index = context.indexes[window.passage]
    start = index.spans[window.units[0]][0]
    text = index.text[start:index.spans[window.units[-1]][1]]
    sentences = [(index.spans[u][0] - start, index.spans[u][1] - start) for u in window.units]
    return align(said, text, sentences)


def _narrowed(window: _Window, alignment: Alignment, terms: _Terms, context: _Request) -> _Window:
    """The window cut to the one unit the aligner took the claim from: words of the neighbouring
    sentence never support a slot of the claim."""
    if len(window.units) == 1:
        return window
    index = context.indexes[window.passage]
    start = index.spans[window.units[0]][0]
    chosen = [
        u
        for u in window.units
        if index.spans[u][0] - start <= alignment.source_span[0] < index.spans[u][1] - start + 1
    ]
    if alignment.source_span[1] > index.spans[window.units[0]][1] - start + 1 and len(chosen) == 1 \
            and chosen[0] == window.units[0]:
        return window  # the aligner took both sentences
    unit = chosen[0] if chosen else window.units[0]
    return _window_at(terms, context, window.passage, (unit,))


def _window_at(terms: _Terms, context: _Request, p: int, units: tuple[int, ...]) -> _Window:
    """The window of these units of passage p, scored as `_best_window` scores it."""
    index = context.indexes[p]
    quantity_weight = NAME_WEIGHT * math.log(context.total_units + 1.5)
    total = sum(terms.weights.values()) + quantity_weight * len(terms.quantities)
    found = frozenset().union(*(index.held(i, terms.weights) for i in units))
    values = frozenset(
        q.value for q in terms.quantities if any(i in index.value_units(q.value) for i in units)
    )
    words = sum(w for t, w in terms.weights.items() if t in found)
    numbers = quantity_weight * sum(1 for q in terms.quantities if q.value in values)
    read = [index.unit(i) for i in units]
    return _Window(
        passage=p,
        units=units,
        stems=frozenset().union(*(unit.stems for unit in read)),
        quantities=values,
        names=frozenset().union(*(unit.names for unit in read)),
        support=(words + numbers) / total if total > 0 else 0.0,
    )


def _label(
    text: str, terms: _Terms, window: _Window | None, alignment: Alignment | None, support: float,
    invented: list[Quantity], missing_names: list[str], context: _Request,
    sentence_support: float | None = None,
) -> tuple[str, list[str]]:
    where = context.request.passages[window.passage].id if window else None
    leaning = ""
    if window is not None and sentence_support is not None and (
        PARTIALLY_SUPPORTED_AT <= support < min(SUPPORTED_AT, sentence_support)
    ):
        leaning = f" (read with its whole sentence, which {where} states)"
        support = sentence_support

    silent = silence(text)
    if silent and not invented:
        return _silence_label(text[silent.end():], context)

    if alignment is not None and where is not None:
        contradiction = _contradiction(alignment)
        # A name in the slot of another contradicts the sentence when the passages know it (a
        # place swapped for another they name); a name no passage has is unsupported (below).
        if contradiction and not (contradiction.kind == "entity" and missing_names):
            return "CONTRADICTED", [contradiction.explain(where)]
        moved = None if cased(context.request.answer) else moved_in(
            text, alignment, context.has_stem, CONTRADICTION_COVERAGE)
        if moved is not None:
            return "CONTRADICTED", [moved.explain(where)]
        # Without capitals, a name no passage has, put in the slot of the sentence's own words
        # (the checks read it the same way: judges.align.new_in_slot).
        named = None if cased(context.request.answer) else new_in_slot(
            text, alignment, context.has_stem, CONTRADICTION_COVERAGE)
        if named is not None:
            return "UNSUPPORTED", [named.explain(where)]

    if invented:
        shown = ", ".join(f"'{q.text}'" for q in invented)
        return "UNSUPPORTED", [f"{shown} appears in no passage."]
    if missing_names:
        shown = ", ".join(f"'{n}'" for n in missing_names)
        return "UNSUPPORTED", [f"Names no passage has: {shown}."]
    if window is None:
        if support >= 1.0:
            return "SUPPORTED", ["Nothing in it to check."]
        return "UNSUPPORTED", ["None of its key words or numbers appear in any passage."]
    # New content, not new wording: words no passage has (in any form) that outweigh what its
    # closest sentence holds of it. Words that are in the passages, only not in one sentence,
    # are a paraphrase or a synthesis: they lower the confidence, not the label.
    coverage = alignment.coverage if alignment is not None else 0.0
    new = new_words(text, context.has_stem, excused=context.question_stems)
    if is_new_content(new, len(terms.weights), coverage):
        return "UNSUPPORTED", [f"New content: no passage has {', '.join(_shown(new, 4))}."]
    if terms.causal and not _window_causal(window, context):
        return "PARTIALLY_SUPPORTED", [f"It states a cause or effect that {where} does not."]
    added = [
        word for word in sorted(terms.absolutes) if not _window_has_word(window, context, word)
    ]
    if added:
        return "PARTIALLY_SUPPORTED", [f"{where} does not say '{added[0]}'."]
    gap = _gap(alignment) or _borrowed(text, window, alignment, context)
    if gap is not None:
        return "PARTIALLY_SUPPORTED", [gap.explain(where)]
    if support < SUPPORTED_AT and alignment is not None and alignment.uncovered(text):
        # Not word for word: the confidence says so, and the note names the words; no evidence
        # says the claim is false, so the label stays.
        shown = ", ".join(_shown(alignment.uncovered(text), 4))
        return "SUPPORTED", [
            f"Its words are in the passages; {where} has most of it, not word for word: {shown}."
        ]
    return "SUPPORTED", [f"{where} states it{leaning}."]


# How closely the rest of a claim must copy its aligned sentence for one differing slot to be read
# as that sentence changed, not as another statement: the share of its other content words the
# sentence has.
CONTRADICTION_COVERAGE = 0.6


def _contradiction(alignment: Alignment) -> Difference | None:
    """The first difference by which the aligned sentence says otherwise, when the rest of the claim
    copies it (CONTRADICTION_COVERAGE) and no other slot of it says something else ("A weekend pass
    costs $3" is not "A 30-day pass costs $86" with its price changed), or None."""
    if alignment.matched < 2:
        return None
    for difference in alignment.contradictions:
        others = [d for d in alignment.differences if d.kind == "substitution"]
        if not others and alignment.coverage_besides(difference) >= CONTRADICTION_COVERAGE:
            return difference
    return None


def _gap(alignment: Alignment | None) -> Difference | None:
    """A slot where the aligned sentence says something weaker, or a qualifier added to an otherwise
    copied sentence: the differences the quote check reads as evidence too
    (judges.align.evident_difference)."""
    return evident_difference(alignment, CONTRADICTION_COVERAGE) if alignment is not None else None


def _borrowed(
    text: str, window: _Window, alignment: Alignment | None, context: _Request
) -> Difference | None:
    """A slot of the claim filled with words of a neighbouring sentence where its own sentence
    says something else ("Residents with disabilities can apply online" from "Residents over 65
    can apply online. Residents with disabilities must apply in person."): two statements fused
    into one that neither makes. Paraphrase ("the series" for "the show") borrows nothing."""
    if alignment is None or len(window.units) != 1:
        return None
    index = context.indexes[window.passage]
    unit = window.units[0]
    claim_stems = {t.stem for t in content_tokens(text)}
    for difference in alignment.differences:
        if difference.kind != "substitution" or difference.claim_span is None:
            continue
        words = {t.stem for t in content_tokens(text[slice(*difference.claim_span)])}
        for u in (unit - 1, unit + 1):
            if not (words and 0 <= u < index.size) or words & window.stems:
                continue
            neighbour = index.unit(u).stems
            # The neighbour has the slot's words and at least two more of the claim's: it is
            # another statement about the same thing, not a passing use of a word.
            if words <= neighbour and len((claim_stems - words) & neighbour) >= 2:
                return difference
    return None


def _window_text(window: _Window, context: _Request) -> str:
    index = context.indexes[window.passage]
    return index.text[index.spans[window.units[0]][0]:index.spans[window.units[-1]][1]]


def _window_causal(window: _Window, context: _Request) -> bool:
    return CAUSAL.search(_window_text(window, context)) is not None


def _window_has_word(window: _Window, context: _Request, word: str) -> bool:
    return re.search(rf"\b{word}\b", _window_text(window, context), re.IGNORECASE) is not None


def _silence_label(topic: str, context: _Request) -> tuple[str, list[str]]:
    topic_stems = {stem(w) for w in content_words(topic)} - META_STEMS
    if not topic_stems:
        return "SUPPORTED", ["It says the sources are silent, and names nothing they cover."]
    best = 0.0
    for index in context.indexes:
        for position in range(index.size):
            best = max(best, len(topic_stems & index.unit(position).stems) / len(topic_stems))
    if best >= 0.67:
        return "UNSUPPORTED", ["It says the sources are silent on this, but a passage covers it."]
    return "SUPPORTED", [
        "It says the sources are silent on this, and no passage sentence covers it."
    ]


def _around_mentions(text: str, span: Span, mentions) -> list[Span]:
    """`span` cut around each provenance statement inside it that the headers do not bear out ("As
    of the policy fetched on 2026-09-01, the adult fare is $2.75"): the statement is a claim of its
    own, so its finding (check 4) lowers it, not the fare the rest of the clause states."""
    pieces = [span]
    for mention in mentions:
        if mention.verdict in (None, "agrees"):
            continue
        start, end = mention.span
        cut = []
        for a, b in pieces:
            if a <= start and end <= b and (a, b) != (start, end):
                cut += [piece for piece in ((a, start), (start, end), (end, b))
                        if piece == (start, end) or content_words(text[slice(*piece)])]
            else:
                cut.append((a, b))
        pieces = cut
    return [_trimmed(text, piece) for piece in pieces]


def _trimmed(text: str, span: Span) -> Span:
    """`span` without the spaces and joining punctuation at its ends."""
    start, end = span
    while start < end and text[start] in " ,;:\n\t":
        start += 1
    while end > start and text[end - 1] in " ,;:\n\t":
        end -= 1
    return start, end


def _provenance_claim(claim_id: str, sentence: str, span: Span, request: JudgeRequest,
                      disagreement: str = "") -> Claim:
    headers = "; ".join(
        dict.fromkeys(
            ", ".join(
                f"{name}: {value}"
                for name, value in (
                    ("agency", p.agency),
                    ("title", p.title),
                    ("section", p.section),
                    ("source", p.source_url),
                    ("fetched", p.fetched_at),
                )
                if value
            )
            for p in request.passages
        )
    )
    if disagreement:
        return Claim(
            id=claim_id,
            text=sentence,
            answer_span=span,
            label="UNSUPPORTED",
            category="provenance",
            evidence=[],
            confidence=0.0,
            explanation=(
                f"A provenance statement the passage headers do not bear out: {disagreement}."
            ),
        )
    return Claim(
        id=claim_id, text=sentence, answer_span=span, label="SUPPORTED", category="provenance",
        evidence=[], confidence=1.0,
        explanation=f"A provenance statement that agrees with the passage headers ({headers}).",
    )


# --- evidence and explanations -----------------------------------------------------------------


def _evidence(window: _Window | None, context: _Request) -> list[Evidence]:
    """The window's sentences, quoted exactly (given for every label: the closest source sentence
    is what a reviewer needs to confirm or overturn it). Nothing when no term matches."""
    if window is None or window.support <= 0:
        return []
    index = context.indexes[window.passage]
    passage = context.request.passages[window.passage]
    return [
        Evidence(passage_id=passage.id, quote=index.text[slice(*index.spans[u])],
                 span=index.spans[u], match="exact")
        for u in window.units
    ]


def _with_differences(evidence: list[Evidence], alignment: Alignment, *, source_start: int,
                      answer_start: int) -> list[Evidence]:
    """The evidence with the words the aligner found differing, in passage and answer offsets (for
    a claim not SUPPORTED: a reviewer sees where the closest text says otherwise). Each difference
    goes to the evidence sentence holding its source words; one with no source words there (words
    the claim adds, or words of a sentence the window was narrowed away from) to the first, with
    its claim words only."""
    if not evidence:
        return evidence
    placed: list[list[DifferenceResult]] = [[] for _ in evidence]
    for difference in alignment.differences:
        source = _shifted(difference.source_span, source_start)
        at = next(
            (
                k
                for k, ev in enumerate(evidence)
                if source and ev.span and ev.span[0] <= source[0] and source[1] <= ev.span[1]
            ),
            None,
        )
        claim_side = _shifted(difference.claim_span, answer_start)
        if at is None and claim_side is None:
            continue
        placed[at or 0].append(
            DifferenceResult(
                kind=difference.kind,
                span=source if at is not None else None,
                answer_span=claim_side,
            )
        )
    return [
        ev.model_copy(update={"differences": found}) if found else ev
        for ev, found in zip(evidence, placed)
    ]


def _shifted(span: Span | None, by: int) -> Span | None:
    return (span[0] + by, span[1] + by) if span and span[0] < span[1] else None


def _shown(terms: list[str], limit: int = 6) -> list[str]:
    return [f"'{t}'" for t in terms[:limit]] + (
        [f"{len(terms) - limit} more"] if len(terms) > limit else []
    )


def rewrite_note(claims: list[Claim]) -> str:
    """The smallest edit that would make the answer grounded, naming claims by id."""
    to_remove = [c.id for c in claims if c.label in NOT_SUPPORTED_LABELS]
    to_narrow = [c.id for c in claims if c.label == "PARTIALLY_SUPPORTED"]
    notes = []
    if to_remove:
        notes.append(f"Remove or source {', '.join(to_remove)}.")
    if to_narrow:
        notes.append(f"Narrow {', '.join(to_narrow)} to what the passages say.")
    return " ".join(notes)
