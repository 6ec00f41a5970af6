# Two entry points for a fresh machine: `make demo` (install + main job), `make test` (install + tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/solve.py --game=leduc_poker --iterations=1000 --eval_every=100

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

clean:
	rm -rf $(VENV)
