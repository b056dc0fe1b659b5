# One entry point: `make demo` runs the main job on the bundled example, `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup test test-openai-lowest lint demo bench clean

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

# The lowest openai release pyproject.toml declares, in a venv of its own, against the tests of the code that uses
# it (CI runs this after `make test`, which gets the newest release).
OPENAI_LOWEST := $(shell sed -n 's/^ *"openai>=\([0-9.]*\)".*/\1/p' pyproject.toml)
LOWEST_VENV   := $(VENV)/openai-lowest
LLM_TESTS     := tests/test_llm_*.py tests/test_generate*.py tests/test_cli_generate.py tests/test_fake_openai.py \
                 tests/test_filters_llm.py

$(LOWEST_VENV)/bin/goldset: pyproject.toml
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(LOWEST_VENV)/bin/python -m pip install -q -e '.[test]' 'openai==$(OPENAI_LOWEST)'
	@touch $@

test-openai-lowest: $(LOWEST_VENV)/bin/goldset
	$(LOWEST_VENV)/bin/python -c 'import openai; assert openai.__version__ == "$(OPENAI_LOWEST)", openai.__version__'
	$(LOWEST_VENV)/bin/python -m pytest -q $(LLM_TESTS)

demo: setup
	bash examples/demo.sh

bench: setup
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-workspace .pytest_cache .ruff_cache
