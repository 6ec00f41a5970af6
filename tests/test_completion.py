"""A pool search's policy completed below its frontier (``sog.search.pool.completion``): SoG's
Theorem 1 with an exact oracle (the completed policy's exploitability falls with s to CFR+'s level),
and the completion is the search's own policy once its tree is the whole game."""

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.eval import best_response
from sog.games import public_game
from sog.search import gadget as gadget_lib
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_oracle
from sog.search.pool import belief_paths
from sog.search.pool import belief_state
from sog.search.pool import beliefs
from sog.search.pool import completion
from tests.conftest import ROOT
from tests.conftest import load


def _start(game, path: tuple[int, ...], ranges: np.ndarray) -> belief_state.BeliefStart:
  """A plain search's start at the public state ``path`` reaches, at ``ranges`` [2, S]."""
  state, weight = belief_paths.along(game.public_game, np.asarray(path, np.int32))
  return belief_state.BeliefStart(
    state=state,
    weight=weight,
    branch=np.zeros(0, np.int32),
    ranges=jnp.asarray(ranges, jnp.float32),
    gadget=gadget_lib.disabled(game.public_game.max_infostates, jnp.float32),
  )


@pytest.mark.slow(
  reason="three Leduc oracle programs up to s = 1000; the completed policy's exploitability is "
  "checked against the game's in tests/test_completion.py::"
  "test_once_the_tree_is_the_whole_game_the_completion_is_the_search_policy and its fall with s by "
  "tests/test_completion.py::test_the_soundness_script_ends_with_its_json_line"
)
def test_an_exact_oracle_search_is_sound_in_a_leduc_subgame(rng):
  """Theorem 1 on a subgame with a chance node (Leduc after check, check: the board card next), at
  random ranges: with the exact oracle (warm-started, 2 CFR+ iterations a call) the completed
  policy's exploitability in the subgame falls over s = 10, 100, 1000, to CFR+'s level once the
  tree holds the whole subgame (the mean of two searches each)."""
  game = load("leduc_poker")
  path = (1, 1)
  subtree = game.tree.subtree(game.tree.node_of_path(path))
  valid = subtree.valid[0]
  ranges = subtree.root_ranges * rng.uniform(0.3, 1.0, subtree.root_ranges.shape) * valid
  start = _start(game, path, ranges)
  starts = jax.tree.map(lambda x: np.stack([np.asarray(x)] * 2), start)
  rngs = jax.random.split(jax.random.PRNGKey(7), 2)
  oracle = belief_oracle.exact_leaf_model(game, 2, warm_start=True)
  curve = []
  for simulations in (10, 100, 1000):
    searcher = GTCFR(game, oracle, types.GTCFRConfig(simulations=simulations))
    results = jax.device_get(searcher.search_from_batch(rngs, starts))
    curve.append(
      np.mean(
        [
          completion.exploitability(
            subtree, jax.tree.map(lambda x, i=i: x[i], results), 400, ranges
          )
          for i in range(2)
        ]
      )
    )
  assert curve[0] > curve[1] > curve[2], curve
  assert curve[2] < 5e-3, curve


def test_once_the_tree_is_the_whole_game_the_completion_is_the_search_policy():
  """Kuhn's tree is whole after a few simulations: the completed policy is then the search's own
  average policy at every expanded decision (nothing is left below a frontier), and its
  exploitability is the game's for that policy; bad arguments are refused."""
  game = load("kuhn_poker")
  oracle = belief_oracle.exact_leaf_model(game, 50)
  searcher = GTCFR(game, oracle, types.GTCFRConfig(simulations=30))
  result = jax.device_get(searcher.search(jax.random.PRNGKey(0)))
  n = int(result.tree.num_nodes)
  assert bool(result.complete) and n == game.tree.num_nodes
  policy = completion.completed_policy(game.tree, result, 200)
  nodes = beliefs.tree_nodes(result.tree, game.tree)
  decisions = np.flatnonzero(np.asarray(result.tree.kind[:n]) < public_game.CHANCE)
  assert np.asarray(result.tree.expanded[:n])[decisions].all()
  own = np.asarray(result.average_policy, np.float64)[decisions]
  legal = game.tree.legal[nodes[decisions]]
  acted = own.sum(-1) > 0
  np.testing.assert_allclose(
    policy[nodes[decisions]][acted], (own / own.sum(-1, keepdims=True).clip(1e-300))[acted]
  )
  assert (policy[nodes[decisions]][~legal] == 0).all()
  assert completion.exploitability(game.tree, result, 200) == pytest.approx(
    best_response.exploitability(game, policy), abs=1e-15
  )
  with pytest.raises(ValueError, match="iterations must be >= 1"):
    completion.completed_policy(game.tree, result, 0)
  batch = jax.tree.map(lambda x: np.stack([x, x]), result)  # a batch's result, two rows
  with pytest.raises(ValueError, match="completes one search"):
    completion.completed_policy(game.tree, batch)


def test_the_soundness_script_ends_with_its_json_line():
  """scripts/gtcfr_soundness.py: the completed policy's exploitability per s, one JSON line."""
  out = subprocess.run(
    [
      sys.executable,
      "scripts/gtcfr_soundness.py",
      "--game=kuhn_poker",
      "--sims=2",
      "--seeds=1",
      "--oracle_iterations=5",
      "--eval_iterations=20",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
  )
  assert out.returncode == 0, out.stderr[-3000:]
  line = json.loads(out.stdout.splitlines()[-1])
  [row] = line["results"]
  assert row["sims"] == 2 and 0 < row["resolve"]["mean"] < 0.5
