"""Check 4, provenance: what the answer says about its sources must agree with the passage headers.

**Provenance** -- where the answer says its information came from or how current it is, that is
checked against the passage *header* fields only (fetched_at, agency, title, section,
source_url), never the passage text: a stated fetch date no passage's fetched_at gives is a
`date` fabrication; a named agency or document, a section number or a source URL that no header
has is an `entity` fabrication; either way the statement is UNSUPPORTED: a claim that is only the
statement is lowered, and inside a claim that states a fact besides it ("As of the policy fetched
on 2026-09-01, the adult fare is $2.75") the statement becomes a claim of its own, so the fare,
which the passage text judges, is not lowered with it. A date is a fetch date when a cue
precedes it in its clause ("fetched", "snapshot", "as of", "updated", "retrieved", "published",
...). The same words can state a policy fact, so after a loose cue
(all but fetched/crawled/scraped/snapshot) a date the passage text states is left alone, and when
no passage has a fetched_at the date is an ordinary one for check 2; likewise a section,
document name or URL that the passage text itself names is not flagged. Named sources are read
after "according to", "as stated in", ... (any name) and after "from", "in", "per", "under",
"based on" (only a name with a document noun: Policy, Guide, Tariff, FAQ, ...), and before
"states", "says", ... (a name with a document noun); a name agrees when all its content words
(less "policy", "website" and the like) are in one passage's agency, title, section and tag, or
their initials ("LRT"). `provenance_verdict(sentence, request)` tells a judge whether a sentence
is a provenance statement that agrees with the headers.

"""

from __future__ import annotations

from judges.checks.answer import Answer
from judges.checks.citations import citation_markers
from judges.checks.findings import Finding
from judges.checks.mentions import ProvenanceVerdict, provenance_mentions
from judges.checks.spans import blank
from judges.text import content_words, quantities
from judges.types import Fabrication, JudgeRequest, Span


def check_provenance(answer: Answer) -> list[Finding]:
    findings = []
    for mention in answer.provenance:
        if mention.verdict != "disagrees":
            continue
        target = answer.text[slice(*mention.target)]
        findings.append(
            Finding(
                check="provenance",
                span=mention.span,
                note=f"Provenance check: {mention.reason}.",
                lower_to="UNSUPPORTED",
                category="provenance",
                fabrication=Fabrication(
                    kind="date" if mention.kind == "date" else "entity",
                    text=target,
                    answer_span=mention.target,
                    reason=mention.reason,
                ),
                alone=True,
            )
        )
    return findings


def states_besides_provenance(answer: Answer, span: Span) -> bool:
    """Whether the answer's text in `span` states something besides its provenance statements: a
    fact that a wrong fetch date or source named beside it ("As of the policy fetched on
    2026-09-01, the adult fare is $2.75") does not make false."""
    mentions = answer.provenance_index.spans_overlapping(span)
    if any(start <= span[0] and span[1] <= end for start, end in mentions):
        return False  # the claim is (part of) one statement
    text = answer.text[slice(*span)]
    inside = [(max(start, span[0]) - span[0], min(end, span[1]) - span[0])
              for start, end in mentions]
    return _says_more(blank(text, inside + [m.span for m in citation_markers(text)]))


def _says_more(rest: str) -> bool:
    """Whether text left once its provenance statements are blanked states anything: a quantity,
    or a content word beyond PROVENANCE_FILLER."""
    return bool(set(content_words(rest)) - PROVENANCE_FILLER or quantities(rest))


# Words that may surround a provenance statement without stating a policy fact.
PROVENANCE_FILLER = frozenset(
    """information info data answer detail fact figure source sourced fetched retrieved accessed
    downloaded updated last published current currently latest snapshot date dated version copy
    based come came taken drawn pulled obtained according section page website site document
    documentation policy provenance record reflect accurate valid here above below note passage
    retrieval checked collected captured revised posted reviewed reference referenced cited see
    available found listed stated""".split()
)


def provenance_verdict(sentence: str, request: JudgeRequest) -> ProvenanceVerdict | None:
    """Whether `sentence` is a provenance statement that agrees with the passage headers.

    "disagrees": it makes a provenance claim (fetch date, agency, document, section, source URL)
    that no passage header gives. "agrees": every provenance claim in it agrees with a header and
    it says nothing else: no quantity and no content word outside its provenance phrases beyond
    PROVENANCE_FILLER (so "This is from the Fare Policy, section 4.2 (fetched 2026-08-16)."
    agrees, while "As of 2026-08-16, seniors pay $1.35." is None: its fare must be judged against
    the passage text as usual). None: otherwise. `provenance_mentions` gives the phrases themselves,
    for a judge that wants to set them aside and judge the rest of a mixed sentence.
    """
    mentions = [m for m in provenance_mentions(sentence, request) if m.verdict is not None]
    if not mentions:
        return None
    if any(m.verdict == "disagrees" for m in mentions):
        return "disagrees"
    rest = blank(
        sentence, [m.span for m in mentions] + [m.span for m in citation_markers(sentence)]
    )
    return None if _says_more(rest) else "agrees"
