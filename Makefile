# The two commands a user needs: `make demo` (set up, then run the emulated-cluster demo) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
P4INA := $(VENV)/bin/p4ina

.PHONY: setup demo test lint typecheck pytest clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(P4INA) demo

lint: setup
	$(VENV)/bin/ruff check .

typecheck: setup
	$(VENV)/bin/mypy

pytest: setup
	$(PY) -m pytest -q

test: lint typecheck pytest

clean:
	$(P4INA) run --clean 2>/dev/null || true
	rm -rf build *.egg-info .pytest_cache .mypy_cache .ruff_cache
