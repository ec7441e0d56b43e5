"""`make bench-compare`'s arithmetic and the one list of benchmark steps (bench/steps.py): which
runs are compared, and when a figure counts as worse. No database: the runs are given as rows."""

from __future__ import annotations

import pytest

from bench.compare import order, ratios
from bench.steps import FULL, QUICK, bench_env, select


def _rows(**values: float) -> list[dict]:
    return [{"name": name, "value": value, "unit": "ms", "target": 100, "direction": "lower",
             "met": value <= 100} for name, value in values.items()]


def test_each_round_runs_the_old_commit_first_and_last():
    assert order(1) == ["A", "B", "B", "A"]
    assert order(2) == ["A", "B", "B", "A"] * 2


def test_a_figure_slower_in_every_head_run_is_worse():
    runs = {"A": [_rows(page=40), _rows(page=44)], "B": [_rows(page=60), _rows(page=62)]}
    (line,) = ratios(runs, noise=0.15)
    assert line["ref_median"] == 42 and line["head_median"] == 61
    assert line["ratio"] == pytest.approx(61 / 42)
    assert line["change"] == "worse"


def test_overlapping_runs_are_only_a_hint():
    runs = {"A": [_rows(page=40), _rows(page=70)], "B": [_rows(page=60), _rows(page=68)]}
    assert ratios(runs, noise=0.15)[0]["change"] == "worse?"


def test_higher_is_better_figures_read_the_other_way():
    def rows(value: float) -> list[dict]:
        return [{"name": "export", "value": value, "unit": "rows/s", "target": 50000,
                 "direction": "higher", "met": value >= 50000}]

    runs = {"A": [rows(30000), rows(32000)], "B": [rows(52000), rows(55000)]}
    (line,) = ratios(runs, noise=0.15)
    assert line["change"] == "better" and line["head_met"] is True


def test_within_the_noise_is_no_change_and_a_new_figure_says_so():
    runs = {"A": [_rows(page=40), _rows(page=40)],
            "B": [_rows(page=44, extra=5), _rows(page=43, extra=5)]}
    page, extra = ratios(runs, noise=0.15)
    assert page["change"] == "" and extra["change"] == "only in HEAD" and extra["ratio"] is None


def test_a_scale_step_brings_the_scale_load_and_unknown_names_are_refused():
    selected = select(QUICK, ["export_labels"])
    assert [step.name for step in selected] == ["scale_data", "export_labels"]
    assert [step.name for step in select(QUICK, ["answer_cost"])] == ["answer_cost"]
    assert select(FULL, None) == FULL
    with pytest.raises(SystemExit, match="no such step: nope"):
        select(QUICK, ["nope"])


def test_the_benchmarks_databases_are_their_own_on_the_same_servers():
    env = bench_env({"DATABASE_URL": "postgres://u@db:5432/app", "BENCH_DB": "app_bench",
                     "CELERY_BROKER_URL": "redis://r:6379/3", "BENCH_REDIS_DB": "9"})
    assert env == {"DATABASE_URL": "postgres://u@db:5432/app_bench",
                   "CELERY_BROKER_URL": "redis://r:6379/9"}
    with pytest.raises(SystemExit, match="must contain 'bench'"):
        bench_env({"BENCH_DB": "app"})
