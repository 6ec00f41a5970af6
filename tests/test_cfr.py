"""Public-tree CFR+: agreement with OpenSpiel, convergence, subgames and depth-limited solving."""

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pyspiel
import pytest

import sog.eval
from sog.openspiel import bridge as openspiel_bridge
from sog.search import cfr
from sog.search import leaf_models
from sog.search import solver as solver_lib
from sog.search import tables as tables_lib
from tests.conftest import load


def _ours_and_openspiel(name: str, checkpoints: list[int]) -> list[tuple[float, float]]:
  game = load(name)
  os_game = openspiel_bridge.openspiel_game(game)
  theirs = pyspiel.CFRPlusSolver(os_game)
  ours = solver_lib.Solver(game.tree, "alternating")
  state, ranges, done, results = ours.init(), ours.root_ranges(None), 0, []
  for n in checkpoints:
    for _ in range(n - done):
      theirs.evaluate_and_update_policy()
    state, _ = ours.run(state, ranges, n - done)
    done = n
    results.append(
      (
        sog.eval.exploitability(game, ours.average_policy(state)),
        pyspiel.exploitability(os_game, theirs.average_policy()),
      )
    )
  return results


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "liars_dice(faces=4)"])
def test_alternating_cfr_plus_matches_openspiel_cpp(name):
  """Same algorithm: equal iterates early on; after N = 200 no worse than OpenSpiel's C++ CFR+.

  The two trajectories agree to float32 rounding for the first tens of iterations. Later, rounding
  at regrets clipped to exactly zero by regret-matching+ makes both drift by about 1% either way
  (OpenSpiel itself drifts the same way between its C++ and Python solvers), so "no worse" allows
  2%.
  """
  (early_ours, early_theirs), (ours, theirs) = _ours_and_openspiel(name, [10, 200])
  assert early_ours == pytest.approx(early_theirs, rel=1e-5)
  assert ours <= theirs * 1.02, (ours, theirs)


@pytest.mark.parametrize("updates", cfr.UPDATES)
def test_exploitability_falls_as_iterations_grow(updates):
  game = load("leduc_poker")
  solver = solver_lib.Solver(game.tree, updates)
  state, ranges, curve = solver.init(), solver.root_ranges(None), []
  for _ in range(4):
    state, _ = solver.run(state, ranges, 100)
    curve.append(sog.eval.exploitability(game, solver.average_policy(state)))
  assert all(b < a for a, b in itertools.pairwise(curve)), curve
  assert curve[-1] < {"alternating": 0.005, "simultaneous": 0.02}[updates]


def test_regret_matching_invariants(rng):
  legal = rng.random((50, 7)) < 0.6
  legal[:, 0] = True
  regrets = rng.normal(size=(50, 7))
  regrets[:5] = -1.0  # no positive regret: uniform over legal actions
  policy = np.asarray(cfr.regret_matching(jnp.asarray(regrets), jnp.asarray(legal)))
  np.testing.assert_allclose(policy.sum(-1), 1.0, rtol=1e-6)
  assert (policy >= 0).all() and not policy[~legal].any()
  np.testing.assert_allclose(policy[:5], legal[:5] / legal[:5].sum(-1, keepdims=True), rtol=1e-6)
  positive = (regrets > 0) & legal
  rows = positive.any(-1)
  np.testing.assert_array_equal(policy[rows] > 0, positive[rows])


def _random_subgames(name: str, rng, count: int):
  game = load(name)
  tree = game.tree
  candidates = np.flatnonzero((tree.kind <= 1) & (tree.depth >= 1))
  for node in rng.choice(candidates, size=count, replace=False):
    ranges = rng.dirichlet(np.ones(tree.max_infostates), size=2) * tree.valid[node]
    ranges[tree.valid[node].sum(-1) == 0] = 0
    yield game, int(node), ranges / np.maximum(ranges.sum(-1, keepdims=True), 1e-12)


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard(map=glasses)"])
def test_converged_subgame_solves_are_zero_sum_and_unexploitable(name, rng):
  for game, node, ranges in _random_subgames(name, rng, 4):
    result = solver_lib.solve_subgame(game, node, ranges, iterations=1000, updates="alternating")
    subtree = solver_lib.subgame_tree(game, node)
    np.testing.assert_allclose((ranges * result.root_values).sum(), 0.0, atol=1e-5)
    evaluation = sog.eval.evaluate(subtree, result.average_policy, ranges)
    np.testing.assert_allclose(evaluation.root_values, result.root_values, atol=1e-5)
    assert (evaluation.gains < 2e-3).all(), (node, evaluation.gains)


# Round 4 of the glasses map: Mr X (revealed at 10 in round 3) moved again, unseen; detectives to
# move. Paths are child slots: Mr X's unseen taxi move is slot 0 and his move to station 10 slot 9
# (0-based); a detective's move to station d without a catch is slot A + d = 12 + d.
_GLASSES_ROUND_4 = (0, 13, 21, 0, 12, 19, 9, 13, 18, 0)


@pytest.mark.parametrize(
  "name, path", [("leduc_poker", (1,)), ("scotland_yard(map=glasses)", _GLASSES_ROUND_4)]
)
def test_depth_limited_solve_with_exact_oracle_matches_full_solve(name, path, rng):
  """CFR-D cut two levels below a public state, its leaves solved exactly each iteration.

  The subgame value matches the full solve's, and the depth-limited solution, completed below its
  leaves by exact solves at its leaf ranges, is an equilibrium of the whole subgame. Per-infostate
  root values agree more loosely: they are not unique when the opponent has several equilibrium
  strategies (two full Leduc solves of the (1,) subgame, at 2k and 8k iterations, differ by 0.016 on
  player 1's kings).
  """
  game = load(name)
  node = game.tree.node_of_path(path)
  ranges = rng.dirichlet(np.ones(game.tree.max_infostates), size=2) * game.tree.valid[node]
  ranges /= ranges.sum(-1, keepdims=True)
  full = solver_lib.solve_subgame(game, node, ranges, iterations=2000, updates="alternating")
  limited_tree = solver_lib.subgame_tree(game, node, max_depth=2)
  assert limited_tree.is_leaf.sum() >= 8
  oracle = leaf_models.exact_leaf_model(iterations=150)
  limited = solver_lib.solve(limited_tree, 150, ranges, "simultaneous", leaf=oracle)
  value = lambda result: (ranges * result.root_values).sum(-1)  # noqa: E731
  np.testing.assert_allclose(value(limited), value(full), atol=2e-3)
  np.testing.assert_allclose(limited.root_values, full.root_values, atol=0.05)
  subgame, completed = solver_lib.complete_policy(
    limited_tree, limited.average_policy, ranges, iterations=2000
  )
  evaluation = sog.eval.evaluate(subgame, completed, ranges)
  assert (evaluation.gains < 2e-3).all(), evaluation.gains
  np.testing.assert_allclose(evaluation.values, value(full), atol=2e-3)


def test_root_value_history_is_recorded():
  game = load("kuhn_poker")
  result = solver_lib.solve(game, 50, record_root_values=True)
  assert result.root_values_history.shape == (50, 2, 3)
  final = (game.tree.root_ranges * result.root_values).sum(-1)
  np.testing.assert_allclose(final, [-1 / 18, 1 / 18], atol=5e-3)


def test_bad_solver_input_raises_clear_errors():
  game = load("kuhn_poker")
  with pytest.raises(ValueError, match="updates must be one of"):
    solver_lib.Solver(game.tree, "sometimes")
  solver = solver_lib.Solver(game.tree)
  with pytest.raises(ValueError, match="iterations must be >= 1"):
    solver.run(solver.init(), solver.root_ranges(None), 0)
  terminal = int(np.flatnonzero(game.tree.kind == sog.games.TERMINAL)[0])
  with pytest.raises(ValueError, match="terminal"):
    solver_lib.solve_subgame(game, terminal, game.tree.root_ranges, 10)
  with pytest.raises(ValueError, match="pass a leaf model"):
    solver_lib.Solver(game.tree.subtree(0, max_depth=1))
  with pytest.raises(ValueError, match="ranges must have shape"):
    solver_lib.solve(game, 10, np.ones((2, 4)))


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_pass_best_response_values_match_openspiel_best_responses(name, rng):
  """The search pass's fifth output (what Terminate pays with terminate_values="best_response"):
  each player's root best-response value against a random policy equals the exact evaluator's
  (per infostate) and OpenSpiel's Python ``BestResponsePolicy``, and is at least the value of
  playing the policy itself."""
  game = load(name)
  tree = game.tree
  policy = sog.eval.random_policy(tree, rng)
  tables = tables_lib.make_tables(tree)
  root_ranges = tree.root_ranges
  evaluate_pass = jax.jit(functools.partial(cfr.evaluate_pass, best_response_values=True))
  _, values, _, _, best = evaluate_pass(
    tables.levels,
    jnp.asarray(policy[np.asarray(tables.inner_nodes)], jnp.float32),
    jnp.asarray(root_ranges, jnp.float32),
  )  # jitted: op by op, Leduc's pass takes 25 s
  ours = (root_ranges * np.asarray(best[0][0])).sum(-1)
  own = (root_ranges * np.asarray(values[0][0])).sum(-1)
  exact = sog.eval.evaluate(tree, policy)
  np.testing.assert_allclose(np.asarray(best[0][0]), exact.best_response_root_values, atol=1e-4)
  np.testing.assert_allclose(ours, exact.best_response, atol=1e-4)
  from open_spiel.python.algorithms import best_response as os_best_response

  os_game = openspiel_bridge.openspiel_game(game)
  os_policy = openspiel_bridge.to_openspiel_policy(game, policy)
  theirs = [
    os_best_response.BestResponsePolicy(os_game, player, os_policy).value(
      os_game.new_initial_state()
    )
    for player in (0, 1)
  ]
  np.testing.assert_allclose(ours, theirs, atol=1e-4)
  assert (ours >= own - 1e-5).all()
  np.testing.assert_allclose(own.sum(), 0.0, atol=1e-5)
