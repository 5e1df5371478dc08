# Two commands for a newcomer: `make demo` and `make test`. Each creates .venv when missing
# and installs the pinned dependencies (requirements.lock) plus this package, editable.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# OpenCode is pinned and installed project-locally (a self-contained binary; node is only needed to install it).
OPENCODE_VERSION := 1.18.33
OPENCODE := .tools/opencode/node_modules/.bin/opencode

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

$(OPENCODE):
	mkdir -p .tools/opencode
	cd .tools/opencode && npm install --silent --no-audit --no-fund --prefix . opencode-ai@$(OPENCODE_VERSION)
	$(OPENCODE) --version

demo: $(STAMP) $(OPENCODE)
	$(BIN)/repoanchor demo

test: $(STAMP) $(OPENCODE)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/perturb_throughput.py
	$(BIN)/python benchmarks/steps_throughput.py
	$(BIN)/python benchmarks/analysis_throughput.py
	$(BIN)/python benchmarks/image_overhead.py
	$(BIN)/python benchmarks/import_check.py
	$(BIN)/python benchmarks/matrix_throughput.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .ruff_cache
