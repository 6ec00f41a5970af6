"""The shipped checkpoints: each carries the search settings its results page measured it with."""

import json
import pathlib
import re
import subprocess
import sys

import sog.games
from sog.nets import checkpoint
from sog.protocol import settings as settings_lib

ROOT = pathlib.Path(__file__).resolve().parent.parent
_ROW = re.compile(r"^\| `(checkpoints/[^`]+)` \| `([^`]*)` \|$")


def _shipped() -> list[pathlib.Path]:
  return sorted(path.parent for path in (ROOT / "checkpoints").glob("**/config.json"))


def _declared() -> dict[str, list[tuple[str, str]]]:
  """{checkpoint: [(results page, its settings cell)]} from every results page's settings table."""
  rows: dict[str, list[tuple[str, str]]] = {}
  for page in sorted((ROOT / "docs" / "results").glob("*.md")):
    for line in page.read_text().splitlines():
      match = _ROW.match(line)
      if match:
        rows.setdefault(match.group(1), []).append((page.name, match.group(2)))
  return rows


def _cell(settings: settings_lib.SearchSettings) -> str:
  return ", ".join(f"{key}={value}" for key, value in settings.items())


def test_every_shipped_checkpoint_carries_the_settings_its_results_page_used():
  shipped = _shipped()
  assert len(shipped) >= 8, shipped
  declared = _declared()
  for directory in shipped:
    name = str(directory.relative_to(ROOT))
    config = checkpoint.read_config(directory)
    sog.games.registry.canonical_name(config.game)  # a ValueError for a game that is not registered
    stored = settings_lib.read(directory)
    assert stored is not None, f"{name} has no {settings_lib.FILE}"
    pages = declared.get(name, [])
    assert len(pages) == 1, f"{name} is in {len(pages)} results pages' settings tables: {pages}"
    page, cell = pages[0]
    assert cell == _cell(stored), (
      f"{name}: {page} says {cell}, its {settings_lib.FILE} holds {stored}"
    )
    expected = ("rebel",) if name.startswith("checkpoints/rebel_") else None
    if name.startswith("checkpoints/pgx/"):
      expected = ("search",)
    assert stored.sections == (expected or ("search", "resolving", "protocol")), name
  assert set(declared) <= {str(d.relative_to(ROOT)) for d in shipped}, "a table names no checkpoint"


def test_self_play_writes_its_search_settings_with_every_checkpoint(tmp_path):
  """The settings file a run writes is the actors' search and re-solving (so a fresh network is
  evaluated with the search it was trained with)."""
  from sog import selfplay
  from sog.selfplay import loop

  config = selfplay.default_config_dict("kuhn_poker")
  config.actor.prior_temperature = 2.0
  config.resolving.alpha = 0.25
  experiment = selfplay.from_config_dict(config)
  run = loop.SelfPlay(experiment)
  run.save(tmp_path / "checkpoint")
  run.save_network(tmp_path / "network")
  for directory in ("checkpoint", "network"):
    stored = settings_lib.read(tmp_path / directory)
    assert stored.search == {
      key: getattr(experiment.actor, key) for key in settings_lib.FIELDS["search"]
    }
    assert stored.search["prior_temperature"] == 2.0
    assert stored.resolving_config() == experiment.resolving
    assert stored.predecessor == "own"


def test_a_checkpoint_whose_name_has_commas_is_one_leaf_not_an_ensemble():
  """scripts/evaluate.py --leaf=checkpoints/connect_four(rows=3,columns=3,x_in_row=3): the commas of
  the game's parameters do not split the directory (only commas between directories name an
  ensemble), and its search settings are applied."""
  directory = "checkpoints/connect_four(rows=3,columns=3,x_in_row=3)"
  out = subprocess.run(
    [
      sys.executable,
      "scripts/evaluate.py",
      "--game=connect_four",
      f"--leaf={directory}",
      "--sims=2",
      "--seeds=1",
    ],
    cwd=ROOT,
    capture_output=True,
    text=True,
  )
  assert out.returncode == 0, out.stderr[-3000:]
  assert f"search settings of {directory} (search.json)" in out.stdout
  assert json.loads(out.stdout.strip().splitlines()[-1])["leaf"] == directory
