"""A re-judge's run beside the answer's own, claim by claim; job rows link to what they changed."""

from __future__ import annotations

import pytest

from reviewapp.judging import jobs as jobs_service
from reviewapp.models import Answer, Job, JudgeRun, Passage, Policy
from reviewapp.review import selectors
from tests import factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(make.admin())
    return client


def _rejudged(admin_client) -> tuple[Answer, JudgeRun, Job]:
    """fare_payload()'s answer (c2 CONTRADICTED: P2 says $92.00), re-judged by the offline judge
    after P2 was corrected to $75.00: the re-judge's c2 is SUPPORTED, c1 the same."""
    answer = make.in_review()
    Passage.objects.filter(answer=answer, pid="P2").update(
        text="A 30-day pass costs $75.00 and covers all buses."
    )
    admin_client.post(
        "/policy/rejudge", {"limit": 10, "profile": "", "backend": "offline", "model": ""}
    )
    job = Job.objects.get(kind="rejudge")
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    return answer, JudgeRun.objects.get(answer=answer, job=job), job


def test_the_two_runs_pair_claims_by_the_answer_text_they_cover(admin_client):
    answer, side, _ = _rejudged(admin_client)
    rows = selectors.run_comparison(answer, side)
    assert [(r.shown.cid, r.shown.label, r.other.label, r.differs) for r in rows] == [
        ("c1", "SUPPORTED", "SUPPORTED", False), ("c2", "CONTRADICTED", "SUPPORTED", True)]


def test_a_claim_only_one_run_found_stands_alone_and_differs(admin_client):
    answer, side, _ = _rejudged(admin_client)
    side.claims.filter(cid="c2").delete()
    rows = selectors.run_comparison(answer, side)
    assert [(r.shown.cid, r.other and r.other.cid, r.differs) for r in rows] == [
        ("c1", "c1", False),
        ("c2", None, True),
    ]


def test_the_side_by_side_page_shows_both_runs_the_differences_and_the_human_label(
    admin_client, rita, client
):
    answer, side, job = _rejudged(admin_client)
    flagged = make.flagged(answer)
    flagged.human_label = "CONTRADICTED"  # as a reviewer's confirmation leaves it
    flagged.save(update_fields=["human_label"])
    jobs_page = admin_client.get(f"/jobs/{job.pk}/").content.decode()
    link = (
        f'<a href="/review/{answer.pk}/runs/{side.pk}/" aria-label="answer {answer.pk}: old and new'
        ' run side by side">'
    )
    assert link in jobs_page
    client.force_login(rita)  # reviewers read it too
    review = client.get(f"/review/{answer.pk}/").content.decode()
    assert f'<a href="/review/{answer.pk}/runs/{side.pk}/">side by side</a>' in review
    page = client.get(f"/review/{answer.pk}/runs/{side.pk}/").content.decode()
    assert "<b>1</b> of 2 claims differs" in page
    assert page.count('<tr class="differs">') == 1 and f"re-judge job #{job.pk}" in page
    row = page[page.index('<tr class="differs">'):]
    row = row[:row.index("</tr>")]
    assert (
        row.index("Contradicted")
        < row.index("Supported")
        < row.index("Contradicted", row.index("Supported"))
    )


def test_another_answers_run_is_not_found(admin_client, rita, client):
    answer, side, _ = _rejudged(admin_client)
    other = make.in_review(external_id="conv-2")
    client.force_login(rita)
    assert client.get(f"/review/{other.pk}/runs/{side.pk}/").status_code == 404
    assert client.get(f"/review/{answer.pk}/runs/{side.pk}/").status_code == 200


def test_a_reroute_job_row_links_to_the_answers_it_moved(admin_client):
    moved = make.in_review()
    admin_client.post(
        "/policy/",
        make.policy_form(
            Policy.current(),
            score_threshold=0.0,
            blocking_labels=[],
            critical_categories=[],
            audit_sample_rate=0,
            note="pass all",
        ),
    )
    admin_client.post("/policy/reroute")
    job = Job.objects.get(kind="reroute")
    jobs_service.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.changed, job.params["changed_ids"]) == (1, [moved.pk])
    assert Answer.objects.get(pk=moved.pk).review_status == "auto_passed"
    row = admin_client.get(f"/jobs/{job.pk}/").content.decode()
    assert f'Answers it moved:</span>\n    <a href="/review/{moved.pk}/">#{moved.pk}</a>' in row
