"""Self-play with its roles on Ray (a local cluster): the trainer as a Ray actor trains as the local
learner does and restores from its snapshot; a run trains, checkpoints, is killed, resumes with its
buffers, and lowers Kuhn's exploitability below the untrained network's."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import jax
import numpy as np
import pytest
import ray

import sog.games
from sog.games import public_game
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import distributed
from sog.selfplay import learner as learner_lib
from sog.selfplay import loop
from sog.selfplay import run
from tests.conftest import ROOT


def test_ray_config_is_checked_before_anything_starts():
  config = config_lib.default_config_dict("kuhn_poker")
  config.backend = "spark"
  with pytest.raises(ValueError, match=r"backend must be one of \('local', 'ray'\)"):
    config_lib.from_config_dict(config)
  config.backend, config.ray.solver_workers = "ray", 0
  with pytest.raises(ValueError, match=r"ray\.solver_workers must be an int >= 1"):
    config_lib.from_config_dict(config)
  config.ray.solver_workers, config.ray.trainer_gpus = 1, -1.0
  with pytest.raises(ValueError, match=r"ray\.trainer_gpus must be >= 0, got -1\.0"):
    config_lib.from_config_dict(config)


def _kuhn_examples(count: int, seed: int) -> buffers.Examples:
  """Examples at Kuhn's inner nodes with random ranges and targets (the learner's arithmetic does
  not care where targets come from)."""
  tree = sog.games.load("kuhn_poker").tree
  rng = np.random.default_rng(seed)
  S, A = tree.max_infostates, tree.num_actions
  inner = np.flatnonzero(tree.kind != public_game.TERMINAL)
  nodes = rng.choice(inner, count)
  facts = buffers.PublicFacts.at(tree, nodes)
  return buffers.Examples(
    **{name: getattr(facts, name) for name in facts.__dataclass_fields__},
    ranges=rng.dirichlet(np.ones(S), (count, 2)).astype(np.float32),
    values=rng.normal(size=(count, 2, S)).astype(np.float32),
    has_value=np.ones((count, 2, S), bool),
    policy=rng.dirichlet(np.ones(A), (count, 2, S)).astype(np.float32),
    has_policy=rng.random((count, 2, S)) < 0.5,
  )


def _assert_same_params(a, b):
  for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:os.fork")  # ray.init starts its processes from this one
def test_the_trainer_as_a_ray_actor_trains_as_the_local_learner_and_restores():
  config = config_lib.default_config_dict("kuhn_poker")
  config.backend = "ray"
  config.selfplay.update(batch_size=16, min_replay=32, publish_every=4)
  experiment = config_lib.from_config_dict(config)
  game, network, params, _ = loop.initial_network(experiment)
  local = learner_lib.Learner(
    game.public_game, network, experiment.optimizer, params, experiment.selfplay
  )
  ray.init(num_cpus=2, include_dashboard=False, logging_level="warning", configure_logging=False)
  try:
    remote = distributed.RemoteLearner(experiment, params)
    rng = np.random.default_rng([experiment.seed, 3, 0])  # the trainer worker's generator
    first = _kuhn_examples(20, seed=1)
    for learner in (local, remote):
      learner.add(first)
    assert local.train(5, rng) == remote.train(5) == []  # below min_replay: no step
    more = _kuhn_examples(40, seed=2)
    for learner in (local, remote):
      learner.add(more)
    local_metrics, remote_metrics = local.train(6, rng), remote.train(6)
    assert len(local_metrics) == len(remote_metrics) == 6 and local.step == remote.step == 6
    np.testing.assert_allclose(
      [m["loss"] for m in remote_metrics], [m["loss"] for m in local_metrics], rtol=1e-6
    )
    _assert_same_params(remote.state.params, local.state.params)
    _assert_same_params(remote.published, local.published)  # taken at step 4, not 6
    with pytest.raises(AssertionError):
      _assert_same_params(remote.published, remote.state.params)
    assert remote.replay_stats() == local.replay_stats()

    # A new trainer worker loads the snapshot: same state, same window, and trains on as the local
    # learner does from the same step.
    state, arrays = remote.snapshot()
    remote.close()
    restored = distributed.RemoteLearner(experiment, params)
    restored.load(state, arrays)
    assert restored.step == 6 and restored.replay_stats() == local.replay_stats()
    _assert_same_params(restored.published, local.state.params)
    rng = np.random.default_rng([experiment.seed, 3, 6])
    np.testing.assert_allclose(
      [m["loss"] for m in restored.train(3)], [m["loss"] for m in local.train(3, rng)], rtol=1e-6
    )
    _assert_same_params(restored.state.params, local.state.params)
    restored.close()
    with pytest.raises(ValueError, match="the trainer reserves 1 GPUs, the cluster has 0"):
      distributed.connect(config_lib.RayConfig(trainer_gpus=1.0))
    with pytest.raises(ValueError, match="need 3 CPUs, the cluster has 2"):
      distributed.connect(config_lib.RayConfig(trainer_cpus=1.0))
  finally:
    ray.shutdown()


@pytest.mark.slow(
  reason="two minutes (a run killed, then resumed); a killed local run resumes with its buffers in "
  "tests/test_selfplay.py::test_a_killed_run_resumes_with_its_buffers and the Ray trainer restores "
  "as the local one in tests/test_ray.py::"
  "test_the_trainer_as_a_ray_actor_trains_as_the_local_learner_and_restores"
)
def test_a_ray_run_trains_is_killed_and_resumes_with_its_buffers(tmp_path):
  command = [
    sys.executable,
    str(ROOT / "scripts" / "train.py"),
    f"--config={ROOT}/configs/kuhn.py",
    f"--workdir={tmp_path}",
    "--config.backend=ray",
    "--config.evaluation.every_steps=0",
    "--config.checkpoint_every_seconds=2",
    "--log_every=2",
    "--config.selfplay.train_steps_per_round=4",
  ]
  # A run that would go on for long: killed (with the Ray processes it started) once it has saved a
  # checkpoint holding examples.
  process = subprocess.Popen(
    [*command, "--config.max_steps=100000"],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
    cwd=ROOT,
    start_new_session=True,
  )
  progress = tmp_path / run.CHECKPOINT / "selfplay.json"
  deadline = time.time() + 300
  while time.time() < deadline and not (
    progress.is_file() and json.loads(progress.read_text())["counters"]["examples"]
  ):
    time.sleep(1)
  os.killpg(process.pid, signal.SIGKILL)
  process.wait()
  assert loop.has_checkpoint(tmp_path / run.CHECKPOINT)
  saved = json.loads(progress.read_text())["counters"]
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:
    count = min(saved["examples"], f["replay_encoding"].shape[0])
    saved_encodings = f["replay_encoding"][:count].copy()
  assert saved["examples"] > 0 and saved["games"] > 0
  # Resumed, on to 250 train steps, evaluated at the end.
  out = subprocess.run(
    [*command, "--config.max_steps=250"], capture_output=True, text=True, cwd=ROOT, timeout=600
  )
  assert out.returncode == 0, out.stderr[-3000:]
  assert f"resumed from {tmp_path / run.CHECKPOINT}" in out.stdout
  result = json.loads(out.stdout.strip().splitlines()[-1])
  assert result["backend"] == "ray" and result["workers"] == 2 and result["steps"] == 250
  assert result["games"] > saved["games"] and result["queries_solved"] > 0
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:  # the window kept its old examples
    kept = f["replay_encoding"][: len(saved_encodings)]
    assert f["replay_added"] > saved["examples"]
  np.testing.assert_array_equal(kept, saved_encodings)
  with (tmp_path / run.EVALUATION).open() as f:
    rows = list(csv.DictReader(f))
  untrained = float(rows[0]["mean"])  # the first run's evaluation at step 0
  trained = result["exploitability"]["SoG(4,1)"]["mean"]
  assert rows[0]["step"] == "0" and trained < 0.8 * untrained, (untrained, trained)
