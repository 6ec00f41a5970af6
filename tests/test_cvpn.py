"""The CVPN: shapes and masks, loss identities, overfitting exact examples, data-parallel training,
and checkpoints."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.nets import checkpoint
from sog.nets import config as config_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import dataset
from sog.nets import losses
from sog.nets import train
from tests.conftest import ALL_GAMES
from tests.conftest import load

_SMALL = config_lib.NetworkConfig(width=32, depth=2)


def _random_pbs(game, rng, count=16):
  tree = game.tree
  nodes = rng.choice(np.flatnonzero(tree.kind != 3), size=count)
  return nodes, cvpn_lib.pbs_at(tree, nodes, dataset.sample_ranges(game, nodes, rng))


@pytest.mark.parametrize("name", ALL_GAMES)
def test_shapes_and_masks(name, rng):
  game = load(name)
  tree = game.tree
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(0))
  _, pbs = _random_pbs(game, rng)
  apply = jax.jit(network.apply)  # one compilation for both calls, not one per op
  prediction = apply({"params": params}, pbs)
  S, A = tree.max_infostates, tree.num_actions
  assert prediction.values.shape == (16, 2, S) and prediction.logits.shape == (16, 2, S, A)
  assert not np.asarray(prediction.values)[~np.asarray(pbs.valid)].any()
  masked = np.asarray(prediction.logits)[~np.asarray(pbs.policy_mask)]
  assert (masked <= -1e8).all()
  # Values are linear in the opponent's range mass: scaling player 1's range scales player 0's
  # values.
  scaled = apply(
    {"params": params}, pbs.replace(ranges=pbs.ranges * jnp.array([1.0, 3.0])[None, :, None])
  )
  np.testing.assert_allclose(scaled.values[:, 0], 3 * prediction.values[:, 0], rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(scaled.values[:, 1], prediction.values[:, 1], rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose((pbs.ranges * prediction.values).sum((1, 2)), 0.0, atol=1e-5)


def test_loss_is_zero_when_predictions_equal_targets(rng):
  game = load("leduc_poker")
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(1))
  _, pbs = _random_pbs(game, rng)
  prediction = network.apply({"params": params}, pbs)
  policy = jnp.where(pbs.policy_mask, jax.nn.softmax(prediction.logits), 0.0)
  targets = losses.Targets(
    values=prediction.values, policy=policy, has_policy=pbs.policy_mask.any(-1)
  )
  value_loss, policy_loss = losses.loss_terms(prediction, pbs, targets)
  assert float(value_loss) == pytest.approx(0.0, abs=1e-10)
  assert float(policy_loss) == pytest.approx(0.0, abs=1e-6)
  shifted = targets.replace(values=prediction.values + 1.0)
  assert float(losses.loss_terms(prediction, pbs, shifted)[0]) > 0.1


@pytest.fixture(scope="module")
def leduc_examples():
  return dataset.generate(load("leduc_poker"), 64, 300, np.random.default_rng(7))


@pytest.mark.xdist_group("leduc_examples")  # one worker generates the module's examples once
def test_exact_examples_are_zero_sum_solutions(leduc_examples):
  data = leduc_examples
  np.testing.assert_allclose((data["ranges"] * data["values"]).sum((1, 2)), 0.0, atol=1e-4)
  rows = data["has_policy"]
  np.testing.assert_allclose(data["policy"][rows].sum(-1), 1.0, atol=1e-5)


@pytest.mark.xdist_group("leduc_examples")
def test_small_cvpn_overfits_64_exact_leduc_examples(leduc_examples):
  game = load("leduc_poker")
  network = cvpn_lib.make_network(game.public_game, config_lib.NetworkConfig(width=128, depth=3))
  optimizer = config_lib.OptimizerConfig(
    name="adam", learning_rate=3e-3, decay_steps=1000, decay_rate=0.3, policy_weight=1.0
  )
  trainer = train.Trainer(network, optimizer)
  state = trainer.init(cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(2)))
  batch = dataset.batch(game, leduc_examples, np.arange(64))
  _, first = trainer.step(state, batch)
  for _ in range(2000):
    state, metrics = trainer.step(state, batch)
  assert float(metrics["value_loss"]) < 1e-3 * float(first["value_loss"])
  assert float(metrics["policy_loss"]) < 1e-2


_TWO_DEVICE_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    import sog.games
    from sog.nets import config, cvpn, dataset, train
    assert jax.local_device_count() == 2, jax.devices()
    game = sog.games.load("kuhn_poker")
    data = dataset.generate(game, 8, 50, np.random.default_rng(0))
    network = cvpn.make_network(game.public_game, config.NetworkConfig(width=16, depth=2))
    params = cvpn.init_params(network, game.public_game, jax.random.PRNGKey(0))
    batch = dataset.batch(game, data, np.arange(8))
    out = {}
    for devices in (jax.local_devices()[:1], jax.local_devices()):
      trainer = train.Trainer(network, config.OptimizerConfig(), devices=devices)
      state = trainer.init(params)
      for _ in range(3):
        state, metrics = trainer.step(state, batch)
      leaves = jax.tree_util.tree_leaves(jax.device_get(state.params))
      out[len(devices)] = [np.asarray(x).ravel().tolist() for x in leaves]
    json.dump(out, sys.stdout)
""")


def test_one_and_two_device_train_steps_agree():
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
  result = subprocess.run(
    [sys.executable, "-c", _TWO_DEVICE_SCRIPT],
    env=env,
    capture_output=True,
    text=True,
    check=True,
    cwd=pathlib.Path(__file__).parents[1],
  )
  out = json.loads(result.stdout)
  for one, two in zip(out["1"], out["2"], strict=True):
    np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-6)


_RESTORE_SCRIPT = textwrap.dedent("""
    import sys
    import jax, numpy as np
    import sog.games
    from sog.nets import checkpoint, cvpn, train
    directory, inputs, output = sys.argv[1:]
    meta = checkpoint.read_config(directory)
    game = sog.games.load(meta.game)
    network = cvpn.make_network(game.public_game, meta.network)
    trainer = train.Trainer(network, meta.optimizer)
    template = trainer.init(cvpn.init_params(network, game.public_game, jax.random.PRNGKey(123)))
    state, _ = checkpoint.restore(directory, template, meta)
    with np.load(inputs) as f:
      pbs = cvpn.pbs_at(game.tree, f["nodes"], f["ranges"])
    prediction = network.apply({"params": state.params}, pbs)
    np.savez(output, values=np.asarray(prediction.values), logits=np.asarray(prediction.logits),
             step=np.asarray(state.step))
""")


def test_checkpoint_round_trip_in_a_fresh_process_is_bit_identical(tmp_path, rng):
  game = load("leduc_poker")
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  trainer = train.Trainer(network, config_lib.OptimizerConfig())
  state = trainer.init(cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(3)))
  nodes, pbs = _random_pbs(game, rng)
  examples = dataset.generate(game, 8, 50, rng)
  state, _ = trainer.step(state, dataset.batch(game, examples, np.arange(8)))
  meta = checkpoint.CheckpointConfig("leduc_poker", _SMALL, config_lib.OptimizerConfig())
  checkpoint.save(tmp_path / "ckpt", state, meta)
  np.savez(tmp_path / "inputs.npz", nodes=nodes, ranges=np.asarray(pbs.ranges))
  subprocess.run(
    [
      sys.executable,
      "-c",
      _RESTORE_SCRIPT,
      str(tmp_path / "ckpt"),
      str(tmp_path / "inputs.npz"),
      str(tmp_path / "out.npz"),
    ],
    check=True,
    cwd=pathlib.Path(__file__).parents[1],
  )
  prediction = network.apply({"params": state.params}, pbs)
  with np.load(tmp_path / "out.npz") as restored:
    np.testing.assert_array_equal(restored["values"], np.asarray(prediction.values))
    np.testing.assert_array_equal(restored["logits"], np.asarray(prediction.logits))
    assert int(restored["step"]) == 1


def test_mismatched_or_corrupt_checkpoints_raise(tmp_path):
  game = load("kuhn_poker")
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  trainer = train.Trainer(network, config_lib.OptimizerConfig())
  state = trainer.init(cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(4)))
  meta = checkpoint.CheckpointConfig("kuhn_poker", _SMALL, config_lib.OptimizerConfig())
  checkpoint.save(tmp_path / "ckpt", state, meta)
  other = checkpoint.CheckpointConfig(
    "kuhn_poker", config_lib.NetworkConfig(width=64, depth=2), meta.optimizer
  )
  with pytest.raises(ValueError, match="was written for"):
    checkpoint.restore(tmp_path / "ckpt", state, other)
  bigger = cvpn_lib.make_network(game.public_game, other.network)
  wrong_template = trainer.init(
    cvpn_lib.init_params(bigger, game.public_game, jax.random.PRNGKey(4))
  )
  with pytest.raises(ValueError, match="cannot be restored"):
    checkpoint.restore(tmp_path / "ckpt", wrong_template)
  (tmp_path / "ckpt" / "config.json").write_text("{not json")
  with pytest.raises(ValueError, match="corrupt"):
    checkpoint.restore(tmp_path / "ckpt", state)
  with pytest.raises(ValueError, match="not a sog checkpoint"):
    checkpoint.restore(tmp_path / "missing", state)


def test_bad_network_and_optimizer_configs_raise():
  with pytest.raises(ValueError, match="activation must be one of"):
    config_lib.NetworkConfig(activation="swish")
  with pytest.raises(ValueError, match="width and depth"):
    config_lib.NetworkConfig(width=0)
  with pytest.raises(ValueError, match="optimizer must be one of"):
    config_lib.OptimizerConfig(name="lion")
  with pytest.raises(ValueError, match="learning_rate"):
    config_lib.OptimizerConfig(learning_rate=-1.0)


def test_cvpn_leaf_model_plugs_into_depth_limited_solves(rng):
  """The CVPN leaf model, asked about a depth-limited tree's leaves as nodes of the game's tables
  (as :class:`~sog.search.Solver` asks it), sees the same PBSs as the network on that tree's
  rows."""
  from sog.nets import leaf as leaf_lib
  from sog.search import solver as solver_lib
  from sog.search import tables as tables_lib

  game = load("leduc_poker")
  limited = solver_lib.subgame_tree(game, 0, max_depth=3)
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(5))
  leaf = leaf_lib.cvpn_leaf_model(network, params, game.name)
  leaves = np.flatnonzero(limited.is_leaf)
  ranges = rng.random((leaves.size, 2, limited.max_infostates)) * limited.valid[leaves]
  expected = network.apply({"params": params}, cvpn_lib.pbs_at(limited, leaves, ranges)).values
  values = leaf.apply(
    leaf.params,
    tables_lib.make_tables(game.tree),
    jnp.asarray(limited.game_node[leaves], jnp.int32),
    jnp.asarray(ranges, jnp.float32),
    jnp.ones(leaves.size, bool),
    (),
  ).values
  np.testing.assert_allclose(values, expected, rtol=1e-6, atol=1e-6)
  result = solver_lib.solve(limited, 20, None, "simultaneous", leaf=leaf)
  assert np.isfinite(result.root_values).all()
  np.testing.assert_allclose((game.tree.root_ranges * result.root_values).sum(), 0.0, atol=1e-5)


def test_an_ensemble_leaf_model_is_the_mean_of_its_networks(rng):
  from sog.nets import leaf as leaf_lib
  from sog.search import leaf_models
  from sog.search import tables as tables_lib

  game = load("kuhn_poker")
  tables = tables_lib.make_tables(game.tree)
  network = cvpn_lib.make_network(game.public_game, _SMALL)
  models = [
    leaf_lib.cvpn_leaf_model(
      network, cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(k)), game.name
    )
    for k in (1, 2)
  ]
  nodes = np.flatnonzero(game.tree.kind < 2)
  ranges = rng.random((nodes.size, 2, game.tree.max_infostates)) * game.tree.valid[nodes]
  args = (tables, jnp.asarray(nodes, jnp.int32), jnp.asarray(ranges, jnp.float32))
  mask = jnp.ones(nodes.size, bool)
  outs = [model.apply(model.params, *args, mask, ()) for model in models]
  ensemble = leaf_lib.ensemble_leaf_model(models)
  mean = ensemble.apply(ensemble.params, *args, mask, ((), ()))
  np.testing.assert_allclose(mean.values, (outs[0].values + outs[1].values) / 2, rtol=1e-6)
  np.testing.assert_allclose(mean.logits, (outs[0].logits + outs[1].logits) / 2, rtol=1e-6)
  same = leaf_lib.ensemble_leaf_model([models[0], models[0]])
  twice = same.apply(same.params, *args, mask, ((), ()))
  np.testing.assert_allclose(twice.values, outs[0].values, rtol=1e-6)
  with pytest.raises(ValueError, match="one game"):
    leaf_lib.ensemble_leaf_model([models[0], leaf_models.zero_leaf_model()])
  with pytest.raises(ValueError, match="at least one"):
    leaf_lib.ensemble_leaf_model([])
