# ClaimDesk. `make run` = the demo on the embedded default; `make test` = the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: run test bench bench-quick check clean

# Reinstall when the dependencies change; otherwise reuse the venv.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ClaimDesk needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# SQLite, a folder as the Celery broker, the offline judge, demo data, a real worker. Ctrl-C stops it.
run: $(VENV)/.installed
	DEBUG=true PORT=$(PORT) $(PY) manage.py demo

# Postgres at 127.0.0.1:5432 and Redis at 127.0.0.1:6379 (DATABASE_URL / CELERY_BROKER_URL override).
test: $(VENV)/.installed
	$(PY) -m pytest

# Benchmarks (bench/README.md): each prints its figures and merges them into bench/results/latest.json.
# The scale ones get a Postgres database of their own, created first and dropped afterwards even when
# a benchmark fails (BENCH_DB must contain "bench"); the ingest one also needs Redis and wrk.
BENCH_PG ?= postgres://postgres@127.0.0.1:5432
BENCH_DB ?= claimdesk_bench
BENCH_BROKER ?= redis://127.0.0.1:6379/12
BENCH_ENV = DATABASE_URL=$(BENCH_PG)/$(BENCH_DB) CELERY_BROKER_URL=$(BENCH_BROKER)

# About 25 minutes on a shared 2-core box (the 100k-answer load alone takes 4-5).
bench: $(VENV)/.installed
	$(PY) bench/offline_judge.py
	$(PY) bench/locator.py
	$(PY) bench/judge_faults.py
	$(PY) bench/redteam.py
	$(BENCH_ENV) $(PY) bench/judge_throughput.py
	$(BENCH_ENV) $(PY) bench/answer_cost.py
	$(BENCH_ENV) $(PY) bench/rate_limit.py
	$(BENCH_ENV) $(PY) bench/bench_db.py create
	trap '$(BENCH_ENV) $(PY) bench/bench_db.py drop' EXIT; set -e; \
	$(BENCH_ENV) $(PY) bench/scale_data.py --answers 100000; \
	$(BENCH_ENV) $(PY) bench/queue_pages.py; \
	$(BENCH_ENV) $(PY) bench/policy_preview.py; \
	$(BENCH_ENV) $(PY) bench/export_labels.py; \
	$(BENCH_ENV) $(PY) bench/ingest_load.py
	$(PY) bench/report.py

# Under 5 minutes: smaller sizes, one run each. Its figures are for spotting regressions, not targets
# (the scale ones are measured on 10k answers / ~100k claims instead of 100k / 1M).
bench-quick: $(VENV)/.installed
	$(PY) bench/offline_judge.py --answers 50 --sized-answers 8
	$(PY) bench/locator.py --quick
	$(BENCH_ENV) $(PY) bench/judge_throughput.py --quick
	$(BENCH_ENV) $(PY) bench/answer_cost.py --quick
	$(BENCH_ENV) $(PY) bench/rate_limit.py --quick
	$(BENCH_ENV) $(PY) bench/bench_db.py create
	trap '$(BENCH_ENV) $(PY) bench/bench_db.py drop' EXIT; set -e; \
	$(BENCH_ENV) $(PY) bench/scale_data.py --answers 10000; \
	$(BENCH_ENV) $(PY) bench/queue_pages.py --quick; \
	$(BENCH_ENV) $(PY) bench/export_labels.py; \
	$(BENCH_ENV) $(PY) bench/ingest_load.py --quick
	$(PY) bench/report.py

check: $(VENV)/.installed
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf .claimdesk staticfiles
