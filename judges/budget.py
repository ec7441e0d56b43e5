"""A CPU budget for one judging, enforced in whichever thread judges.

Celery's time limits are signals, so they only reach a process's main thread (and the thread pool
the workers run does not enforce them at all). A watchdog thread instead reads the judging
thread's own CPU clock and, once the budget is spent, raises CPUBudgetExceeded inside that thread
(PyThreadState_SetAsyncExc). Waiting (on the LLM, a rate limit, the database) costs no CPU and so
does not count. The exception arrives between bytecodes: one long call into C (a huge regex
match) runs to its end first. Where threads have no CPU clock of their own (not Linux or BSD),
no budget is enforced.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class CPUBudgetExceeded(BaseException):
    """Raised inside the judging thread. A BaseException, so that a judge's `except Exception`
    cannot swallow it; within_cpu_budget() turns it into BudgetSpent at its edge."""


class BudgetSpent(Exception):
    def __init__(self, budget_s: float):
        super().__init__(f"judging exceeded its CPU budget of {budget_s:g} s")
        self.budget_s = budget_s


RAISE_AGAIN_S = 0.05


class _Watchdog:
    """One thread per process watching every thread that judges on a budget."""

    def __init__(self):
        # thread ident -> (its CPU clock, budget's end)
        self._ends_at: dict[int, tuple[int, float]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, ident: int, budget_s: float) -> None:
        clock = time.pthread_getcpuclockid(ident)
        with self._wake:
            self._ends_at[ident] = (clock, time.clock_gettime(clock) + budget_s)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._watch, name="judge-cpu-budget", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def disarm(self, ident: int) -> None:
        # Under the lock the watchdog raises under: once disarmed nothing new is raised, and an
        # exception raised but not yet delivered is withdrawn.
        with self._wake:
            self._ends_at.pop(ident, None)
            _raise_in(ident, None)

    def _watch(self) -> None:
        with self._wake:
            while True:
                wait = None
                for ident, (clock, ends_at) in list(self._ends_at.items()):
                    left = ends_at - time.clock_gettime(clock)
                    if left <= 0:
                        # Raised again every RAISE_AGAIN_S of the thread's CPU while it stays armed:
                        # Python drops an exception raised where it ignores them (a gc callback, a
                        # __del__ or weakref callback, running in whichever thread set them off) and
                        # a bare `except:` may swallow one. Only within_cpu_budget disarms, and it
                        # takes any that arrive meanwhile, so none lands past its edge.
                        self._ends_at[ident] = (clock, time.clock_gettime(clock) + RAISE_AGAIN_S)
                        _raise_in(ident, CPUBudgetExceeded)
                        left = RAISE_AGAIN_S
                    # One thread's CPU clock runs no faster than the wall clock.
                    wait = left if wait is None else min(wait, left)
                self._wake.wait(wait)


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(exc) if exc else None
    )


_watchdog = _Watchdog()
SUPPORTED = hasattr(time, "pthread_getcpuclockid")


def _after_fork() -> None:
    # A forked child (a prefork pool process) has no watchdog thread, and maybe a lock held by it.
    global _watchdog
    _watchdog = _Watchdog()


os.register_at_fork(after_in_child=_after_fork)


def within_cpu_budget(budget_s: float, work: Callable[[], T]) -> T:
    """work(), on at most `budget_s` seconds of this thread's CPU time, else BudgetSpent.
    0 or less: no budget."""
    if budget_s <= 0 or not SUPPORTED:
        return work()
    ident = threading.get_ident()
    spent = False
    try:
        _watchdog.arm(ident, budget_s)
        return work()
    except CPUBudgetExceeded:
        spent = True
    finally:
        # The one exception may still arrive while disarming (before the lock is taken).
        while True:
            try:
                _watchdog.disarm(ident)
                break
            except CPUBudgetExceeded:
                spent = True
        if spent:
            raise BudgetSpent(budget_s) from None
