# Two entry points for people: `make demo` and `make test`. Everything else is a building block.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
SHARED_DATA ?= $(abspath ../shared/data)
DEMO_HOME ?= $(CURDIR)/var/demo
DEMO_ENV := COMPLIANCE_HOME=$(DEMO_HOME)

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Development machines and CI have the official texts mirrored beside the project; real users download them.
ifneq ($(wildcard $(SHARED_DATA)/laws),)
export COMPLIANCE_LAW_MIRROR ?= $(SHARED_DATA)/laws
export COMPLIANCE_SHARED_DATA ?= $(SHARED_DATA)
endif

.PHONY: install demo test test-slow test-core lint typecheck format bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch is pinned in the same command so pip takes the local CPU build instead of a CUDA one.
	$(PY) -m pip install -q "torch==2.13.0" -e ".[ml,postgres,api,workers,langchain,tune,dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	@mkdir -p $(DEMO_HOME)
	$(DEMO_ENV) $(BIN)/compliance db upgrade
	$(DEMO_ENV) $(BIN)/compliance laws install gdpr
	# The main job: ingest the sample policies, classify every paragraph against the 99 GDPR articles with the
	# classifier shipped in the package (a model trained into the home takes precedence; --train-if-missing trains
	# one only when there is neither, e.g. with COMPLIANCE_SHIPPED_MODELS=false), store the scored links.
	$(DEMO_ENV) $(BIN)/compliance audit examples/ --train-if-missing --relative-to . --export $(DEMO_HOME)/links.xlsx
ifneq ($(wildcard $(SHARED_DATA)/laws/eu/eprivacy.json),)
	# A new law arrives: the ePrivacy Directive (from the local mirror) raises alerts on the controls it concerns,
	# decided by the link decision's calibration shipped in the package (calibrated here only if it is missing).
	test -f $(DEMO_HOME)/models/link-decision/config.json || test -f compliance/shipped/link-decision/config.json \
		|| $(DEMO_ENV) $(BIN)/compliance alerts train-decision --max-steps 0
	$(DEMO_ENV) $(BIN)/compliance laws install eprivacy
	$(DEMO_ENV) $(BIN)/compliance alerts list
endif
	# The officer's view: the coverage and gap report (HTML, one file) and a screenshot of it in headless Chromium.
	$(DEMO_ENV) $(BIN)/compliance report --format html --out $(DEMO_HOME)/coverage-gdpr.html
	$(DEMO_ENV) $(BIN)/compliance report --format xlsx --out $(DEMO_HOME)/coverage-gdpr.xlsx
	-$(PY) -m tools.screenshot --optional $(DEMO_HOME)/coverage-gdpr.html $(DEMO_HOME)/coverage-gdpr.png
	@echo
	@echo "Demo database:   $(DEMO_HOME)/compliance.db  (SQLite)"
	@echo "Links exported:  $(DEMO_HOME)/links.xlsx  (fill in 'decision', then: compliance links import FILE)"
	@echo "Coverage report: $(DEMO_HOME)/coverage-gdpr.html  (and .xlsx)"
	@echo "Explore:         COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance documents list"
	@echo "                 COMPLIANCE_HOME=$(DEMO_HOME) $(BIN)/compliance alerts list"

LINTED := compliance experiments tests bench tools

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

test: install lint
	$(PY) -m pytest -q --durations=30

test-slow: install
	$(PY) -m pytest -q -m slow

# The package with its core dependencies only (no extras), as a user's `pip install compliance-plugin` gets it:
# every module imports (or names its extra) and the command line starts. A fresh virtualenv each time.
CORE_VENV ?= var/core-venv
test-core:
	rm -rf $(CORE_VENV)
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install -q --disable-pip-version-check -e .
	$(CORE_VENV)/bin/python -m tests.core_install

format: install
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

bench: install
	$(PY) -m bench

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
