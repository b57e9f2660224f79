# Every target creates the virtual environment itself, so a fresh clone needs only python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint pytest bench clean sample-game

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the demo is one game: the sample game played in a loop, with its roster, and its review on the Review screen
GAME := sample_game
demo: $(GAME)/review.sqlite
	$(BIN)/tableref serve --source $(GAME)/game.avi --loop --roster $(GAME)/roster.json --table $(GAME)/table.toml \
		--camera $(GAME)/camera.json --review $(GAME)/review.sqlite

$(GAME)/game.avi: $(STAMP)
	$(BIN)/python -m synth.make_game --out $(GAME)

$(GAME)/review.sqlite: $(GAME)/game.avi
	$(BIN)/tableref review $(GAME)/game.avi --roster $(GAME)/roster.json --table $(GAME)/table.toml \
		--camera $(GAME)/camera.json --out $(GAME)/review.sqlite --quiet

# a short rendered game with its roster, camera and truth, for `tableref review` (see the README)
sample-game: $(STAMP)
	$(BIN)/python -m synth.make_game --out $(GAME)

test: lint pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# a worker per core and one more (the browser, server and command-line tests spend part of their time waiting); a
# module's tests stay on one worker, so the frames its fixtures render are rendered once
pytest: $(STAMP)
	$(BIN)/pytest -q -n $$(( $$(nproc) + 1 )) --dist loadscope

bench: $(STAMP)
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
