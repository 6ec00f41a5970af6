"""Sound self-play: buffers, actors, query solver, configs, training end to end, kill and resume."""

import csv
import dataclasses
import json
import runpy
import signal
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog import monitoring
from sog.baselines.rebel import selfplay as rebel_selfplay
import sog.games
from sog.nets import checkpoint as checkpoint_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import dataset
from sog.search import resolving
from sog.search import tables as tables_lib
from sog.search import types as search_types
from sog.selfplay import actor as actor_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import learner as learner_lib
from sog.selfplay import loop
from sog.selfplay import query_solver
from sog.selfplay import run
from tests.conftest import ROOT


def _examples(ids, S=3, A=2):
  """Examples told apart by their encoding (one number: ``ids``) at a player 0 decision of Kuhn's
  shape."""
  count = len(ids)
  return buffers.Examples(
    encoding=np.asarray(ids, np.float32)[:, None],
    kind=np.zeros(count, np.int32),
    valid=np.ones((count, 2, S), bool),
    legal=np.ones((count, S, A), bool),
    ranges=np.ones((count, 2, S), np.float32),
    values=np.arange(count * 2 * S, dtype=np.float32).reshape(count, 2, S),
    has_value=np.ones((count, 2, S), bool),
    policy=np.full((count, 2, S, A), 0.5, np.float32),
    has_policy=np.zeros((count, 2, S), bool),
  )


def _ids(rows) -> list[int]:
  return rows.encoding[:, 0].astype(int).tolist()


def _queries(ids, S=3, L=2):
  """Queries told apart by the first slot of their paths (``ids``)."""
  paths = np.full((len(ids), L), -1, np.int32)
  paths[:, 0] = ids
  return buffers.Queries(
    paths=paths,
    ranges=np.broadcast_to(np.asarray(ids, np.float32)[:, None, None], (len(ids), 2, S)).copy(),
  )


def test_replay_buffer_window_update_limit_sampling_and_restore():
  replay = buffers.ReplayBuffer(
    capacity=5, num_infostates=3, num_actions=2, encoding_size=1, max_updates=3
  )
  replay.add(_examples([0, 1, 2]))
  replay.add(_examples([3, 4, 5, 6]))  # two past capacity: 0 and 1 leave the window
  assert len(replay) == 5 and replay.added == 7
  assert sorted(_ids(replay.rows)) == [2, 3, 4, 5, 6]
  rng = np.random.default_rng(0)
  draws = []
  while (batch := replay.sample(2, rng)) is not None:
    assert len(set(_ids(batch))) == 2  # without replacement within a batch
    draws += _ids(batch)
  counts = np.bincount(draws, minlength=7)
  assert counts[:2].sum() == 0 and (counts[2:] <= 3).all()  # update limit, only the window
  assert counts.sum() == 14 and replay.available() == 1  # stops when a batch cannot be filled
  replay.add(_examples([7]))  # a new example starts unused and replaces the oldest (2)
  assert replay.available() == 2 and 2 not in _ids(replay.rows)
  restored = buffers.ReplayBuffer(
    capacity=5, num_infostates=3, num_actions=2, encoding_size=1, max_updates=3
  )
  restored.load(replay.state())
  for name, value in replay.state().items():
    np.testing.assert_array_equal(restored.state()[name], value)
  other = buffers.ReplayBuffer(
    capacity=6, num_infostates=3, num_actions=2, encoding_size=1, max_updates=3
  )
  with pytest.raises(ValueError, match="another game or capacity"):
    other.load(replay.state())
  with pytest.raises(ValueError, match=r"valid rows must have shape \(2, 3\), got \(2, 4\)"):
    replay.add(_examples([1], S=4))


def test_saved_replay_reads_the_window_back_and_batches_as_the_learner_does(tmp_path):
  """``loop.saved_replay`` returns the saved window (wrapped or not); ``dataset.batch`` on it, with
  its ``has_value`` marks, is the learner's own batch of the same examples
  (``fit_cvpn --replay``)."""
  game = sog.games.load("kuhn_poker")
  for added, window in (([0, 1, 2], [0, 1, 2]), ([0, 1, 2, 3, 4, 5, 6], [2, 3, 4, 5, 6])):
    replay = buffers.ReplayBuffer(
      capacity=5, num_infostates=3, num_actions=2, encoding_size=1, max_updates=3
    )
    examples = _examples(added)
    has_value = np.random.default_rng(0).random(examples.has_value.shape) < 0.5
    replay.add(examples.replace(has_value=has_value))
    (tmp_path / "checkpoint").mkdir(exist_ok=True)
    np.savez(tmp_path / "checkpoint" / "selfplay.npz", **replay.state())  # as SelfPlay.save writes
    saved = loop.saved_replay(tmp_path)
    assert sorted(_ids(saved)) == window
    for name in saved.__dataclass_fields__:
      np.testing.assert_array_equal(getattr(saved, name), getattr(replay.rows, name)[: len(window)])
    data = {name: getattr(saved, name) for name in saved.__dataclass_fields__}
    index = np.arange(len(window))[::-1]
    ours = dataset.batch(game, data, index)
    learners = learner_lib.to_batch(jax.tree_util.tree_map(lambda x, index=index: x[index], saved))
    jax.tree_util.tree_map(np.testing.assert_array_equal, ours, learners)
  with pytest.raises(ValueError, match="no self-play buffers"):
    loop.saved_replay(tmp_path / "elsewhere")


def test_query_buffer_is_first_in_first_out_and_drops_the_oldest():
  queue = buffers.QueryBuffer(capacity=4, num_infostates=3, path_length=2)
  queue.push(_queries([0, 1, 2]))
  assert queue.pop(2).paths[:, 0].tolist() == [0, 1]
  queue.push(_queries([3, 4, 5, 6]))  # 5 waiting rows in 4 slots: 2 is dropped
  assert len(queue) == 4
  saved = buffers.QueryBuffer(capacity=4, num_infostates=3, path_length=2)
  saved.load(queue.state())
  for q in (queue, saved):
    popped = q.pop(10)
    assert popped.paths[:, 0].tolist() == [3, 4, 5, 6]
    np.testing.assert_array_equal(popped.ranges[:, 0, 0], [3, 4, 5, 6])
    assert len(q) == 0 and q.pop(3).size == 0


def test_search_examples_put_targets_on_the_actors_rows():
  tree = sog.games.load("leduc_poker").tree
  nodes = np.array([0, 1, int(np.flatnonzero(tree.kind == 2)[0])])  # P0, P1, chance
  S, A = tree.max_infostates, tree.num_actions
  policy = np.random.default_rng(1).dirichlet(np.ones(A), size=(3, S))
  values = np.ones((3, 2, S))
  facts = buffers.PublicFacts.at(tree, nodes)
  ex = buffers.search_examples(facts, np.ones((3, 2, S)), policy, values)
  assert ex.has_policy[0, 0].any() and not ex.has_policy[0, 1].any()
  assert ex.has_policy[1, 1].any() and not ex.has_policy[1, 0].any()
  assert not ex.has_policy[2].any() and not ex.policy[2].any()
  np.testing.assert_allclose(ex.policy[0, 0][ex.has_policy[0, 0]], policy[0][ex.has_policy[0, 0]])
  np.testing.assert_array_equal(ex.has_value, tree.valid[nodes])
  assert not buffers.search_examples(facts, np.ones((3, 2, S)), policy).has_value.any()
  # the network's input is the one of the tree's nodes
  jax.tree_util.tree_map(
    np.testing.assert_array_equal, ex.pbs(), cvpn_lib.pbs_at(tree, nodes, ex.ranges)
  )


def _kuhn_experiment(**selfplay) -> config_lib.Experiment:
  config = runpy.run_path(str(ROOT / "configs" / "kuhn.py"))["get_config"]()
  config.selfplay.update(selfplay)
  return config_lib.from_config_dict(config)


def test_actors_play_whole_games_and_emit_td1_targets():
  experiment = _kuhn_experiment(p_td1=1.0, eps=0.5, q_search=1.0)
  run_ = loop.SelfPlay(experiment)
  tree = run_.game.tree
  rng = np.random.default_rng(0)
  finished, produced = 0, []
  for i in range(6):
    examples, queries, ended = run_.actors.play(run_.learner.published, jax.random.PRNGKey(i), rng)
    finished += ended
    if examples is not None:
      produced.append(examples)
    asked = tree.nodes_of_padded_paths(queries.paths)
    assert queries.size > 0 and (tree.kind[asked] != 3).all()  # q_search = 1: all valid
  assert finished >= 4
  ex = buffers.concatenate(produced)
  assert (ex.kind < 2).all()  # every search was at a decision
  rows = ex.policy.sum(-1)
  np.testing.assert_allclose(rows[ex.has_policy], 1.0, atol=1e-5)
  # TD(1) with p_td1 = 1: exactly one infostate per player carries the outcome, in units of the
  # opponent's range mass, and Kuhn's outcomes are +-1 or +-2 and zero-sum.
  assert (ex.has_value.sum(-1) == 1).all()
  mass = ex.ranges.sum(-1)[:, ::-1]
  outcome = ex.values.sum(-1) / mass
  np.testing.assert_allclose(outcome[:, 0], -outcome[:, 1], atol=1e-5)
  assert set(np.round(np.abs(outcome[:, 0]), 4).tolist()) <= {1.0, 2.0}
  # q_first: the first searches of new games (every search of the first round) hand on by it alone.
  actors = run_.actors
  for q_first, q_search, handed in ((0.0, 1.0, False), (1.0, 0.0, True)):
    actors.config = dataclasses.replace(actors.config, q_first=q_first, q_search=q_search)
    actors.restart(jax.random.PRNGKey(7))
    _, queries, _ = actors.play(run_.learner.published, jax.random.PRNGKey(8), rng)
    assert (queries.size > 0) == handed


def test_evaluation_seeds_start_at_first_seed_and_keep_best_needs_a_setting():
  assert config_lib.EvaluationConfig(seeds=2, first_seed=5).seed_range == range(5, 7)
  with pytest.raises(ValueError, match="keep_best"):
    config_lib.EvaluationConfig(settings=(), keep_best=True)
  with pytest.raises(ValueError, match="first_seed"):
    config_lib.EvaluationConfig(first_seed=-1)


def test_config_files_load_and_bad_values_are_named():
  for path in sorted((ROOT / "configs").glob("*.py")):
    config = runpy.run_path(str(path))["get_config"]()
    if "rebel" in config:  # ReBeL's self-play (sog.baselines.rebel)
      experiment = rebel_selfplay.from_config_dict(config).base
    else:
      experiment = config_lib.from_config_dict(config)
    loop.check_enumerable(experiment, sog.games.load(experiment.game))
  config = config_lib.default_config_dict("kuhn_poker")
  config.selfplay.q_search = 1.5
  with pytest.raises(ValueError, match=r"selfplay\.q_search must be in"):
    config_lib.from_config_dict(config)
  with pytest.raises(ValueError, match="unknown keys \\['gamez'\\]"):
    config_lib.from_config_dict({"game": "kuhn_poker", "gamez": 1})
  with pytest.raises(ValueError, match="unknown keys \\['simulation'\\]"):
    config_lib.from_config_dict({"game": "kuhn_poker", "actor": {"simulation": 3}})
  with pytest.raises(ValueError, match="kuhn_pokr"):
    config_lib.from_config_dict({"game": "kuhn_pokr"})
  for s, c in ((100, 1.0), (33, 0.5), (1000, 2.0)):  # setting names read back
    assert config_lib.parse_setting(config_lib.setting_name(s, c)) == (s, c)
  with pytest.raises(ValueError, match="named SoG\\(s,c\\)"):
    config_lib.parse_setting("GT-CFR(100)")


def test_saved_experiments_from_before_the_resolving_section_still_load():
  """An older run's ``selfplay.json`` kept the actors' re-solving in ``selfplay``; its experiment
  reads back with those settings in ``resolving``, the round trip of a new one is exact, and a
  config setting one key in both places is refused."""
  experiment = config_lib.from_config_dict(config_lib.default_config_dict("kuhn_poker"))
  assert experiment.resolving == resolving.ResolvingConfig()
  assert config_lib.from_config_dict(experiment.to_dict()) == experiment
  old = experiment.to_dict()
  del old["resolving"]
  old["selfplay"].update(safe=False, alpha=0.25)
  migrated = config_lib.from_config_dict(old)
  assert migrated.resolving == resolving.ResolvingConfig(safe=False, alpha=0.25)
  assert migrated.selfplay == experiment.selfplay
  old["resolving"] = {"alpha": 0.5}
  with pytest.raises(ValueError, match="both set"):
    config_lib.from_config_dict(old)


_TABLE_SELFPLAY = ROOT / "tests" / "fixtures" / "table_selfplay.npz"


def _recorded_setting(config_file: str):
  """The setting the table search's self-play was recorded in (float64, inside ``enable_x64``): the
  config file's experiment with 4 games, p_td1 = 0.5, eps = 0.25, q_search = 1, chunks of 2, its
  seeded CVPN."""
  config = runpy.run_path(str(ROOT / "configs" / config_file))["get_config"]()
  config.selfplay.update(games=4, p_td1=0.5, eps=0.25, q_search=1.0, q_first=None, search_chunk=2)
  experiment = config_lib.from_config_dict(config)
  game, _, params, leaf = loop.initial_network(experiment)
  return experiment, game, params, leaf


_RECORDED_CONFIGS = [
  ("kuhn", "kuhn.py"),
  pytest.param(
    "leduc",
    "leduc.py",
    marks=pytest.mark.slow(reason="70 s each; the same tests' [kuhn] cases check the property"),
  ),
]


@pytest.mark.parametrize("name, config_file", _RECORDED_CONFIGS)
def test_the_actors_on_the_pool_play_the_table_search_s_games(name, config_file):
  """Eight moves of four games, SoG(10,1), float64, a seeded CVPN: the examples of the finished
  games (their public states, ranges, policy and TD(1) targets) are those the table search's actors
  made from the same keys before the table engine left (``tests/fixtures/table_selfplay.npz``).
  Their sampled leaf queries are not compared: each engine offers its frontier to the sample in
  its own order."""
  recorded = np.load(_TABLE_SELFPLAY)
  with jax.enable_x64(True):
    experiment, game, params, leaf = _recorded_setting(config_file)
    searcher = actor_lib.pools_for(
      game, leaf, search_types.GTCFRConfig(simulations=10), jnp.float64
    )
    actors = actor_lib.Actors(game, searcher, experiment.selfplay, 2, experiment.resolving)
    actors.restart(jax.random.PRNGKey(1))
    rng, parts = np.random.default_rng(0), []
    for i in range(8):
      examples, queries, _ = actors.play(params, jax.random.PRNGKey(100 + i), rng)
      parts.append(examples) if examples is not None else None
      asked = game.tree.nodes_of_padded_paths(queries.paths)
      assert (game.tree.kind[asked] != sog.games.TERMINAL).all()
      np.testing.assert_array_equal(queries.ranges[~game.tree.valid[asked]], 0.0)
  examples = buffers.concatenate(parts)
  facts = buffers.PublicFacts.at(game.tree, recorded[f"{name}_actors_nodes"])
  for field in facts.__dataclass_fields__:
    np.testing.assert_array_equal(getattr(examples, field), getattr(facts, field), err_msg=field)
  for field in ("has_value", "has_policy"):
    np.testing.assert_array_equal(getattr(examples, field), recorded[f"{name}_actors_{field}"])
  for field in ("ranges", "values", "policy"):
    np.testing.assert_allclose(
      getattr(examples, field), recorded[f"{name}_actors_{field}"], atol=1e-6, err_msg=field
    )


@pytest.mark.parametrize("name, config_file", _RECORDED_CONFIGS)
def test_the_query_solver_on_the_pool_answers_as_the_table_search_did(name, config_file):
  """Queries at decisions up to depth 4 with random ranges on their valid infostates (the jack's
  cut: infostate 0 reached by neither player), SoG(20,1), float64, chunks of 2 (on Leduc in pools
  of several sizes, each query's the smallest its subgame fills): the value and
  policy targets, under either rule for unreached infostates, are those the table search's solver
  gave (``tests/fixtures/table_selfplay.npz``); the best response's values are at least the average
  policy's where the range is cut and equal elsewhere; recursive queries lie below their query."""
  recorded = np.load(_TABLE_SELFPLAY)
  nodes, ranges = recorded[f"{name}_solver_nodes"], recorded[f"{name}_solver_ranges"]
  cut = ranges.copy()
  cut[:, :, 0] = 0.0
  cut = cut / np.maximum(cut.sum(-1, keepdims=True), 1e-300)
  targets = {}
  with jax.enable_x64(True):
    experiment, game, params, leaf = _recorded_setting(config_file)
    tree, actors_length = game.tree, game.tree.max_moves
    searcher = actor_lib.pools_for(
      game, leaf, search_types.GTCFRConfig(simulations=20), jnp.float64
    )
    if name == "leduc":  # the queries run in pools of several sizes (sog.search.pool.sized)
      assert len({int(searcher.capacity[n]) for n in nodes}) > 1
    selfplay = dataclasses.replace(experiment.selfplay, solver_batch=8, q_recursive=1.0)
    for kind in config_lib.UNREACHED_TARGETS:
      solver = query_solver.QuerySolver(
        game, searcher, dataclasses.replace(selfplay, unreached_targets=kind), chunk=2
      )
      solved, recursive = solver.solve(
        params,
        buffers.Queries(paths=buffers.node_paths(tree, nodes, actors_length), ranges=cut),
        jax.random.PRNGKey(5),
        np.random.default_rng(0),
      )
      targets[kind] = solved.values
      for field in ("values", "policy"):
        np.testing.assert_allclose(
          getattr(solved, field), recorded[f"{name}_solver_{kind}_{field}"], atol=1e-6
        )
  below = tree.nodes_of_padded_paths(recursive.paths)
  assert recursive.size > 0 and (tree.kind[below] != sog.games.TERMINAL).all()
  ancestors = tables_lib.ancestors(tree)
  assert all(np.isin(ancestors[n, : tree.depth[n]], nodes).any() for n in below)
  average, best = targets["average"], targets["best_response"]
  reached = (cut > 0) & tree.valid[nodes]
  np.testing.assert_allclose(best[reached], average[reached], atol=1e-9)
  unreached = (cut == 0) & tree.valid[nodes]
  assert (best[unreached] >= average[unreached] - 1e-9).all()
  assert (best[unreached] > average[unreached] + 1e-3).any()


def test_random_queries_join_the_searches_queries_as_valid_pbss():
  config = config_lib.default_config_dict("kuhn_poker", simulations=4)
  config.selfplay.update(games=2, random_queries=3, solver_batch=1000, min_replay=1000)
  selfplay = loop.SelfPlay(config_lib.from_config_dict(config))
  pushed = []
  push = selfplay.queries.push
  selfplay.queries.push = lambda queries: pushed.append(queries) or push(queries)
  selfplay.round()
  assert selfplay.counters["queries_added"] == sum(q.size for q in pushed)
  random_rows = pushed[-1]  # after the actors' own queries
  assert random_rows.size == 3
  tree = selfplay.game.tree
  random_nodes = tree.nodes_of_padded_paths(random_rows.paths)
  assert (tree.kind[random_nodes] != sog.games.TERMINAL).all()
  assert (random_rows.ranges[~tree.valid[random_nodes]] == 0).all()
  np.testing.assert_allclose(random_rows.ranges.sum(-1), 1.0, atol=1e-6)


def test_training_lowers_kuhn_exploitability_and_resumes(tmp_path):
  """End to end on Kuhn: self-play lowers the composed exploitability of SoG(4,1) with the trained
  CVPN clearly below the untrained one (same seeds); a second call continues from the checkpoint."""
  experiment = _kuhn_experiment()
  experiment = config_lib.Experiment(
    **{
      **experiment.__dict__,
      "max_steps": 250,
      "snapshot_every_steps": 1000,
      "evaluation": dataclasses.replace(experiment.evaluation, keep_best=True),
    }
  )
  lines = []
  summary = run.train(experiment, tmp_path, log=lines.append)
  with (tmp_path / run.EVALUATION).open() as f:
    untrained = float(next(csv.DictReader(f))["mean"])  # step 0
  trained = summary["exploitability"]["SoG(4,1)"]["mean"]
  assert summary["steps"] == 250
  assert trained < 0.8 * untrained, (untrained, trained)
  assert (tmp_path / run.PLOT).is_file() and (tmp_path / run.METRICS).is_file()
  # The evaluations reach TensorBoard as well, with the CSV's steps and values.
  with (tmp_path / run.EVALUATION).open() as f:
    rows = [(int(row["step"]), float(row["mean"])) for row in csv.DictReader(f)]
  scalars = monitoring.read_scalars(tmp_path / run.TENSORBOARD)["evaluation/SoG_4_1_/mean"]
  assert [step for step, _ in scalars] == [step for step, _ in rows] == [0, 100, 200, 250]
  np.testing.assert_allclose([value for _, value in scalars], [mean for _, mean in rows], rtol=1e-6)
  # keep_best: the network of the lowest evaluation, with its step and value.
  best = json.loads((tmp_path / run.BEST / "best.json").read_text())
  step, mean = min(rows, key=lambda row: row[1])
  assert best["step"] == step and best["mean"] == pytest.approx(mean, rel=1e-6)
  checkpoint_lib.restore_leaf_model(tmp_path / run.BEST, "kuhn_poker")
  saved = np.load(tmp_path / run.CHECKPOINT / "selfplay.npz")
  resumed = loop.SelfPlay(experiment)
  resumed.restore(tmp_path / run.CHECKPOINT)
  assert resumed.step == 250 and resumed.counters["games"] == summary["games"]
  for name, value in {**resumed.learner.replay.state(), **resumed.queries.state()}.items():
    np.testing.assert_array_equal(saved[name], value)
  # Resumed without evaluation, with network snapshots for evaluating offline.
  more = config_lib.Experiment(
    **{
      **experiment.__dict__,
      "max_steps": 260,
      "snapshot_every_steps": 5,
      "evaluation": dataclasses.replace(experiment.evaluation, settings=(), keep_best=False),
    }
  )
  summary = run.train(more, tmp_path, log=lines.append)
  assert summary["steps"] == 260 and any(line.startswith("resumed from") for line in lines)
  assert summary["exploitability"] == {}
  snapshots = sorted((tmp_path / run.SNAPSHOTS).iterdir())
  # The untrained network, the first run's final one, then each at the first round past a multiple
  # of 5, and the final one.
  steps = sorted(int(p.name.removeprefix("step_")) for p in snapshots)
  assert len(steps) == 4 and steps[:2] == [0, 250] and 255 <= steps[2] < 260 and steps[3] == 260
  np.testing.assert_array_equal(  # step 0 is the run's initialisation
    jax.tree.leaves(loop.SelfPlay(experiment).learner.state.params)[0],
    jax.tree.leaves(
      checkpoint_lib.restore(tmp_path / run.SNAPSHOTS / "step_0", resumed.learner.state)[0].params
    )[0],
  )
  snapshots = [tmp_path / run.SNAPSHOTS / f"step_{step}" for step in steps]
  # Checkpoints and snapshots are sog.nets checkpoints: evaluate.py --leaf takes them (or the work
  # directory).
  checkpoint_lib.restore_leaf_model(snapshots[-1], "kuhn_poker")
  checkpoint_lib.restore_leaf_model(tmp_path, "kuhn_poker")
  with pytest.raises(ValueError, match="trained for kuhn_poker"):
    checkpoint_lib.restore_leaf_model(tmp_path / run.CHECKPOINT, "leduc_poker")
  # The curve by the protocol from the snapshots (here those at multiples of 260): one row per
  # snapshot and setting, kept when the script runs again.
  command = [
    sys.executable,
    str(ROOT / "scripts" / "eval_snapshots.py"),
    f"--workdir={tmp_path}",
    "--sims=4",
    "--seeds=4",
    "--every_steps=260",
  ]
  first = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
  with (tmp_path / "snapshot_evaluation.csv").open() as f:
    rows = list(csv.DictReader(f))
  assert [(row["step"], row["setting"]) for row in rows] == [("0", "SoG(4,1)"), ("260", "SoG(4,1)")]
  np.testing.assert_allclose(float(rows[0]["mean"]), untrained, rtol=1e-4)  # as the run's own
  assert float(rows[1]["mean"]) < 0.8 * untrained
  assert (tmp_path / "snapshot_exploitability.png").is_file()
  assert json.loads(first.stdout.splitlines()[-1])["step"] == 260
  # evaluate.py, reading the same shared flags (scripts/common.py), gives the last snapshot's
  # number.
  evaluated = subprocess.run(
    [
      sys.executable,
      str(ROOT / "scripts" / "evaluate.py"),
      "--game=kuhn_poker",
      f"--leaf={snapshots[-1]}",
      "--sims=4",
      "--seeds=4",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  evaluated = json.loads(evaluated.stdout.splitlines()[-1])
  assert (evaluated["leaf"], evaluated["sims"], evaluated["c"], evaluated["seeds"]) == (
    str(snapshots[-1]),
    4,
    1.0,
    4,
  )
  assert evaluated["exploitability"]["mean"] == pytest.approx(float(rows[1]["mean"]), rel=1e-6)
  # evaluate.py's JSON lines as references: seed slices of one leaf and s pool into one mean.
  slices = [
    {
      "game": "kuhn_poker",
      "leaf": "zeros",
      "sims": 4,
      "c": 1.0,
      "first_seed": first,
      "per_seed": per_seed,
    }
    for first, per_seed in ((0, [0.5, 0.7]), (2, [0.9]))
  ]
  (tmp_path / "zeros.log").write_text(
    "".join(f"progress\n{json.dumps({'results': [row]})}\n" for row in slices)
  )
  again = subprocess.run(
    [*command, f"--references={tmp_path / 'zeros.log'}"],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  summary = json.loads(again.stdout.splitlines()[-1])
  assert summary["last"] == []  # nothing re-run
  assert summary["references"] == {"leaf=zeros": {"SoG(4,1)": pytest.approx(0.7)}}
  with (tmp_path / "snapshot_evaluation.csv").open() as f:
    assert list(csv.DictReader(f)) == rows
  # Another T_prior is searched anew, into its own files: the rows above are not reused for it.
  uniform = subprocess.run(
    [*command, "--prior_temperature=inf"], capture_output=True, text=True, cwd=ROOT, check=True
  )
  assert [row["step"] for row in json.loads(uniform.stdout.splitlines()[-1])["last"]] == [260]
  with (tmp_path / "snapshot_evaluation_prior_inf.csv").open() as f:
    assert [(row["step"], row["setting"]) for row in csv.DictReader(f)] == [
      ("0", "SoG(4,1)"),
      ("260", "SoG(4,1)"),
    ]
  assert (tmp_path / "snapshot_exploitability_prior_inf.png").is_file()
  with (tmp_path / "snapshot_evaluation.csv").open() as f:
    assert list(csv.DictReader(f)) == rows


def test_a_killed_run_resumes_with_its_buffers(tmp_path):
  """SIGKILL a training process after its first checkpoint; the next run resumes from it (neither
  evaluates: the training test's resume checks the evaluations a resumed run makes)."""
  run_kuhn = [
    sys.executable,
    str(ROOT / "scripts" / "train.py"),
    f"--config={ROOT}/configs/kuhn.py",
    f"--workdir={tmp_path}",
    "--config.evaluation.settings=()",
  ]
  command = [
    *run_kuhn,
    "--config.max_steps=100000",
    "--config.evaluation.every_steps=0",
    "--config.checkpoint_every_seconds=2",
    "--log_every=1",
  ]
  process = subprocess.Popen(
    command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
  )
  progress = tmp_path / run.CHECKPOINT / "selfplay.json"
  deadline = time.time() + 240
  while time.time() < deadline and not (
    progress.is_file() and json.loads(progress.read_text())["counters"]["examples"]
  ):
    time.sleep(1)
  process.send_signal(signal.SIGKILL)
  process.wait()
  assert loop.has_checkpoint(tmp_path / run.CHECKPOINT)  # also if killed inside a save
  saved = json.loads(progress.read_text())["counters"]
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:
    saved_encodings = f["replay_encoding"].copy()
  assert saved["examples"] > 0
  out = subprocess.run(
    [*run_kuhn, "--config.max_steps=1"],
    capture_output=True,
    text=True,
    cwd=ROOT,
    timeout=300,
  )
  assert out.returncode == 0, out.stderr[-2000:]
  assert f"resumed from {tmp_path / run.CHECKPOINT}" in out.stdout
  result = json.loads(out.stdout.strip().splitlines()[-1])
  assert result["games"] >= saved["games"]
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:
    kept = saved_encodings[: min(saved["examples"], len(saved_encodings))]
    np.testing.assert_array_equal(f["replay_encoding"][: len(kept)], kept)
