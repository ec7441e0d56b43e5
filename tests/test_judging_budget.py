"""A real thread-pool worker under attack by cost: an answer that burns CPU fails its run at the
judging CPU budget and frees its thread, and one client's flood waits its turn (at most
JUDGE_CLIENT_CONCURRENCY judged at once) while another client's answer goes ahead."""

from __future__ import annotations

import pytest

from reviewapp.models import Answer, JudgeRun
from reviewapp.api.clients import api_client_create
from tests import factories as make
from tests.conftest import private_worker, wait_for
from tests.judges.factories import GOOD_ANSWER, GOOD_PASSAGE, HEAVY_ANSWER, heavy_passages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

BUDGET, LATENCY = "0.3", 1.5


@pytest.fixture
def budget_worker(tmp_path, monkeypatch):
    """A real worker of 2 threads on a queue of its own, with a CPU budget of 0.3 s per judging and
    one answer per client at a time, beside a fake LLM that takes 1.5 s per request."""
    with private_worker(
        tmp_path,
        monkeypatch,
        name="budget",
        threads=2,
        latency=LATENCY,
        JUDGE_TASK_SOFT_TIME_LIMIT="60",
        JUDGE_TASK_TIME_LIMIT="70",
        JUDGE_CPU_BUDGET_SECONDS=BUDGET,
        JUDGE_CLIENT_CONCURRENCY="1",
        JUDGE_CLIENT_WAIT_SECONDS="0.3",
    ) as fake:
        yield fake


def _settled(ids):
    return Answer.objects.filter(pk__in=ids, status__in=["judged", "failed"]).count() == len(ids)


def test_an_answer_that_burns_cpu_fails_its_run_instead_of_holding_a_worker(budget_worker):
    attacker, _ = api_client_create(name="attacker")
    heavy = make.ingested(client=attacker, answer=HEAVY_ANSWER, passages=heavy_passages()).pk
    cheap = make.ingested(client=None).pk
    wait_for(lambda: _settled([heavy, cheap]), timeout=60)

    answer = Answer.objects.get(pk=heavy)
    run = JudgeRun.objects.get(answer=answer)
    assert (answer.status, answer.review_status, answer.routing_reason) == (
        "failed",
        "in_review",
        "judge failed",
    )
    assert (run.status, run.error, run.error_is_transient) == (
        "failed",
        f"judging exceeded its CPU budget of {BUDGET} s",
        False,
    )
    assert not run.claims.exists()
    # the thread was free for the next answer
    assert Answer.objects.get(pk=cheap).status == "judged"


def test_one_client_flooding_answers_cannot_take_every_worker_thread(budget_worker):
    make.openai_policy()
    flooder, _ = api_client_create(name="flooder")
    other, _ = api_client_create(name="other")
    flood = [
        make.ingested(GOOD_ANSWER, client=flooder, passages=[{"text": GOOD_PASSAGE}]).pk
        for _ in range(4)
    ]
    late = make.ingested(GOOD_ANSWER, client=other, passages=[{"text": GOOD_PASSAGE}]).pk
    wait_for(lambda: _settled([*flood, late]), timeout=90)

    # Waiting its turn is not a failure: every answer of the flood is judged, once.
    assert (
        list(Answer.objects.filter(pk__in=flood).values_list("status", flat=True)) == ["judged"] * 4
    )
    runs = list(JudgeRun.objects.filter(answer_id__in=flood).order_by("started_at"))
    assert [run.status for run in runs] == ["succeeded"] * 4
    # One at a time: each of the flooder's runs started after the one before it finished...
    assert all(later.started_at >= earlier.finished_at for earlier, later in zip(runs, runs[1:]))
    # ...and the other client's answer, posted last, was judged beside the first of them.
    other_run = JudgeRun.objects.get(answer_id=late)
    assert other_run.status == "succeeded" and other_run.finished_at < runs[1].finished_at
