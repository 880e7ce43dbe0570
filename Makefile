# The two commands of the README, and the benchmark.
# Debian's python3.11 is built with PGO and LTO, pyenv's default build is not: the ingest runs
# a quarter faster on it. PYTHON=... picks another Python 3.11.
PYTHON ?= $(shell /usr/bin/python3.11 -c 'import ensurepip, venv' 2>/dev/null \
	&& echo /usr/bin/python3.11 || echo python3)
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1:8000

.PHONY: run test lint typecheck pytest bench prod-smoke slurm-oracle pbs-oracle clean

$(BIN)/.installed: requirements.txt
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11) and "Python 3.11 is needed")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

## The dashboard on the embedded default: SQLite, the sample site, no outside service; the
## cycles run beside it (run_cycle --loop stands for the Celery beat and worker).
run: $(BIN)/.installed
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py createcachetable
	$(BIN)/python manage.py demo
	$(BIN)/python manage.py run_cycle --loop & cycles=$$!; \
	trap 'kill $$cycles 2>/dev/null' EXIT INT TERM; \
	$(BIN)/python manage.py runserver $(HOST)

## The whole suite: lint, format, types, then every test (DATABASE_URL picks the database).
test: lint typecheck pytest

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(BIN)/.installed
	$(BIN)/mypy .

# Two test processes (pytest-xdist), one a core; PYTEST_WORKERS=0 runs every test in this one.
PYTEST_WORKERS ?= 2
pytest: $(BIN)/.installed
	$(BIN)/pytest -n $(PYTEST_WORKERS)

bench: $(BIN)/.installed
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/fairtree.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/cycle.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/priorities.py
	$(BIN)/python bench/accelerator.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/depth.py
	$(BIN)/python bench/snapshots.py

## The production topology end to end on the local PostgreSQL and Redis: gunicorn with DEBUG
## off, a Celery worker and the beat, accounting pushed, a worker killed mid-cycle, a restore
## drill; about three minutes (docs/deploy.md).
prod-smoke: $(BIN)/.installed
	$(BIN)/python ops/prod_smoke.py

## A real Slurm 22.05 (Debian's packages) on this machine, as root, on ports and a munge of its
## own: each priority configuration of ops/slurm_oracle/site_spec.py captured again into
## tests/captures/slurm/ (a few minutes; nothing left running; docs/testing.md).
slurm-oracle:
	python3 ops/slurm_oracle/oracle.py --install $(ORACLE_ARGS)

## OpenPBS built from OPENPBS_SRC (a clone of github.com/openpbs/openpbs) into
## /opt/fairshare-pbs-oracle, its server, scheduler, comm and one MoM run here as root with a
## PBS_HOME and datastore of their own: each case of ops/pbs_oracle/pbs_site.py captured again
## into tests/captures/pbs/ (the build once, then about 25 minutes; nothing left running;
## docs/testing.md).
pbs-oracle:
	python3 ops/pbs_oracle/pbs_oracle.py --install $(ORACLE_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .mypy_cache .pytest_cache .ruff_cache .hypothesis
