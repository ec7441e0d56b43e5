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

# Judge-side benchmarks that need no database (the scale ones are listed in the README).
bench: $(VENV)/.installed
	$(PY) bench/offline_judge.py
	$(PY) bench/locator.py
	$(PY) bench/judge_faults.py
	$(PY) bench/redteam.py

bench-quick: $(VENV)/.installed
	$(PY) bench/offline_judge.py --answers 50
	$(PY) bench/locator.py --quick

check: $(VENV)/.installed
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf .claimdesk staticfiles
