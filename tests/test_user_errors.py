"""What a user meets on bad input: one clear ``ValueError`` and nothing else. A leaf model of
another game, a truncated checkpoint, and a checkpoint's stored search settings (used, and
overridden by flags)."""

import json
import shutil
import subprocess
import sys

import pytest

from sog import search
from sog.baselines import rebel
from sog.nets import checkpoint
from sog.protocol import settings as settings_lib
from sog.search import resolving
from sog.search import types as search_types
from tests.conftest import ROOT
from tests.conftest import load


def _run(*args):
  return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)


def test_a_leaf_model_of_another_game_is_refused_by_every_searcher(kuhn_checkpoint):
  leduc = load("leduc_poker")
  kuhn_leaf = checkpoint.restore_leaf_model(kuhn_checkpoint, "kuhn_poker")
  assert kuhn_leaf.game == "kuhn_poker"
  message = "the leaf model values kuhn_poker, but the game searched is leduc_poker"
  with pytest.raises(ValueError, match=f"GTCFR: {message}"):
    search.GTCFR(leduc, kuhn_leaf, search.GTCFRConfig(simulations=4))
  with pytest.raises(ValueError, match=f"GTCFR: {message}"):
    search.SoGAgent(leduc, kuhn_leaf, search.GTCFRConfig(simulations=4))
  with pytest.raises(ValueError, match=f"ReBeL: {message}"):
    rebel.ReBeL(leduc, kuhn_leaf)
  with pytest.raises(ValueError, match=f"Solver: {message}"):
    search.Solver(search.subgame_tree(leduc, 0, max_depth=2), leaf=kuhn_leaf)
  with pytest.raises(ValueError, match=r"must be a sog\.search\.LeafModel"):
    search.GTCFR(leduc, lambda *args: None)
  # Game-independent models search any game; a model keeps its game through with_value_error.
  search.GTCFR(leduc, search.zero_leaf_model(), search.GTCFRConfig(simulations=4))
  noisy = search.leaf_models.with_value_error(kuhn_leaf, 0.1)
  assert noisy.game == "kuhn_poker"


def test_the_protocol_refuses_a_checkpoint_of_another_game(kuhn_checkpoint):
  out = _run(
    "scripts/evaluate.py",
    "--game=leduc_poker",
    f"--leaf={kuhn_checkpoint}",
    "--sims=2",
    "--seeds=1",
  )
  assert out.returncode != 0
  assert (
    f"ValueError: checkpoint {kuhn_checkpoint} was trained for kuhn_poker, not leduc_poker"
    in out.stderr
  )
  assert out.stderr.count("Traceback") == 1


def test_a_truncated_checkpoint_gives_one_error_and_no_noise(kuhn_checkpoint, tmp_path):
  """Restoring a checkpoint whose largest array file was cut short raises one ValueError; orbax's
  reads that were in flight when it failed print nothing (they used to print over a hundred lines of
  'Event loop is closed' tracebacks at exit)."""
  broken = tmp_path / "broken"
  shutil.copytree(ROOT / "checkpoints" / "leduc_poker", broken)
  largest = max(
    (path for path in (broken / "state").rglob("*") if path.is_file()),
    key=lambda path: path.stat().st_size,
  )
  largest.write_bytes(largest.read_bytes()[:1000])
  out = _run(
    "scripts/evaluate.py", "--game=leduc_poker", f"--leaf={broken}", "--sims=2", "--seeds=1"
  )
  assert out.returncode != 0
  assert f"ValueError: checkpoint {broken} cannot be restored" in out.stderr
  assert out.stderr.count("Traceback") == 1, out.stderr[-3000:]
  assert "Event loop is closed" not in out.stderr


def test_search_settings_round_trip_and_refuse_bad_values(tmp_path):
  config = search_types.GTCFRConfig(
    simulations=7, prior_temperature=float("inf"), redraws=3, tie_break="action"
  )
  stored = settings_lib.of(config, resolving.ResolvingConfig(alpha=0.25), "nearest")
  settings_lib.write(tmp_path, stored)
  assert settings_lib.read(tmp_path) == stored
  assert settings_lib.read(tmp_path).search_config(7) == config
  assert settings_lib.read(tmp_path).resolving_config() == resolving.ResolvingConfig(alpha=0.25)
  assert settings_lib.read(tmp_path).predecessor == "nearest"
  assert settings_lib.read(tmp_path / "nothing_here") is None
  with pytest.raises(ValueError, match="unknown search keys \\['simulations'\\]"):
    settings_lib.SearchSettings({"simulations": 3}, {}, {})
  with pytest.raises(ValueError, match="tie_break"):
    settings_lib.SearchSettings({"tie_break": "coin"}, {}, {})
  with pytest.raises(ValueError, match="predecessor must be one of"):
    settings_lib.SearchSettings({}, {}, {"predecessor": "eldest"})
  (tmp_path / settings_lib.FILE).write_text("{not json")
  with pytest.raises(ValueError, match="is not valid JSON"):
    settings_lib.read(tmp_path)
  (tmp_path / settings_lib.FILE).write_text('{"search": {"puct_constant": "x"}}')
  with pytest.raises(ValueError, match=r"search\.json: "):  # a value of the wrong type
    settings_lib.read(tmp_path)


def test_scripts_use_a_checkpoints_search_settings_unless_a_flag_overrides_them(
  kuhn_checkpoint, tmp_path
):
  carrying = tmp_path / "carrying"
  shutil.copytree(kuhn_checkpoint, carrying)
  settings_lib.write(
    carrying,
    settings_lib.of(search_types.GTCFRConfig(prior_temperature=float("inf"), puct_constant=2.0)),
  )
  out = _run(
    "scripts/evaluate.py",
    "--game=kuhn_poker",
    f"--leaf={carrying}",
    "--sims=2",
    "--seeds=1",
    "--prior_temperature=3",
  )
  assert out.returncode == 0, out.stderr[-3000:]
  assert (
    f"search settings of {carrying} (search.json): puct_constant=2.0; overridden by "
    "--prior_temperature"
  ) in out.stdout
  record = json.loads(out.stdout.strip().splitlines()[-1])
  assert record["puct_constant"] == 2.0 and record["prior_temperature"] == "3.0"


def test_evaluate_refuses_the_other_agents_flags():
  """--agent=rebel does not read the search's flags (nor SoG ReBeL's): named, not ignored."""
  out = _run(
    "scripts/evaluate.py", "--agent=rebel", "--game=kuhn_poker", "--sims=10", "--plot=x.png"
  )
  assert out.returncode != 0
  assert "ValueError: --agent=rebel does not read --sims, --plot" in out.stderr
  out = _run("scripts/evaluate.py", "--game=kuhn_poker", "--iterations=10")
  assert out.returncode != 0 and "--agent=sog does not read --iterations" in out.stderr


def test_rebel_takes_the_tables_oracle():
  """ReBeL's CFR-D subgames run on the subgame tables: evaluate.py --agent=rebel --leaf=oracle
  gives them the tables' exact oracle (GT-CFR's searches take the belief pool's)."""
  out = _run(
    "scripts/evaluate.py",
    "--agent=rebel",
    "--game=kuhn_poker",
    "--leaf=oracle",
    "--oracle_iterations=5",
    "--iterations=5",
    "--seeds=1",
  )
  assert out.returncode == 0, out.stderr[-3000:]
