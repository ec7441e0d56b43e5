"""Task names lead to their code: each is its module path and function, and the name it had before
tasks moved to their folders ("reviewapp.tasks.<function>") still runs the same function for one
release (tests/test_judging_worker.py sends a real message under it)."""

import importlib

from celery import current_app

from reviewapp import enqueue
from reviewapp.celery import FORMER_TASK_PREFIX


def _ours() -> dict:
    return {name: task for name, task in current_app.tasks.items() if name.startswith("reviewapp.")}


def _current() -> dict:
    return {name: task for name, task in _ours().items() if not name.startswith(FORMER_TASK_PREFIX)}


def test_every_task_name_is_the_module_path_of_its_function():
    current = _current()
    assert {"reviewapp.judging.tasks.judge_answer", "reviewapp.webhooks.tasks.deliver_webhook"} \
        <= set(current)
    for name, task in current.items():
        module, _, function = name.rpartition(".")
        assert getattr(importlib.import_module(module), function).name == name


def test_each_former_name_runs_the_same_function_with_the_same_options():
    current = {name.rpartition(".")[2]: task for name, task in _current().items()}
    former = {name.removeprefix(FORMER_TASK_PREFIX): task for name, task in _ours().items()
              if name.startswith(FORMER_TASK_PREFIX)}
    assert set(former) == set(current)
    for function, task in former.items():
        assert _function(task) is _function(current[function])
        assert task.max_retries == current[function].max_retries
        assert task.typing == current[function].typing


def _function(task):
    return getattr(task.run, "__func__", task.run)  # bound when the task takes `self`


def test_the_services_send_tasks_by_their_new_names(monkeypatch):
    sent = []

    class Unsent:
        delay = staticmethod(lambda *args: None)

    monkeypatch.setattr(enqueue, "_task", lambda name: sent.append(name) or Unsent)
    enqueue.judge_answer_later(1)
    enqueue.deliver_webhook_later(1)
    assert sent == ["reviewapp.judging.tasks.judge_answer",
                    "reviewapp.webhooks.tasks.deliver_webhook"]
