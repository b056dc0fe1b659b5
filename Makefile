# One entry point: `make demo` runs the main job on the bundled example, `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup test lint demo bench clean

$(BIN)/goldset: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

setup: $(BIN)/goldset

lint: setup
	$(BIN)/ruff check goldset tests benchmarks
	$(BIN)/mypy

test: setup lint
	$(BIN)/python -m pytest -q

demo: setup
	bash examples/demo.sh

bench: setup
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-workspace .pytest_cache .ruff_cache
