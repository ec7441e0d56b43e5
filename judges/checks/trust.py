"""Checks 5-7, trust: passages and answer text that address the judge are no evidence, and a
SUPPORTED claim must rest on a trusted passage.

Prompt injection (issue 9, item 6; judges.injection finds it). Checks 1-4 read the answer with
its invisible characters removed (zero-width spaces, bidi controls, tag characters: a zero-width
space must not hide "fifty percent" from check 2; spans are mapped back to the real answer) and
only the passages that do not address the judge (`trusted_passages`: a passage whose text or
header holds an instruction to the judge, forged data markers or hidden text keeps its id but
supports nothing; the rewrite note names it). Then:

5. **Injection** -- text in the answer that addresses the judge or hides text: the claims over it
   become UNSUPPORTED (a claim is added for it when none covers it).
6. **Evidence** -- a SUPPORTED claim whose found quotes are all in passages that address the
   judge becomes PARTIALLY_SUPPORTED.
7. **Support** -- a SUPPORTED claim, on every backend and profile, must be said by its verified
   quote or by one of the trusted passage sentences closest to it: aligned with the claim
   (judges/align), the text covers QUOTE_COVERAGE of its content words and disagrees on no
   number, unit, name, negation or opposite. Else PARTIALLY_SUPPORTED, or CONTRADICTED when a
   sentence it otherwise copies says otherwise. When anything in the request (question, turns,
   passages, answer) addresses the judge, the text must hold all of its content words.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

from judges.align import QUOTE_COVERAGE, cased, quote_shortfall
from judges.checks.answer import Answer
from judges.checks.bounds import MAX_SCORED
from judges.checks.findings import Finding
from judges.checks.matching import claim_span
from judges.checks.mentions import provenance_mentions
from judges.checks.spans import blank
from judges.injection import find_injections, strip_invisible
from judges.markup import is_lead_in
from judges.novelty import is_new_content, new_words
from judges.silence import silence
from judges.text import META_STEMS, content_tokens, quantities, rough_pieces, split_sentences, stems
from judges.types import Claim, JudgeRequest, JudgeResult, Passage


# When anything in the request addresses the judge, the judge's SUPPORTED is suspect: one text must
# hold ALL of a SUPPORTED claim's content words.
SUPPORT_MIN_UNDER_ATTACK = 1.0
SUPPORT_MIN_WORDS = 3  # claims with fewer content words ("Yes, it is.") are not checked


def trusted_passages(passages: Sequence[Passage]) -> tuple[list[Passage], dict[str, str]]:
    """The passages with those that address the judge emptied, and why each was.

    A passage whose text or header fields hold an instruction to the judge, forged data markers or
    hidden text was written, at least in part, by someone trying to steer the judge, and nothing
    tells which part: none of it is evidence. It keeps its id (a citation of it is not a citation
    of a missing passage) but its text and header say nothing, so no number, quotation, citation
    or provenance statement is supported by it."""
    trusted: list[Passage] = []
    poisoned: dict[str, str] = {}
    for passage in passages:
        reason = _poison_reason(passage)
        if reason is None:
            trusted.append(passage)
            continue
        poisoned[passage.id] = reason
        trusted.append(passage.model_copy(update={
            "text": " ", "tag": None, "agency": None, "title": None, "section": None,
            "source_url": None, "fetched_at": None,
        }))
    return trusted, poisoned


def _poison_reason(passage: Passage) -> str | None:
    found = find_injections(passage.text, passage=True)
    if found:
        return f"its text has {found[0].describe()}"
    for name in ("tag", "agency", "title", "section", "source_url"):
        value = getattr(passage, name)
        if value and (found := find_injections(value)):
            return f"its {name} has {found[0].describe()}"
    return None


def check_answer_injections(answer: Answer) -> list[Finding]:
    """Text in the answer that addresses the judge (or hides text) is no answer to a rider: the
    claims over it become UNSUPPORTED (a claim is added for it when none covers it)."""
    findings = []
    for injection in find_injections(answer.text):
        findings.append(Finding(
            check="injection", span=injection.span, lower_to="UNSUPPORTED", category="other",
            note=f"Injection check: the answer addresses the judge: {injection.describe()}.",
        ))
    return findings


def check_evidence(answer: Answer, result: JudgeResult, poisoned: dict[str, str]) -> list[Finding]:
    """A SUPPORTED claim whose quotes are all found only in passages that address the judge rests
    on the attacker's text: PARTIALLY_SUPPORTED. (Quotes found nowhere are the profiles' concern:
    judges.locate.distrust_unverified_quotes.)"""
    if not poisoned:
        return []
    findings = []
    for claim in result.claims:
        span = claim_span(claim, answer.text)
        found = [e for e in claim.evidence if e.match != "not_found"]
        if claim.label != "SUPPORTED" or span is None or not found:
            continue
        if all(e.passage_id in poisoned for e in found):
            pids = ", ".join(sorted({e.passage_id for e in found}))
            findings.append(
                Finding(
                    check="evidence",
                    span=span,
                    lower_to="PARTIALLY_SUPPORTED",
                    category=claim.category,
                    note=(
                        f"Evidence check: the judge's quotes are only in {pids}, which addresses"
                        " the judge."
                    ),
                )
            )
    return findings


def steering_texts(request: JudgeRequest) -> list[str]:
    """The request's texts that are not evidence but reach the judge: question and prior turns."""
    return [request.question, *(turn.content for turn in request.prior_turns)]


def check_support(answer: Answer, result: JudgeResult, under_attack: bool = False) -> list[Finding]:
    """A claim is SUPPORTED only if passage text says it, whatever the backend and profile: the
    judge's verified quotes, else the trusted passage sentences closest to the claim
    (CLOSEST_SENTENCES), are aligned with the claim (offline/align's quote_shortfall). One of them
    must cover QUOTE_COVERAGE of the claim's content words and disagree with it on no number,
    unit, name, negation or opposite. So a judge that obeys an injected instruction, or marks a
    claim SUPPORTED and quotes the most similar real sentence, cannot pass a fabricated claim: its
    quote does not say the claim. A claim no text says is lowered to PARTIALLY_SUPPORTED, or to
    CONTRADICTED when a sentence it otherwise copies says otherwise ("P1 says 'not allowed'"),
    with the reason shown. Statements that the sources are silent and claims of fewer than
    SUPPORT_MIN_WORDS content words are not checked; a statement of where the information comes
    from is check 4's, against the headers, and dates and times check 2's, in any format, so their
    words are left out.

    The offline judge's claims are not checked again outside an attack: it labels each claim by
    aligning it with its evidence already, and a second reading with a coarser rule (one
    coverage share, no term weights) lowered honest claims: on the dev files' tune halves it took
    FaithBench's response balanced accuracy from 0.640 to 0.572 and HAGRID's from 0.790 to 0.755.

    `under_attack` (something in the request addresses the judge): one text must hold every
    content word of the claim (SUPPORT_MIN_UNDER_ATTACK): a request that tries to steer the judge
    should reach a human anyway."""
    if result.judge.backend == "offline" and not under_attack:
        return []  # its labels are this aligner's own reading of its evidence (offline/judge)
    minimum = SUPPORT_MIN_UNDER_ATTACK if under_attack else QUOTE_COVERAGE
    trusted = {p.id: p for p in answer.passages if p.text.strip()}
    # Past SENTENCES_UP_TO characters of passages, their sentences are the rough pieces: pysbd
    # costs ~0.2 ms a sentence, seconds for the passages one request may hold.
    rough = sum(len(p.text) for p in answer.passages) > SENTENCES_UP_TO
    # read only when a claim needs it
    known = _KnownStems([p.text for p in trusted.values()], rough)
    # Without capitals in the answer, names are read by novelty against the passages
    # (align.moved_in).
    caseless = None if cased(answer.text) else known
    compared = [0]  # (passage sentence, claim stem) pairs compared, held to MAX_SCORED
    findings = []
    for claim in result.claims:
        span = claim_span(claim, answer.text)
        if claim.label != "SUPPORTED" or span is None:
            continue
        if compared[0] > MAX_SCORED:
            findings.append(
                Finding(
                    check="support",
                    span=span,
                    lower_to="UNSUPPORTED",
                    category=claim.category,
                    note=(
                        "Not checked: the answer has claims whose words fill the passages: more"
                        f" than {MAX_SCORED:,} passage sentences compared; the quote check stopped"
                        " before this claim."
                    ),
                )
            )
            continue
        text = strip_invisible(answer.text[slice(*span)])[0]
        if silence(text) or is_lead_in(text):
            continue  # a statement that the sources are silent, or a lead-in to the claims after it
        text = blank(text, [m.span for m in provenance_mentions(text, answer.request)]
                     + [q.span for q in quantities(text) if q.is_date or q.is_time])
        wanted = {t.stem for t in content_tokens(text)} - META_STEMS
        if len(wanted) < SUPPORT_MIN_WORDS:
            continue
        quoted = _quoted(claim, trusted)
        shortfall = quote_shortfall(
            text,
            quoted,
            minimum,
            absence_is_evidence=under_attack,
            known=caseless,
            passages_have=known,
        )
        if shortfall is None:
            continue
        # The judge may have quoted part of what says the claim, or the wrong sentence.
        closest = quote_shortfall(
            text,
            _closest_sentences(wanted, answer.passages, rough, compared),
            minimum,
            quoted=False,
            absence_is_evidence=under_attack,
            known=caseless,
            passages_have=known,
        )
        if closest is None:
            continue
        # Evidence against the claim, wherever it was read; a quote that shares none of the claim's
        # words says nothing either way (the judge quoted the wrong sentence): the closest decide.
        if (
            not quoted
            or shortfall.coverage == 0
            or (shortfall.label is None and closest.label is not None)
        ):
            shortfall = closest
        attack = (
            "; the request addresses the judge, so every word must be there" if under_attack else ""
        )
        if shortfall.label is not None:
            findings.append(Finding(
                check="support", span=span, lower_to=shortfall.label, category=claim.category,
                note=f"Quote check: {shortfall.reason}{attack}.",
            ))
            continue
        coverage = max(shortfall.coverage, closest.coverage)
        # New content: the claim says more that no passage has (in any form) than its closest text
        # holds of it. One new word is often a writer's own ("known", "located"); two are content.
        # Words of the question count as new: it is not evidence, and an attacker may write it.
        new = new_words(text, known)
        if is_new_content(new, len(wanted), coverage):
            findings.append(
                Finding(
                    check="support",
                    span=span,
                    lower_to="PARTIALLY_SUPPORTED",
                    category=claim.category,
                    note=(
                        f"Quote check: new content: no passage has {_listed(new)}, and the closest"
                        f" passage text holds {round(coverage * 100)}% of the claim's words."
                    ),
                )
            )
            continue
        lacking = shortfall.lacking or closest.lacking
        findings.append(
            Finding(
                check="support",
                span=span,
                lower_to="SUPPORTED",
                category=claim.category,
                note=(
                    f"Not word for word in {'the quote' if quoted else 'the passages'}:"
                    f" {_listed(lacking)}."
                    if lacking
                    else f"Quote check, no evidence against it: {shortfall.reason}."
                ),
                confidence=round(coverage, 2),
            )
        )
    return findings


CLOSEST_SENTENCES = 3  # passage sentences, by shared content words, that a claim is aligned with
SENTENCES_UP_TO = 500_000  # characters of a request's passages split by pysbd (see check_support)


class _KnownStems:
    """Whether a stem is one a trusted passage has: the passages' stems are gathered on the first
    question, so a result whose every quote says its claim costs no sentence index."""

    def __init__(self, texts: list[str], rough: bool):
        self.texts, self.rough, self.stems = texts, rough, None

    def __call__(self, word_stem: str) -> bool:
        if self.stems is None:
            self.stems = frozenset().union(
                *(_sentence_index(text, self.rough)[1] for text in self.texts)
            )
        return word_stem in self.stems


def _listed(words: Sequence[str], limit: int = 4) -> str:
    return ", ".join(f"'{w}'" for w in words[:limit]) + (
        f" and {len(words) - limit} more" if len(words) > limit else ""
    )


SYNTHESIS_QUOTES = 4  # the first quotes of a claim that are also read two at a time


def _quoted(claim: Claim, trusted: dict[str, Passage]) -> list[tuple[str, str]]:
    """The passage text of the claim's verified quotes in trusted passages, with their passage; and
    each two of the first SYNTHESIS_QUOTES together: a claim may rest on two quotes (synthesis
    across sentences or passages), each part of it aligned with its own (offline/align reads an
    adjacent pair of sentences as one source, each word in its own sentence)."""
    quotes = [(e.passage_id, trusted[e.passage_id].text[slice(*e.span)]) for e in claim.evidence
              if e.match != "not_found" and e.span is not None and e.passage_id in trusted]
    first = quotes[:SYNTHESIS_QUOTES]
    pairs = [(f"{a} and {b}" if a != b else a, f"{qa.strip()}\n{qb.strip()}")
             for k, (a, qa) in enumerate(first) for b, qb in first[k + 1:]]
    return quotes + pairs


def _closest_sentences(wanted: set[str], passages: Sequence[Passage], rough: bool,
                       compared: list[int]) -> list[tuple[str, str]]:
    """The CLOSEST_SENTENCES passage sentences sharing most of the stems `wanted` (the earliest on
    a tie), found from each passage's sentences by stem: the work is the sentences holding one of
    them, added to `compared[0]`."""
    best: list[tuple[int, int, int]] = []
    for number, passage in enumerate(passages):
        postings = _sentence_index(passage.text, rough)[1]
        found = [postings[word] for word in wanted if word in postings]
        compared[0] += sum(map(len, found))
        shared = Counter(chain.from_iterable(found))
        best = heapq.nsmallest(
            CLOSEST_SENTENCES, [*best, *((-count, number, at) for at, count in shared.items())]
        )
    return [
        (passages[number].id, _sentence_index(passages[number].text, rough)[0][at])
        for _, number, at in best
    ]


@lru_cache(maxsize=256)
def _sentence_index(text: str, rough: bool) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
    """The text's sentences (pysbd's, or the rough pieces), and which hold each stem."""
    clean = strip_invisible(text)[0]
    spans = rough_pieces(clean) if rough else split_sentences(clean)
    sentences = tuple(clean[s:e] for s, e in spans)
    postings: dict[str, list[int]] = {}
    for at, sentence in enumerate(sentences):
        for word in stems(sentence):
            postings.setdefault(word, []).append(at)
    return sentences, {word: tuple(ats) for word, ats in postings.items()}
