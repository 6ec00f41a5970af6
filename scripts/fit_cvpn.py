"""Fits a CVPN to exact subgame solutions of a game and reports how well it predicts held-out PBSs.

  python scripts/fit_cvpn.py --game=leduc_poker --examples=20000 --steps=20000 \
      --plot=out/leduc_fit.png

Generates (or loads from --cache_dir) exact examples: random public states, ranges from random
policies' reach and Dirichlet noise, targets = root values and root average policy of a CFR+ subgame
solve. With --replay=WORKDIR it fits the replay buffer a self-play run saved instead (the query
solver's targets), which tells a network's fit (steps, seed, width) apart from the data the run
gathered:

  python scripts/fit_cvpn.py --game=leduc_poker --replay=out/leduc3 --steps=20000 \
      --decay_steps=10000 --seed=1 --checkpoint_dir=out/leduc3_refit1
Trains with progress lines, then compares held-out value MAE with the best constant predictor (per
player and infostate, the training median) and policy cross-entropy with the uniform policy's. Ends
with one JSON line.
"""

import json
import pathlib
import time

from absl import app
from absl import flags
import jax
import numpy as np

import common
from sog import monitoring
from sog import plotting
import sog.games
from sog.nets import checkpoint
from sog.nets import config as config_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import dataset
from sog.nets import train
from sog.selfplay import loop

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_EXAMPLES = flags.DEFINE_integer(
  "examples", 20000, "Exact examples (train + held out).", lower_bound=2
)
_SOLVE_ITERATIONS = flags.DEFINE_integer(
  "solve_iterations", 300, "CFR+ iterations per example.", lower_bound=1
)
_GROUP = flags.DEFINE_integer(
  "group_size", 2048, "Subgames solved together under vmap.", lower_bound=1
)
_GROUP_NODES = flags.DEFINE_integer(
  "max_group_nodes", 100_000, "Bound on group size x largest subtree (memory).", lower_bound=1
)
_HOLDOUT = flags.DEFINE_float("holdout", 0.1, "Fraction of examples held out.")
_STEPS = flags.DEFINE_integer("steps", 20000, "Train steps.", lower_bound=1)
_BATCH = flags.DEFINE_integer("batch_size", 256, "Minibatch size.", lower_bound=1)
_WIDTH = flags.DEFINE_integer("width", 256, "MLP width.")
_DEPTH = flags.DEFINE_integer("depth", 4, "MLP depth.")
_ACTIVATION = flags.DEFINE_enum("activation", "relu", config_lib.ACTIVATIONS, "Activation.")
_OPTIMIZER = flags.DEFINE_enum("optimizer", "adam", config_lib.OPTIMIZERS, "Optimizer.")
_LR = flags.DEFINE_float("learning_rate", 1e-3, "Initial learning rate alpha_0.")
_DECAY_STEPS = flags.DEFINE_integer("decay_steps", 10000, "T_decay of alpha_0 * d^(t / T_decay).")
_DECAY_RATE = flags.DEFINE_float("decay_rate", 0.3, "d of alpha_0 * d^(t / T_decay).")
_POLICY_WEIGHT = flags.DEFINE_float("policy_weight", 0.1, "w_p (w_v is 1).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the data and the network.")
_CACHE = flags.DEFINE_string("cache_dir", "out/datasets", "Where generated datasets are cached.")
_REPLAY = flags.DEFINE_string(
  "replay",
  None,
  "Fit the replay buffer of this self-play work directory "
  "(or its checkpoint/) instead of exact examples; --examples is ignored.",
)
_CHECKPOINT = flags.DEFINE_string("checkpoint_dir", None, "Save the fitted CVPN here.")
_PLOT = flags.DEFINE_string("plot", None, "Write a loss-curve PNG here.")
_LOG_EVERY = flags.DEFINE_integer("log_every", 1000, "Steps between held-out losses.")


def _replay_examples(game):
  directory = checkpoint.locate(_REPLAY.value)
  saved = checkpoint.read_config(directory)
  if sog.games.canonical_name(saved.game) != sog.games.canonical_name(game.name):
    raise ValueError(f"--replay {_REPLAY.value} holds a run of {saved.game}, not {game.name}")
  examples = loop.saved_replay(directory)
  print(f"loaded {examples.size} replay examples from {directory}")
  return {name: getattr(examples, name) for name in examples.__dataclass_fields__}, 0.0


def _examples(game):
  if _REPLAY.value:
    return _replay_examples(game)
  meta = {
    "game": game.name,
    "count": _EXAMPLES.value,
    "iterations": _SOLVE_ITERATIONS.value,
    "seed": _SEED.value,
  }
  path = pathlib.Path(_CACHE.value) / (
    f"{game.name}_{_EXAMPLES.value}_{_SOLVE_ITERATIONS.value}_{_SEED.value}.npz"
  )
  start = time.perf_counter()
  data = dataset.load(path, **meta)
  if data is None:
    data = dataset.generate(
      game,
      _EXAMPLES.value,
      _SOLVE_ITERATIONS.value,
      np.random.default_rng(_SEED.value),
      group_size=_GROUP.value,
      max_group_nodes=_GROUP_NODES.value,
      progress=common.progress_printer("examples", unit="example"),
    )
    dataset.save(path, data, **meta)
    print(f"cached {path}")
  else:
    print(f"loaded {path}")
  return data, time.perf_counter() - start


def _has_value(data, index):
  """Which entries of the examples at ``index`` carry a value target (all, for exact examples)."""
  return data["has_value"][index] if "has_value" in data else True


def _evaluate(network, params, game, data, index, constant):
  """Held-out value MAE (network, best constant) and policy cross-entropy (network, uniform)."""
  predictions = [
    network.apply({"params": params}, dataset.batch(game, data, chunk).pbs)
    for chunk in np.array_split(index, max(1, len(index) // 1024))
  ]
  values = np.concatenate([np.asarray(p.values) for p in predictions])
  logits = np.concatenate([np.asarray(p.logits) for p in predictions])
  valid = data["valid"][index] & _has_value(data, index)
  target = data["values"][index]
  mae = np.abs(values - target)[valid].mean()
  constant_mae = np.abs(constant[None] - target)[valid].mean()
  rows = data["has_policy"][index]
  policy = data["policy"][index]
  log_p = jax.nn.log_softmax(logits, axis=-1)
  mask = np.asarray(dataset.batch(game, data, index).pbs.policy_mask)
  xent = -(np.where(mask, policy * np.asarray(log_p), 0.0).sum(-1))[rows].mean()
  uniform = (
    -(policy * np.where(mask, np.log(1.0 / np.maximum(mask.sum(-1, keepdims=True), 1)), 0.0))
    .sum(-1)[rows]
    .mean()
  )
  return float(mae), float(constant_mae), float(xent), float(uniform)


def main(argv):
  del argv
  game = common.load_game(_GAME.value)
  data, generate_seconds = _examples(game)
  if "nodes" in data:  # exact examples: the valid infostates of their public states
    data = {**data, "valid": game.tree.valid[data["nodes"]]}
  rng = np.random.default_rng(_SEED.value + 1)
  count = len(data["ranges"])
  order = rng.permutation(count)
  held = max(1, int(_HOLDOUT.value * count))
  test_index, train_index = order[:held], order[held:]
  valid = data["valid"][train_index] & _has_value(data, train_index)
  seen = valid.any(0)  # (player, infostate) entries that occur in training
  constant = np.zeros(seen.shape)
  constant[seen] = np.nanmedian(
    np.where(valid, data["values"][train_index], np.nan)[:, seen], axis=0
  )

  network_config = config_lib.NetworkConfig(
    width=_WIDTH.value, depth=_DEPTH.value, activation=_ACTIVATION.value
  )
  optimizer_config = config_lib.OptimizerConfig(
    name=_OPTIMIZER.value,
    learning_rate=_LR.value,
    decay_steps=_DECAY_STEPS.value,
    decay_rate=_DECAY_RATE.value,
    policy_weight=_POLICY_WEIGHT.value,
  )
  network = cvpn_lib.make_network(game.public_game, network_config)
  trainer = train.Trainer(network, optimizer_config)
  state = trainer.init(
    cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(_SEED.value))
  )
  loss_fn = jax.jit(train.make_loss_fn(network, optimizer_config))
  test_batch = dataset.batch(game, data, test_index[:4096])
  progress, curve = monitoring.Progress("fit", _STEPS.value, unit="step"), []
  start = time.perf_counter()
  for step in range(1, _STEPS.value + 1):
    index = train_index[rng.integers(0, len(train_index), size=_BATCH.value)]
    state, metrics = trainer.step(state, dataset.batch(game, data, index))
    if step % _LOG_EVERY.value == 0 or step == _STEPS.value:
      held_loss = float(loss_fn(state.params, test_batch)[0])
      curve.append((step, float(metrics["loss"]), held_loss))
      progress.update(step, f"train loss {curve[-1][1]:.4g}, held-out loss {held_loss:.4g}")
  progress.close()
  fit_seconds = time.perf_counter() - start
  mae, constant_mae, xent, uniform_xent = _evaluate(
    network, state.params, game, data, test_index, constant
  )
  print(
    f"{game.name}: {count} examples ({held} held out), made or loaded in "
    f"{generate_seconds:.0f}s, fitted in {fit_seconds:.0f}s"
  )
  print(f"  value MAE {mae:.4g} (best constant {constant_mae:.4g}, ratio {mae / constant_mae:.3f})")
  print(f"  policy cross-entropy {xent:.4g} (uniform {uniform_xent:.4g})")
  if _CHECKPOINT.value:
    checkpoint.save(
      _CHECKPOINT.value,
      state,
      checkpoint.CheckpointConfig(game.name, network_config, optimizer_config),
    )
  if _PLOT.value:
    steps, train_loss, held_loss = zip(*curve, strict=True)
    plotting.line_plot(
      _PLOT.value,
      {"train (minibatch)": (steps, train_loss), "held out": (steps, held_loss)},
      f"{game.name}: CVPN fit to exact subgame solutions",
      "train steps",
      "loss (w_v Huber + w_p KL)",
    )
  print(
    json.dumps(
      {
        "game": game.name,
        "examples": count,
        "value_mae": mae,
        "constant_value_mae": constant_mae,
        "policy_xent": xent,
        "uniform_policy_xent": uniform_xent,
        "generate_seconds": generate_seconds,
        "fit_seconds": fit_seconds,
        "steps": _STEPS.value,
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
