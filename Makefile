# Two entry points for people: `make demo` and `make test`. Everything else is a building block.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
SHARED_DATA ?= $(abspath ../shared/data)
DEMO_HOME ?= $(CURDIR)/var/demo

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Development machines and CI have the official texts mirrored beside the project; real users download them.
ifneq ($(wildcard $(SHARED_DATA)/laws),)
export COMPLIANCE_LAW_MIRROR ?= $(SHARED_DATA)/laws
export COMPLIANCE_SHARED_DATA ?= $(SHARED_DATA)
endif

.PHONY: install demo test test-slow lint typecheck format bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch is pinned in the same command so pip takes the local CPU build instead of a CUDA one.
	$(PY) -m pip install -q "torch==2.13.0" -e ".[ml,postgres,api,langchain,tune,dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	@mkdir -p $(DEMO_HOME)
	COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance db upgrade
	COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance laws install gdpr
	COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance ingest examples/
	@echo
	@echo "Demo database: $(DEMO_HOME)/compliance.db"
	@echo "Explore it with: COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance documents list"

lint: install
	$(BIN)/ruff check compliance tests bench tools
	$(BIN)/ruff format --check compliance tests bench tools
	$(BIN)/mypy

test: install lint
	$(PY) -m pytest -q

test-slow: install
	$(PY) -m pytest -q -m slow

format: install
	$(BIN)/ruff check --fix compliance tests bench
	$(BIN)/ruff format compliance tests bench

bench: install
	$(PY) -m bench

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
