"""ReBeL in SoG's harness (sog.baselines.rebel): CFR-D subgame solves, random-iteration play, and
the composed policy evaluated exactly."""

import csv
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog import monitoring
from sog.baselines import rebel
from sog.baselines.rebel import selfplay as rebel_selfplay
import sog.eval
from sog.nets import checkpoint as checkpoint_lib
from sog.search import cfr
from sog.search import leaf_models
from sog.search import solver as solver_lib
from sog.search import tables as tables_lib
from sog.selfplay import config as selfplay_config
from sog.selfplay import run as selfplay_run
from tests.conftest import ROOT
from tests.conftest import load


def _keys(count: int, seed: int = 0) -> jax.Array:
  return jax.random.split(jax.random.PRNGKey(seed), count)


def test_depth_limited_solve_with_exact_oracle_reaches_the_game_value(rng):
  """Kuhn from a random PBS at the root: CFR-D on the 2 levels below it, its leaves valued by the
  exact oracle at every pass, gives the value of the full game's solve."""
  game = load("kuhn_poker")
  ranges = rng.dirichlet(np.ones(game.tree.max_infostates), size=2) * game.tree.valid[0]
  ranges /= ranges.sum(-1, keepdims=True)
  full = solver_lib.solve(game, 2000, ranges)
  searcher = rebel.ReBeL(
    game, leaf_models.exact_leaf_model(200), rebel.ReBeLConfig(depth=2, iterations=300)
  )
  subgames, solution = searcher.solve([0], ranges[None], _keys(1))
  assert np.asarray(rebel.slab_levels(subgames[0].tables, 2)[-1].is_leaf).any()
  value = lambda root_values: (ranges * root_values).sum(-1)  # noqa: E731
  np.testing.assert_allclose(value(solution.root_values[0]), value(full.root_values), atol=2e-3)


@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
def test_a_solve_in_padded_subgame_tables_is_the_depth_limited_solve(updates, rng):
  """Leduc after the board card, in the padded tables of its depth, several roots in one batch: each
  solve's value target (its iterations' root values, weight t) and average policy are CFR-D's on
  that root's own depth-2 tree
  (``sog.search.solver``; its convergence to the full solve is tested there)."""
  game = load("leduc_poker")
  first = game.tree.node_of_path((1, 1, 0))
  roots = [first, first + 1]
  ranges = rng.dirichlet(np.ones(game.tree.max_infostates), size=(2, 2)) * game.tree.valid[roots]
  ranges /= ranges.sum(-1, keepdims=True)
  oracle = leaf_models.exact_leaf_model(20)
  config = rebel.ReBeLConfig(depth=2, iterations=40, updates=updates)
  subgames, solution = rebel.ReBeL(game, oracle, config).solve(roots, ranges, _keys(2))
  position = np.full(game.tree.num_nodes, -1)
  for row, root in enumerate(roots):
    tree = solver_lib.subgame_tree(game, root, max_depth=2)
    reference = solver_lib.solve(
      tree, 40, ranges[row], updates, leaf=oracle, record_root_values=True
    )
    linear = np.arange(1, 41)[:, None, None]  # the target: iterations' root values, weight t
    np.testing.assert_allclose(
      solution.root_values[row],
      (linear * reference.root_values_history).sum(0) / linear.sum(),
      atol=1e-5,
    )
    tables = subgames[row].tables
    game_nodes = subgames[row].game_nodes[np.asarray(tables.inner_nodes)][
      : rebel.slab_rows(tables, 2)
    ]
    position[tree.game_node] = np.arange(tree.num_nodes)
    local = position[game_nodes]
    rows = np.flatnonzero((game_nodes >= 0) & ~tree.is_leaf[local])  # the slab's decisions
    valid = tree.valid[local[rows]].any(1)
    np.testing.assert_allclose(
      solution.average_policy[row][rows][valid],
      reference.average_policy[local[rows]][valid],
      atol=1e-5,
    )


def test_played_iterate_is_the_drawn_iteration_and_iterates_average_to_the_average_policy():
  """The policy a solve plays is pi^t of its drawn t (regret matching on t - 1 iterations' regrets),
  and the iterates weighted by t and by the actor's own reach under each are the average policy: so
  drawing t with P(t) proportional to t plays the average policy in expectation."""
  game = load("kuhn_poker")
  config = rebel.ReBeLConfig(depth=2, iterations=7)
  searcher = rebel.ReBeL(game, leaf_models.zero_leaf_model(), config)
  subgames, solution = searcher.solve([0], game.tree.root_ranges[None], _keys(1, seed=3))
  tables = subgames[0].tables
  levels = rebel.slab_levels(tables, config.depth)
  ranges = jnp.asarray(game.tree.root_ranges, jnp.float32)
  actor = jnp.clip(tables.to_inner(tables.kind), 0, 1).astype(jnp.int32)[:, None, None]
  state, iterates, weighted, reach = cfr.init_state(levels), [], 0.0, 0.0
  for t in range(1, config.iterations + 1):
    policy = cfr.current_policy(levels, state)
    iterates.append(policy)
    per_level = cfr.evaluate_pass(levels, policy, ranges)[0]
    own = jnp.concatenate([r[: level.inner] for r, level in zip(per_level, levels, strict=True)])
    own = jnp.take_along_axis(own, actor, 1)[:, 0, :, None]  # the actor's own reach [M, S, 1]
    weighted, reach = weighted + t * own * policy, reach + t * own
    state, _ = cfr.run(levels, state, ranges, 1, "alternating", _zero_leaves(levels))
  t = int(solution.iteration[0])
  assert 1 <= t <= config.iterations
  np.testing.assert_allclose(solution.policy[0], iterates[t - 1], atol=1e-6)
  played = np.asarray(cfr.acting_masks(levels).any(0) & (reach > 0))
  assert played.sum() >= 8
  np.testing.assert_allclose(
    np.asarray(weighted / jnp.maximum(reach, 1e-30))[played],
    solution.average_policy[0][played],
    atol=1e-5,
  )


def _zero_leaves(levels):
  def leaf_values(ranges):
    return [None] * (len(levels) - 1) + [jnp.zeros_like(ranges[-1])], None

  return leaf_values


def test_drawn_iterations_follow_the_linear_weights():
  """P(t) = t / (T (T + 1) / 2): 200k draws for T = 8 within 0.005 of it (about 4 standard
  errors)."""
  draws = jax.vmap(lambda k: rebel.sample_iteration(k, 8))(_keys(200_000))
  counts = np.bincount(np.asarray(draws), minlength=9)
  assert counts[0] == 0 and counts.sum() == 200_000
  np.testing.assert_allclose(counts[1:] / 200_000, np.arange(1, 9) / 36, atol=0.005)


def test_a_slab_holding_the_whole_game_plays_cfr_plus():
  """With ``depth`` past the game's end there is one subgame, the game: playing its average policy
  is CFR+'s (alternating, T iterations) exactly, for every seed."""
  game = load("kuhn_poker")
  config = rebel.ReBeLConfig(depth=10, iterations=100, play="average")
  composition = rebel.ReBeL(game, leaf_models.zero_leaf_model(), config).compose([0, 1])
  reference = solver_lib.solve(game, 100)
  assert composition.searches == 2
  for policy in composition.policies:
    np.testing.assert_allclose(policy, reference.average_policy, atol=1e-6)
  np.testing.assert_allclose(
    composition.exploitability, sog.eval.exploitability(game, reference.average_policy), atol=1e-6
  )


def test_random_iteration_play_is_safe_where_average_play_is_not():
  """ReBeL's section 6 on Kuhn with the exact oracle, depth-2 subgames: passing the average policy's
  beliefs down is exploitable (0.040 at T = 400); drawing a random iteration per subgame gives
  exploitable single plays (each seed's policy) whose mixture over 16 seeds is 0.008."""
  game = load("kuhn_poker")
  oracle = leaf_models.exact_leaf_model(100)
  average = rebel.ReBeL(game, oracle, rebel.ReBeLConfig(iterations=400, play="average")).compose(
    [0, 1], batch_size=16
  )
  np.testing.assert_array_equal(average.policies[0], average.policies[1])  # no randomness
  sampled = rebel.ReBeL(game, oracle, rebel.ReBeLConfig(iterations=400)).compose(
    range(16), batch_size=16
  )
  assert sampled.searches == 16 * 2  # the root's subgame, then the one after (check, bet)
  mixture = sog.eval.exploitability(game, rebel.mixture_policy(game.tree, sampled.policies))
  assert mixture < 0.02 < 0.03 < average.exploitability[0], (mixture, average.exploitability)
  assert mixture < sampled.exploitability.mean()  # convexity: the mixture is no worse than a play


def test_mixture_of_plays_weights_each_by_the_actors_own_reach(rng):
  """One policy mixed with itself is itself; mixing two policies is exploitable at most as the mean
  of the two (exploitability is convex in the realisation-weight space the mixture averages in)."""
  game = load("leduc_poker")
  first, second = (sog.eval.random_policy(game.tree, rng) for _ in range(2))
  np.testing.assert_allclose(
    rebel.mixture_policy(game.tree, np.stack([first, first])), first, atol=1e-12
  )
  mixed = rebel.mixture_policy(game.tree, np.stack([first, second]))
  assert (
    sog.eval.exploitability(game, mixed)
    <= 0.5 * (sog.eval.exploitability(game, first) + sog.eval.exploitability(game, second)) + 1e-12
  )


def test_beliefs_and_config_checks():
  valid = np.array([[True, True, False], [True, True, True]])
  ranges = np.array([[0.2, 0.6, 0.0], [0.0, 0.0, 0.0]])
  np.testing.assert_allclose(rebel.beliefs(ranges, valid), [[0.25, 0.75, 0], [1 / 3] * 3])
  for bad in ({"depth": 0}, {"iterations": 0}, {"updates": "linear"}, {"play": "best"}):
    with pytest.raises(ValueError, match="ReBeL config"):
      rebel.ReBeLConfig(**bad)
  with pytest.raises(ValueError, match="whole tree"):
    rebel.ReBeL(load("kuhn_poker").tree.subtree(1), leaf_models.zero_leaf_model())


def test_walk_follows_the_policy_and_explores_with_the_explorer_seat():
  """From Kuhn's root, two levels down: always action 0 (check, check) reaches the showdown (0, 0),
  always action 1 (bet, call) reaches (1, 1); with eps = 1 the explorer's first action is
  uniform."""
  game = load("kuhn_poker")
  tree = game.tree
  tables = tables_lib.make_tables(tree)
  ranges = jnp.asarray(tree.root_ranges, jnp.float32)
  walk = jax.jit(rebel_selfplay.walk, static_argnames=("eps", "depth"))
  for action in (0, 1):
    policy = np.zeros((tree.num_nodes, *tree.legal.shape[1:]), np.float32)
    policy[..., action] = 1.0
    reached = walk(tables, 0, ranges, policy, 0, jax.random.PRNGKey(0), eps=0.0, depth=2)
    assert int(reached) == tree.node_of_path((action, action))
  policy = np.zeros((tree.num_nodes, *tree.legal.shape[1:]), np.float32)
  policy[..., 0] = 1.0
  reached = jax.vmap(lambda key: walk(tables, 0, ranges, policy, 0, key, eps=1.0, depth=1))(
    _keys(2000)
  )
  first_bets = np.mean(np.asarray(reached) == tree.node_of_path((1,)))
  assert 0.45 < first_bets < 0.55, first_bets


def _kuhn_rebel_config(**overrides):
  config = selfplay_config.default_config_dict("kuhn_poker")
  config.rebel = {"iterations": 16}
  config.network.update(depth=1, width=32)
  config.selfplay.update(games=4, min_replay=8, batch_size=8, train_steps_per_round=2, eps=0.25)
  config.evaluation.update(settings=(), seeds=2, every_steps=0, batch_size=4)
  config.update(overrides)
  return rebel_selfplay.from_config_dict(config)


def test_selfplay_trains_evaluates_and_resumes_with_its_buffer(tmp_path):
  """ReBeL's self-play through SoG's training loop: steps, the evaluation rows (per seed and the
  mixture), a checkpoint holding the replay buffer, a resumed run continuing from it; evaluate.py
  --agent=rebel reads the checkpoint and gives the run's final evaluation."""
  lines = []
  summary = rebel_selfplay.train(_kuhn_rebel_config(max_steps=6), tmp_path, log=lines.append)
  assert summary["steps"] == 6 and summary["games"] > 0
  assert set(summary["exploitability"]) == {"ReBeL(2,16)", "ReBeL(2,16) mixture"}
  with (tmp_path / selfplay_run.EVALUATION).open() as f:
    rows = list(csv.DictReader(f))
  assert [(r["step"], r["setting"]) for r in rows] == [
    ("0", "ReBeL(2,16)"),
    ("0", "ReBeL(2,16) mixture"),
    ("6", "ReBeL(2,16)"),
    ("6", "ReBeL(2,16) mixture"),
  ]
  saved = np.load(tmp_path / selfplay_run.CHECKPOINT / "selfplay.npz")
  resumed = rebel_selfplay.ReBeLSelfPlay(_kuhn_rebel_config(max_steps=6))
  resumed.restore(tmp_path / selfplay_run.CHECKPOINT)
  assert resumed.step == 6 and resumed.counters["games"] == summary["games"]
  for name, value in resumed.learner.replay.state().items():
    np.testing.assert_array_equal(saved[name], value)
  more = rebel_selfplay.train(_kuhn_rebel_config(max_steps=8), tmp_path, log=lines.append)
  assert more["steps"] == 8 and any(line.startswith("resumed from") for line in lines)
  evaluated = subprocess.run(
    [
      sys.executable,
      str(ROOT / "scripts" / "evaluate.py"),
      "--agent=rebel",
      "--game=kuhn_poker",
      f"--leaf={tmp_path}",
      "--iterations=16",
      "--seeds=2",
      "--batch_size=4",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  result = json.loads(evaluated.stdout.splitlines()[-1])
  assert (result["agent"], result["depth"], result["iterations"]) == ("rebel", 2, 16)
  final = more["exploitability"]
  assert result["exploitability"]["mean"] == pytest.approx(final["ReBeL(2,16)"]["mean"], rel=1e-5)
  assert result["mixture"] == pytest.approx(final["ReBeL(2,16) mixture"]["mean"], rel=1e-5)


def test_a_round_advances_every_game_by_one_subgame():
  """Each round solves every game's subgame once (one example each) and moves the game ``depth``
  levels down, or back to the root when its walk ends the game."""
  run = rebel_selfplay.ReBeLSelfPlay(_kuhn_rebel_config())
  depth = run.game.tree.depth
  for _ in range(3):
    before = depth[run.roots].copy()
    examples = run.counters["examples"]
    run.round()
    after = depth[run.roots]
    assert run.counters["examples"] - examples == run.roots.size
    assert np.all((after == 0) | (after == before + 2)), (before, after)


def test_a_rebel_config_with_unknown_keys_is_refused():
  config = selfplay_config.default_config_dict("kuhn_poker")
  config.rebel = {"iterations": 16, "depht": 2}
  with pytest.raises(ValueError, match=r"config.rebel: unknown keys \['depht'\]"):
    rebel_selfplay.from_config_dict(config)


def test_runs_compared_against_self_play_time(tmp_path):
  """scripts/compare_runs.py draws every setting of several runs against their self-play seconds
  (ReBeL's table 2 drawn in for Liar's Dice) and reports each setting's last evaluation; a run's own
  plot skips fig. 3 references for a baseline's setting."""
  fields = ("step", "seconds", "setting", "min", "mean", "max", "eval_seconds")
  for name, setting in (("sog", "SoG(100,1)"), ("rebel", "ReBeL(2,512) mixture")):
    (tmp_path / name).mkdir()
    for step, seconds, mean in ((0, 0.0, 0.6), (500, 1500.0, 0.2), (900, 3000.0, 0.1)):
      monitoring.append_row(
        tmp_path / name / selfplay_run.EVALUATION,
        fields,
        {
          "step": step,
          "seconds": seconds,
          "setting": setting,
          "min": mean,
          "mean": mean,
          "max": mean,
          "eval_seconds": 1,
        },
      )
  assert selfplay_run.plot_evaluation(tmp_path / "rebel", "t", "leduc_poker").is_file()
  out = subprocess.run(
    [
      sys.executable,
      str(ROOT / "scripts" / "compare_runs.py"),
      f"--runs={tmp_path / 'sog'},{tmp_path / 'rebel'}",
      "--game=liars_dice(faces=4)",
      f"--plot={tmp_path / 'both.png'}",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  summary = json.loads(out.stdout.splitlines()[-1])
  assert {k: (v["step"], v["mean"]) for k, v in summary["last"].items()} == {
    "SoG(100,1)": (900, 0.1),
    "ReBeL(2,512) mixture": (900, 0.1),
  }
  assert (tmp_path / "both.png").is_file()


def test_the_shipped_rebel_network_loads_for_its_game():
  leaf = checkpoint_lib.restore_leaf_model(
    ROOT / "checkpoints" / "rebel_liars_dice(faces=4)", "liars_dice(faces=4)"
  )
  assert leaf.params is not None
  with pytest.raises(ValueError, match="trained for liars_dice"):
    checkpoint_lib.restore_leaf_model(
      ROOT / "checkpoints" / "rebel_liars_dice(faces=4)", "kuhn_poker"
    )
