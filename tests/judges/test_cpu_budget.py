"""The CPU budget of one judging (judges.budget): it counts the judging thread's own CPU time,
stops a judging that spends more, and lets waiting and cheap work through."""

import threading
import time

import pytest

import judges
from judges import JudgeConfig, JudgeError, JudgeRequest
from judges.budget import BudgetSpent, within_cpu_budget
from tests.judges.factories import HEAVY_ANSWER, heavy_passages


def heavy_request() -> JudgeRequest:
    return JudgeRequest.model_validate({"answer": HEAVY_ANSWER, "passages": heavy_passages()})


def _burn(seconds: float) -> int:
    ends, n = time.thread_time() + seconds, 0
    while time.thread_time() < ends:
        n += 1
    return n


def test_an_answer_that_burns_cpu_fails_its_judging_with_the_budget_named():
    started = time.thread_time()
    with pytest.raises(JudgeError) as failed:
        judges.judge(heavy_request(), JudgeConfig(cpu_budget_s=0.3))
    assert str(failed.value) == "judging exceeded its CPU budget of 0.3 s"
    assert failed.value.transient is False  # the same input would cost as much on a retry
    assert time.thread_time() - started < 1.5


def test_a_cheap_answer_is_judged_within_the_same_budget():
    request = JudgeRequest.model_validate(
        {"answer": "The fare is $1.00.", "passages": [{"text": "The fare is $1.00."}]}
    )
    assert judges.judge(request, JudgeConfig(cpu_budget_s=0.3)).result.verdict == "GROUNDED"


def test_waiting_costs_no_budget():
    assert within_cpu_budget(0.1, lambda: time.sleep(0.4) or "slept") == "slept"


def test_the_budget_stops_work_in_a_thread_other_than_the_main_one():
    outcomes = {}

    def judge_in_thread(name, seconds):
        try:
            outcomes[name] = within_cpu_budget(0.2, lambda: _burn(seconds)) and "finished"
        except BudgetSpent as exc:
            outcomes[name] = str(exc)

    threads = [threading.Thread(target=judge_in_thread, args=(name, seconds))
               for name, seconds in (("burner", 30.0), ("cheap", 0.05))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert outcomes == {"burner": "judging exceeded its CPU budget of 0.2 s", "cheap": "finished"}


def test_an_except_exception_in_the_judge_cannot_swallow_the_budget():
    def stubborn():
        while True:
            try:
                _burn(5.0)
                return "finished"
            except Exception:  # a judge's broad handler
                continue

    with pytest.raises(BudgetSpent):
        within_cpu_budget(0.1, stubborn)


def test_a_budget_exception_dropped_where_python_ignores_exceptions_is_raised_again():
    import gc

    calls = []

    def in_a_gc_callback(
        phase, info
    ):  # as hypothesis leaves one installed: exceptions in it are dropped
        if phase == "start" and not calls:
            calls.append(phase)
            _burn(0.3)  # the budget runs out in here

    def collects_then_works():
        gc.collect()
        _burn(3.0)
        return "finished"

    gc.callbacks.append(in_a_gc_callback)
    try:
        started = time.thread_time()
        with pytest.raises(BudgetSpent):
            within_cpu_budget(0.1, collects_then_works)
        assert calls and time.thread_time() - started < 1.5
    finally:
        gc.callbacks.remove(in_a_gc_callback)


def test_a_bare_except_that_swallows_the_first_is_stopped_by_the_next():
    def swallows_once():
        try:
            _burn(5.0)
        except BaseException:  # noqa: BLE001 - a judge that swallows everything once
            pass
        _burn(5.0)
        return "finished"

    with pytest.raises(BudgetSpent):
        within_cpu_budget(0.1, swallows_once)


def test_no_exception_reaches_the_thread_after_the_budgeted_work_returned():
    for _ in range(50):  # each finishes within a hair of its budget
        try:
            within_cpu_budget(0.01, lambda: _burn(0.0099))
        except BudgetSpent:
            pass
    assert _burn(0.3) > 0  # had a late exception been left pending, it would land here


def _burn_on_budget_in_child(queue):
    try:
        queue.put(within_cpu_budget(0.2, lambda: _burn(30.0)) and "finished")
    except BudgetSpent as exc:
        queue.put(str(exc))


def test_the_budget_holds_in_a_forked_pool_process():
    import multiprocessing

    within_cpu_budget(0.2, lambda: _burn(0.01))  # the parent's watchdog runs: a child has none
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_burn_on_budget_in_child, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=15) == "judging exceeded its CPU budget of 0.2 s"
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()
