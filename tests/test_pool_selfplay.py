"""Self-play on a pgx game (searches from each state on the belief pool): a few rounds train, a
killed run resumes with its buffers, a trained checkpoint plays through SoG's search and mctx, and
bad configs are refused."""

import dataclasses
import json
import shutil

import jax
import numpy as np
from open_spiel.python.algorithms import evaluate_bots
import pytest

import sog.games
from sog.nets import checkpoint
from sog.nets import cvpn as cvpn_lib
from sog.openspiel import pgx_bots
from sog.protocol import settings as settings_lib
from sog.search import alphazero
from sog.search import leaf_models
from sog.search import pool
from sog.search import types
from sog.selfplay import pool_config
from sog.selfplay import pool_selfplay
from tests.conftest import ROOT


def _config(**overrides):
  config = pool_config.default_config_dict("pgx/tic_tac_toe", simulations=10)
  config.network.update(width=16, depth=1)
  config.update(
    **{
      **dict(
        games=4,
        solver_batch=4,
        batch_size=8,
        min_replay=8,
        replay_capacity=64,
        query_capacity=32,
        train_steps_per_round=1,
        max_steps=3,
      ),
      **overrides,
    }
  )
  return config


def test_rounds_train_and_a_killed_run_resumes(tmp_path):
  experiment = pool_config.from_config_dict(_config())
  summary = pool_selfplay.train(experiment, tmp_path)
  assert summary["steps"] == 3 and np.isfinite(summary["loss"])
  assert summary["moves"] == 4 * summary["rounds"]
  assert summary["examples"] == summary["moves"] + summary["queries_solved"]
  first = pool_selfplay.PoolSelfPlay(experiment, tmp_path)  # resumed from what train() saved
  assert first.steps == 3 and first.counters == {k: summary[k] for k in pool_selfplay.COUNTERS}
  assert first.replay.size == min(64, summary["examples"])
  more = pool_selfplay.train(pool_config.from_config_dict(_config(max_steps=5)), tmp_path)
  assert more["steps"] == 5 and more["rounds"] > summary["rounds"]
  stored = settings_lib.read(tmp_path / "checkpoint")  # the search it was trained with
  assert stored.sections == ("search",) and stored.search_config(10) == experiment.search
  model = checkpoint.restore_leaf_model(tmp_path, "pgx/tic_tac_toe")
  game = sog.games.load("pgx/tic_tac_toe")
  result = pool.BeliefGTCFR(game, model, stored.search_config(10)).search(jax.random.PRNGKey(0))
  assert np.isclose(float(result.focus_policy[0].sum()), 1.0)
  roots = jax.tree.map(lambda x: x[None], game.public_game.root())
  weights = alphazero.AlphaZero(game, model, 10).search(jax.random.PRNGKey(0), roots).action_weights
  assert np.isclose(float(weights.sum()), 1.0)
  with pytest.raises(ValueError, match="trained for pgx/tic_tac_toe, not pgx/connect_four"):
    checkpoint.restore_leaf_model(tmp_path, "pgx/connect_four")


def test_a_pgx_network_values_states_zero_sum_and_without_their_reach():
  """The CVPN of a perfect-information game (S = 1) as pgx self-play makes it gives zero-sum values
  per unit of the opponent's reach, and reads a range only by its mass: a state is valued the same
  at any reach, 0 included (the values then scaled by the opponent's reach); read as zeros, a zero
  reach changes the input."""
  game = sog.games.load("pgx/connect_four").public_game
  config = pool_config.from_config_dict(_config(game=game.name)).network
  assert config.unreached_range == "uniform"  # pgx self-play's default
  network = cvpn_lib.make_network(game, config)
  params = cvpn_lib.init_params(network, game, jax.random.PRNGKey(1))
  facts = alphazero.state_facts(game, jax.tree.map(lambda x: x[None], game.root()))
  reaches = np.array([[1.0, 1.0], [0.3, 0.02], [0.0, 1.0], [1.0, 0.0]])[..., None]
  encoding = np.repeat(np.asarray(facts.encoding), 4, 0)
  pbs = cvpn_lib.pbs_of(encoding, np.zeros(4), np.ones((4, 2, 1)), np.ones((4, 1, 7)), reaches)
  out = network.apply({"params": params}, pbs)
  assert out.values.shape == (4, 2, 1) and out.logits.shape == (4, 2, 1, 7)
  np.testing.assert_allclose(out.normalized_values, out.normalized_values[:1].repeat(4, 0))
  np.testing.assert_allclose(out.logits, out.logits[:1].repeat(4, 0))
  np.testing.assert_allclose(out.normalized_values.sum((-2, -1)), 0.0, atol=1e-6)
  opponent_reach = reaches[:, ::-1, 0]
  np.testing.assert_allclose(out.values[..., 0], out.normalized_values[..., 0] * opponent_reach)
  zeros = cvpn_lib.CVPN(1, 7, dataclasses.replace(config, unreached_range="zeros"))
  read_as_zeros = zeros.apply({"params": params}, pbs)  # the same weights, zero reach as zeros
  np.testing.assert_allclose(read_as_zeros.logits[:2], out.logits[:2])
  assert not np.allclose(read_as_zeros.logits[2:], out.logits[2:])


def test_a_pgx_checkpoint_written_before_the_option_reads_zero_reach_as_uniform(tmp_path):
  """A pgx checkpoint whose config.json predates ``unreached_range`` (pgx self-play trained on
  states alone) restores with "uniform"; another game's keeps "zeros", the networks' rule before
  it."""
  old = tmp_path / "tic_tac_toe"
  shutil.copytree(ROOT / "checkpoints" / "pgx" / "tic_tac_toe", old)
  written = json.loads((old / "config.json").read_text())
  del written["network"]["unreached_range"]
  (old / "config.json").write_text(json.dumps(written))
  assert checkpoint.read_config(old).network.unreached_range == "uniform"
  assert checkpoint.restore_leaf_model(old, "pgx/tic_tac_toe").game == "pgx/tic_tac_toe"
  other = json.loads((ROOT / "checkpoints" / "leduc_poker" / "config.json").read_text())
  assert "unreached_range" not in other["network"]
  assert checkpoint.read_config(ROOT / "checkpoints" / "leduc_poker").network.unreached_range == (
    "zeros"
  )


def test_a_search_hands_on_each_sampled_state_once():
  """Self-play hands on a search's sampled queries (drawn among frontier node and pass pairs) once
  per state: every kept row is a valid query, and no search keeps a state twice."""
  game = sog.games.load("pgx/connect_four")
  config = types.GTCFRConfig(simulations=30, query_samples=16)
  searcher = pool.BeliefGTCFR(game, leaf_models.zero_leaf_model(), config)
  rules = game.public_game
  states = jax.tree.map(lambda x: np.stack([x, x]), rules.root())
  result = searcher.search_state_batch(jax.random.split(jax.random.PRNGKey(0), 2), states)
  leaves, keep = pool_selfplay._query_states(result)
  nodes, keep = np.asarray(result.queries.nodes), keep.reshape(2, 16)
  assert np.isfinite(np.asarray(result.queries.keys)).all()
  for b in range(2):
    kept = nodes[b][keep[b]]
    assert sorted(kept) == sorted(set(nodes[b]))  # each sampled state once
  assert keep.sum() < nodes.size  # the sample drew some state more than once
  tree_leaves = jax.tree.leaves(result.tree.states)
  for leaf, tree_leaf in zip(leaves, tree_leaves, strict=True):  # the rows are those states
    rows = np.asarray(tree_leaf)[np.arange(2)[:, None], nodes].reshape(leaf.shape)
    np.testing.assert_array_equal(leaf, rows)


@pytest.mark.parametrize(
  "change,problem",
  [
    ({"game": "connect_four"}, "pgx game"),
    ({"game": "pgx/backgammon"}, "chance"),
    ({"games": 0}, "games must be an int >= 1"),
    ({"eps": 2.0}, "eps must be in"),
    ({"min_replay": 4}, "batch_size <= min_replay"),
  ],
)
def test_bad_configs_are_refused(change, problem):
  config = _config()
  config.update(**change)
  with pytest.raises(ValueError, match=problem):
    pool_config.from_config_dict(config)


def test_unknown_fields_are_refused():
  config = _config()
  config.unknown_field = 1
  with pytest.raises(ValueError, match="unknown fields"):
    pool_config.from_config_dict(config)
  config = _config()
  config.search.unknown_field = 1
  with pytest.raises(ValueError, match="unknown search fields"):
    pool_config.from_config_dict(config)


def test_a_workdir_without_buffers_is_refused(tmp_path):
  experiment = pool_config.from_config_dict(_config(max_steps=1))
  pool_selfplay.train(experiment, tmp_path)
  (tmp_path / "selfplay.npz").unlink()
  with pytest.raises(ValueError, match=r"not selfplay\.npz"):
    pool_selfplay.PoolSelfPlay(experiment, tmp_path)


def test_the_shipped_tic_tac_toe_network_draws_against_perfect_play():
  """checkpoints/pgx/tic_tac_toe with SoG(100,1) and its search settings, playing its
  most probable action (the bot's default), against minimax from both seats (docs/results/pool.md:
  40 of 40 games drawn)."""
  game = sog.games.load("pgx/tic_tac_toe")
  model = checkpoint.restore_leaf_model(ROOT / "checkpoints" / "pgx" / "tic_tac_toe", game.name)
  stored = settings_lib.read(ROOT / "checkpoints" / "pgx" / "tic_tac_toe")
  searcher = pool.BeliefGTCFR(game, model, stored.search_config(100))
  os_game = pgx_bots.openspiel_game(game)
  for seat in (0, 1):
    bots = [None, None]
    bots[seat] = pgx_bots.SoGBot(searcher, seat, seed=seat)
    bots[1 - seat] = pgx_bots.MinimaxBot(os_game, 1 - seat, seed=seat)
    returns = evaluate_bots.evaluate_bots(
      os_game.new_initial_state(), bots, np.random.RandomState(seat)
    )
    assert returns[seat] == 0.0
