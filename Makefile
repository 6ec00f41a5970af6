# Two entry points for a fresh machine: `make demo` (install + main job), `make test` (install + tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow docs install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The SoG demo (about 8 minutes on 2 cores, installed): the shipped Leduc CVPN evaluated by SoG's protocol
# (table + out/demo/leduc_shipped.png), then three minutes of self-play from scratch.
demo: $(STAMP)
	$(BIN)/python scripts/evaluate.py --game=leduc_poker --leaf=checkpoints/leduc_poker --sims=30,100 \
	  --seeds=3 --plot=out/demo/leduc_shipped.png
	rm -rf out/demo/leduc_from_scratch
	$(BIN)/python scripts/train.py --config=configs/leduc.py --workdir=out/demo/leduc_from_scratch \
	  --config.max_seconds=180 --config.evaluation.settings="((100,1.0),)" --config.evaluation.seeds=1 \
	  --log_every=20

# The docs site builds with --strict first (a broken link or a docstring reference that no longer
# resolves fails), then the suite (which also runs the README's quick start, the docs' code and
# examples/tour.ipynb).
test: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

# The documentation site, served at http://127.0.0.1:8000 (rebuilt on every edit).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The checks marked slow, kept out of `make test` (a faster test there covers each one's property).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m slow

clean:
	rm -rf $(VENV)
