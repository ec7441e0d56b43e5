"""Annotation guidelines: markdown an admin writes on the policy page, kept with each policy
version, shown to reviewers beside every answer, rendered without raw HTML."""

from __future__ import annotations

import pytest

from reviewapp.models import AuditEvent, Policy
from tests import factories as make

pytestmark = pytest.mark.django_db

HOSTILE = ('# Fares\n\nA price claim is **SUPPORTED** only when the passage states that price.\n\n'
           '<script>alert(1)</script> <b onclick="x()">bold?</b> [click](javascript:alert(1)) '
           '[the fare table](https://example.org/fares) ![pixel](https://tracker.example/p.png)')


@pytest.fixture
def admin_client(client):
    user = make.admin()
    client.force_login(user)
    return client


def _save(client, text: str, note: str = "first guidelines"):
    return client.post("/policy/guidelines", {"guidelines": text, "note": note})


def test_saving_guidelines_makes_a_policy_version_that_keeps_the_routing_values_and_is_audited(
    admin_client,
):
    before = Policy.current()
    response = _save(admin_client, "Confirm only what the passage says.")
    assert response.status_code == 302 and response["Location"] == "/policy/#guidelines"
    saved = Policy.current()
    assert (saved.version, saved.guidelines, saved.note) == (
        before.version + 1,
        "Confirm only what the passage says.",
        "first guidelines",
    )
    assert (saved.score_threshold, saved.blocking_labels) == (
        before.score_threshold,
        before.blocking_labels,
    )
    event = AuditEvent.objects.get(action="policy.created", object_id=str(saved.pk))
    assert (
        event.after["guidelines"] == "Confirm only what the passage says."
        and event.before["guidelines"] == ""
    )
    history = admin_client.get("/policy/").content.decode()
    assert "<b>guidelines</b>: none → 6 words: Confirm only what the passage says." in history


def test_a_routing_change_keeps_the_guidelines_and_a_rollback_brings_old_ones_back(admin_client):
    _save(admin_client, "Version one of the rules.")
    admin_client.post(
        "/policy/", make.policy_form(Policy.current(), score_threshold=0.5, note="looser")
    )
    assert (Policy.current().score_threshold, Policy.current().guidelines) == (
        0.5,
        "Version one of the rules.",
    )
    first = Policy.current().version
    _save(admin_client, "Version two of the rules.", note="stricter")
    admin_client.post(f"/policy/{first}/rollback", {"note": "two was wrong"})
    assert Policy.current().guidelines == "Version one of the rules."


@pytest.mark.parametrize(("text", "note", "message"), [
    ("", "", "This field is required."),  # no note
    ("x" * 20_001, "too long", "Ensure this value has at most 20000 characters"),
    ("", "unchanged", "unchanged; edit them before saving."),
])
def test_bad_guidelines_are_a_400_naming_the_field_and_save_nothing(
    admin_client, text, note, message
):
    version = Policy.current().version
    response = _save(admin_client, text, note=note)
    assert response.status_code == 400 and message in response.content.decode()
    assert Policy.current().version == version


def test_only_admins_edit_the_guidelines(client, rita):
    client.force_login(rita)
    assert _save(client, "my own rules").status_code == 403
    assert Policy.current().guidelines == ""


def test_the_review_page_shows_the_guidelines_as_markdown_with_no_raw_html_images_or_script_links(
    admin_client, rita, client
):
    _save(admin_client, HOSTILE)
    answer = make.in_review()
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    panel = page[page.index('<aside id="guidelines"'):page.index("</aside>")]
    assert f"policy v{Policy.current().version}" in panel
    assert "<h1>Fares</h1>" in panel and "<strong>SUPPORTED</strong>" in panel
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panel and "<script" not in panel
    assert "&lt;b onclick=&quot;x()&quot;&gt;" in panel and "onclick=" not in panel.replace(
        "onclick=&quot;", ""
    )
    # left as text, not a link
    assert "javascript:" not in panel.replace("[click](javascript:alert(1))", "")
    assert (
        '<a href="https://example.org/fares" target="_blank" rel="noopener noreferrer">the fare'
        ' table</a>'
        in panel
    )
    assert "<img" not in panel
    assert 'aria-controls="guidelines" aria-expanded="false">Guidelines <kbd>g</kbd>' in page


def test_without_guidelines_the_panel_says_who_writes_them(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "No guidelines yet; an admin writes them on the policy page." in page
