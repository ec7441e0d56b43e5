import json
import re

from django import template
from django.utils.html import format_html_join
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from judges.types import LABEL_SEVERITY, NOT_SUPPORTED_LABELS

register = template.Library()

# CommonMark with raw HTML off (a tag is shown as text), no images (nothing loads from elsewhere),
# and markdown-it's own link check (no javascript: or data: links).
_GUIDELINES = MarkdownIt("commonmark", {"html": False}).disable("image")


def _link_open(renderer, tokens, idx, options, env):
    # A link opens in a new tab: leaving the review page would give its lease back.
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return renderer.renderToken(tokens, idx, options, env)


_GUIDELINES.add_render_rule("link_open", _link_open)

LABEL_ICONS = {
    "SUPPORTED": "✓",
    "PARTIALLY_SUPPORTED": "◐",
    "CONTRADICTED": "✗",
    "UNSUPPORTED": "?",
}
# Passage ids safe as they are in an HTML id, a CSS selector and a URL fragment.
PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")


@register.simple_tag
def options(choices, chosen="") -> SafeString:
    """The <option> elements of (value, name) pairs, the one whose value is `chosen` selected.
    The review page draws several selects per claim: as template loops, their lookups on a claim
    with no mark yet (each one raises and is caught) cost more than the rest of the page."""
    return format_html_join(
        "", '<option value="{}"{}>{}</option>',
        ((value, " selected" if value == chosen else "", name) for value, name in choices),
    )


@register.filter
def get_item(mapping, key):
    return (mapping or {}).get(key, {})


@register.filter
def label_icon(label: str) -> str:
    """A shape per label, so the highlight reads without colour."""
    return LABEL_ICONS.get(label, "")


@register.filter
def worst_label(claims) -> str:
    """The label a highlighted segment is drawn with when several claims cover it."""
    labels = {c.human_label or c.label for c in claims} & LABEL_SEVERITY.keys()
    return max(labels, key=LABEL_SEVERITY.__getitem__, default="")


@register.filter
def not_supported(label: str) -> bool:
    """A label under which the claim's quote is only the closest text, not evidence."""
    return label in NOT_SUPPORTED_LABELS


@register.filter
def closest_only(claims) -> bool:
    """A passage segment that supports none of its claims, even in part: the judge's closest text
    for claims it found unsupported or contradicted, shown apart from real evidence."""
    return all((c.human_label or c.label) in NOT_SUPPORTED_LABELS for c in claims)


@register.filter
def differs_note(differs, side: str) -> str:
    """What a differing-word mark says on hover: which claim, what kind of difference."""
    kinds = ", ".join(dict.fromkeys(d.kind.replace("_", " ") for d in differs))
    if side == "answer":
        return f"differs from the closest passage text ({kinds})"
    claims = ", ".join(dict.fromkeys(d.claim.cid for d in differs))
    return f"differs from claim {claims} ({kinds})"


@register.filter
def claim_ids(claims) -> str:
    return " ".join(str(c.pk) for c in claims)


@register.filter
def has_claim(claims, claim_pk) -> bool:
    return any(c.pk == claim_pk for c in claims)


@register.filter
def label_name(label: str) -> str:
    """PARTIALLY_SUPPORTED -> Partially supported."""
    return label.replace("_", " ").capitalize()


@register.filter
def pretty_json(value) -> str:
    """Indented JSON for reading (the template escapes it, as it escapes any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


@register.filter
def passage_dom_id(passage) -> str:
    """The passage's HTML id: `passage-<its id>` when that id is plain, else `passage-~<position>`
    (a client's id may hold spaces, quotes or `#`; no plain id holds `~`, so none is shared)."""
    return (
        f"passage-{passage.pid}"
        if PLAIN_ID.fullmatch(passage.pid)
        else f"passage-~{passage.position + 1}"
    )


# A question this short, or with one of these words, is read with the turns before it ("She's 63",
# "What about that one?"): the review page opens them instead of leaving the context one click away.
SHORT_QUESTION_WORDS = 4
REFERS_BACK = re.compile(
    r"\b(she|he|her|him|his|hers|they|them|their|it|its|this|that|these|those|same|also|instead|"
    r"again|else|"
    r"above|earlier|previous|former|latter|what about|how about)\b"
    r"|^\s*(and|but|or|so|what if)\b",
    re.IGNORECASE,
)


@register.filter
def leans_on_prior_turns(question: str) -> bool:
    """Whether the question likely depends on the conversation before it (short, or refers back)."""
    words = re.findall(r"\w+(?:'\w+)?", question or "")
    return len(words) <= SHORT_QUESTION_WORDS or bool(REFERS_BACK.search(question or ""))


@register.filter
def shown_json(value) -> str:
    """A metadata value as text: strings as they are, anything else as compact JSON."""
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


@register.filter
def guidelines_html(text: str) -> SafeString:
    """Annotation guidelines (markdown an admin wrote) as HTML: every character of the text is
    escaped by the renderer, which emits only its own tags."""
    return mark_safe(  # noqa: S308 - html off: the renderer escapes all text
        _GUIDELINES.render(text or "")
    )
