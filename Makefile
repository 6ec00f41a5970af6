# Two entry points for a fresh machine: `make demo` (install + main job), `make test` (install + tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The whole repository (ruff skips what .gitignore names): code, the docs' hooks and the Python blocks
# of the Markdown pages.
LINTED := .

.PHONY: demo test test-slow docs install lock format clean

# The exact versions the suite and the docs' numbers were measured with (requirements.lock) are the
# install's constraints; pyproject.toml keeps the ranges for installing sog into another environment.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The SoG demo (8-12 minutes on 2 cores, installed, by the day's compile speed): the shipped Leduc CVPN evaluated by SoG's protocol
# at SoG(33,1) and SoG(100,1) (table + out/demo/leduc_shipped.png: mbb/h against s with the seeds' ribbon and
# fig. 3's points), then three minutes of self-play from scratch.
demo: $(STAMP)
	$(BIN)/python scripts/evaluate.py --game=leduc_poker --leaf=checkpoints/leduc_poker --sims=33,100 \
	  --seeds=3 --plot=out/demo/leduc_shipped.png
	rm -rf out/demo/leduc_from_scratch
	$(BIN)/python scripts/train.py --config=configs/leduc.py --workdir=out/demo/leduc_from_scratch \
	  --config.max_seconds=180 --config.evaluation.settings="((100,1.0),)" --config.evaluation.seeds=1 \
	  --log_every=20

# Lint and format checks first (ruff, configured in pyproject.toml; `make format` fixes what it can),
# then the docs site builds with --strict (a broken link or a docstring reference that no longer
# resolves fails), then the suite (which also runs the README's quick start, the docs' code and
# examples/tour.ipynb).
test: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=15

# The documentation site, served at http://127.0.0.1:8000 (rebuilt on every edit).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The checks marked slow, kept out of `make test` (a faster test there covers each one's property).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m slow

# Re-resolves requirements.lock from pyproject.toml's ranges (the newest versions that fit, one per
# package for every platform and Python >= 3.11); the next `make test` or `make demo` installs them.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --fork-strategy fewest \
	  --python-version 3.11 --quiet --output-file requirements.lock

# Formats the code and applies ruff's safe fixes (what `make test` checks).
format: $(STAMP)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

clean:
	rm -rf $(VENV)
