"""Self-play on a pgx game, on SoG's one self-play stack: the actors' and the solver's searches
start at their states and their queries are states; a few rounds train, a killed run resumes, a
trained checkpoint plays through SoG's search and mctx, and configs that ask for what a game that is
not enumerated cannot give are refused."""

import dataclasses
import json
import runpy
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
from sog.search.pool import belief_paths
from sog.selfplay import actor as actor_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import loop
from sog.selfplay import run
from tests.conftest import ROOT


def _config(**selfplay):
  """configs/pgx_tic_tac_toe.py at a test's scale."""
  config = runpy.run_path(str(ROOT / "configs" / "pgx_tic_tac_toe.py"))["get_config"]()
  for role in (config.actor, config.solver):
    role.simulations = 10
  config.network.update(width=16, depth=1)
  config.selfplay.update(
    **{
      **dict(
        games=4,
        solver_batch=4,
        search_chunk=4,
        batch_size=8,
        min_replay=8,
        replay_capacity=64,
        query_capacity=32,
        train_steps_per_round=1,
        publish_every=1,
      ),
      **selfplay,
    }
  )
  config.max_steps, config.max_seconds = 3, 0.0
  return config


def test_rounds_train_and_a_killed_run_resumes(tmp_path):
  config = _config()
  summary = run.train(config_lib.from_config_dict(config), tmp_path, log=lambda _: None)
  assert summary["steps"] == 3 and summary["queries_solved"] > 0
  assert (tmp_path / "losses.png").is_file()  # the run's losses by train step
  saved = json.loads((tmp_path / "checkpoint" / "selfplay.json").read_text())["counters"]
  config.max_steps = 5
  more = run.train(config_lib.from_config_dict(config), tmp_path, log=lambda _: None)
  assert more["steps"] == 5 and more["games"] >= saved["games"]
  experiment = config_lib.from_config_dict(config)
  stored = settings_lib.read(tmp_path / "checkpoint")  # the search it was trained with
  assert stored.sections == ("search",) and stored.search_config(10) == experiment.actor
  model = checkpoint.restore_leaf_model(tmp_path / "checkpoint", "pgx/tic_tac_toe")
  game = sog.games.load("pgx/tic_tac_toe")
  result = pool.GTCFR(game, model, stored.search_config(10)).search(jax.random.PRNGKey(0))
  assert np.isclose(float(result.focus_policy[0].sum()), 1.0)
  roots = jax.tree.map(lambda x: x[None], game.public_game.root())
  weights = alphazero.AlphaZero(game, model, 10).search(jax.random.PRNGKey(0), roots).action_weights
  assert np.isclose(float(weights.sum()), 1.0)
  with pytest.raises(ValueError, match="trained for pgx/tic_tac_toe, not pgx/connect_four"):
    checkpoint.restore_leaf_model(tmp_path / "checkpoint", "pgx/connect_four")


def test_the_actors_search_from_their_states_and_value_them_by_their_searches():
  """Each actor game's first search is the plain search from the game's root with that game's key
  (``search_state``, nothing re-solved) and its queries are states (ranges 1). With
  ``actor_value_targets`` a move's example carries that search's root values, which TD(1), drawn
  with p_td1 = 1, replaces with the game's outcome; without, only TD(1) gives values."""
  experiment = config_lib.from_config_dict(_config(games=2, search_chunk=2, eps=0.0))
  game, _, params, leaf = loop.initial_network(experiment)
  pools = actor_lib.pools_for(game, leaf, experiment.actor)
  assert pools.searcher.branch_depth == 0
  key, rules = jax.random.PRNGKey(3), game.public_game
  roots = jax.tree.map(lambda x: np.stack([x, x]), rules.root())
  rngs = actor_lib._per_game(jax.random.split(key, 3)[0], 2)
  expected = jax.device_get(pools.searcher.search_state_batch(rngs, roots, params))
  actors = actor_lib.Actors(game, pools, experiment.selfplay, chunk=2)
  actors.restart(jax.random.PRNGKey(0))
  _, queries, _ = actors.play(params, key, np.random.default_rng(0))
  assert queries.size > 0
  np.testing.assert_array_equal(queries.ranges, 1.0)
  for g in range(2):
    move = actors.games[g].line[0]
    np.testing.assert_allclose(move["policy"], expected.focus_policy[g], atol=1e-6)
    np.testing.assert_allclose(move["values"], expected.focus_values[g], atol=1e-6)
  outcome, move = np.array([1.0, -1.0]), actors.games[0].line[0]
  for values_too, p_td1, targets in (
    (True, 0.0, expected.focus_values[0][:, 0]),
    (True, 1.0, outcome),
    (False, 1.0, outcome),
    (False, 0.0, None),
  ):
    actors.config = dataclasses.replace(experiment.selfplay, p_td1=p_td1)
    line = [dict(move, values=move["values"] if values_too else None)]
    examples = actors._line_examples(line, outcome, np.random.default_rng(0))
    assert examples.has_value.all() == (targets is not None)
    assert examples.has_value.any() == (targets is not None)
    if targets is not None:
      np.testing.assert_allclose(examples.values[0, :, 0], targets, atol=1e-6)


def test_a_search_asks_each_sampled_state_once_at_ranges_one():
  """A perfect-information search's sampled queries (drawn among frontier node and pass pairs) are
  asked once per state, at ranges 1, and their paths lead to those states."""
  game = sog.games.load("pgx/connect_four")
  config = types.GTCFRConfig(simulations=30, query_samples=16)
  searcher = pool.GTCFR(game, leaf_models.zero_leaf_model(), config)
  rules = game.public_game
  states = jax.tree.map(lambda x: np.stack([x, x]), rules.root())
  result = jax.device_get(
    searcher.search_state_batch(jax.random.split(jax.random.PRNGKey(0), 2), states)
  )
  nodes = np.asarray(result.queries.nodes)
  assert np.isfinite(np.asarray(result.queries.keys)).all()
  repeated = 0
  for b in range(2):
    _, (paths, ranges, keys) = buffers.searched(result, b, np.full(42, -1), 42, as_states=True)
    kept = np.isfinite(keys)
    assert sorted(nodes[b][kept]) == sorted(set(nodes[b]))  # each sampled state once
    repeated += (~kept).sum()
    np.testing.assert_array_equal(ranges, 1.0)
    _, (_, as_sampled, same_keys) = buffers.searched(result, b, np.full(42, -1), 42)
    np.testing.assert_array_equal(same_keys, result.queries.keys[b])  # without: as drawn
    assert (as_sampled < 1).any()
    for path, node in zip(paths[kept], nodes[b][kept], strict=True):
      state, _ = belief_paths.along(rules, path)
      for leaf, tree_leaf in zip(
        jax.tree.leaves(state), jax.tree.leaves(result.tree.states), strict=True
      ):
        np.testing.assert_array_equal(np.asarray(leaf), np.asarray(tree_leaf)[b, node])
  assert repeated  # the sample drew some state more than once


def test_a_pgx_network_values_states_zero_sum_and_without_their_reach():
  """The CVPN of a perfect-information game (S = 1) as configs/pgx_*.py make it gives zero-sum
  values per unit of the opponent's reach, and reads a range only by its mass: a state is valued
  the same at any reach, 0 included (the values then scaled by the opponent's reach); read as
  zeros, a zero reach changes the input."""
  game = sog.games.load("pgx/connect_four").public_game
  config = config_lib.from_config_dict(_config()).network
  assert config.unreached_range == "uniform"  # configs/pgx_*.py's
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


@pytest.mark.parametrize(
  "change,problem",
  [
    ({"game": "pgx/backgammon"}, "chance"),
    ({"evaluation": {"settings": ((10, 1.0),)}}, r"not enumerable: set evaluation\.settings"),
    ({"selfplay": {"random_queries": 2}}, r"selfplay\.random_queries = 0"),
    ({"selfplay": {"actor_value_targets": "yes"}}, "actor_value_targets must be True or False"),
  ],
)
def test_bad_configs_are_refused(change, problem):
  config = _config().to_dict()
  for name, value in change.items():
    config[name] = {**config[name], **value} if isinstance(value, dict) else value
  with pytest.raises(ValueError, match=problem):
    loop.SelfPlay(config_lib.from_config_dict(config))


def test_the_shipped_tic_tac_toe_network_draws_against_perfect_play():
  """checkpoints/pgx/tic_tac_toe with SoG(100,1) and its search settings, playing its
  most probable action (the bot's default), against minimax from both seats (docs/results/pool.md:
  40 of 40 games drawn)."""
  game = sog.games.load("pgx/tic_tac_toe")
  model = checkpoint.restore_leaf_model(ROOT / "checkpoints" / "pgx" / "tic_tac_toe", game.name)
  stored = settings_lib.read(ROOT / "checkpoints" / "pgx" / "tic_tac_toe")
  searcher = pool.GTCFR(game, model, stored.search_config(100))
  os_game = pgx_bots.openspiel_game(game)
  for seat in (0, 1):
    bots = [None, None]
    bots[seat] = pgx_bots.SoGBot(searcher, seat, seed=seat)
    bots[1 - seat] = pgx_bots.MinimaxBot(os_game, 1 - seat, seed=seat)
    returns = evaluate_bots.evaluate_bots(
      os_game.new_initial_state(), bots, np.random.RandomState(seat)
    )
    assert returns[seat] == 0.0
