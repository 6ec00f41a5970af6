"""OpenSpiel's own implementations of the baselines, run beside ours: C++ CFR+ and MCCFR, Python
Linear CFR and DCFR for a time budget (the speed column of ``scripts/baselines.py``), and PSRO
(``psro_v2`` with exact best responses and payoffs sampled by play) for a number of iterations."""

from __future__ import annotations

from collections.abc import Callable
import random
import time
from typing import Any

import numpy as np
from open_spiel.python.algorithms import discounted_cfr
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
import pyspiel

from sog.games import registry
from sog.openspiel import bridge

# name -> (constructor(game, seed), one iteration, implementation)
_PEERS: dict[str, tuple[Callable[[Any, int], Any], Callable[[Any], None], str]] = {
  "cfr_plus": (
    lambda game, seed: pyspiel.CFRPlusSolver(game),
    lambda solver: solver.evaluate_and_update_policy(),
    "C++",
  ),
  "linear_cfr": (
    lambda game, seed: discounted_cfr.LCFRSolver(game),
    lambda solver: solver.evaluate_and_update_policy(),
    "Python",
  ),
  "dcfr": (
    lambda game, seed: discounted_cfr.DCFRSolver(game),
    lambda solver: solver.evaluate_and_update_policy(),
    "Python",
  ),
  "mccfr_external": (
    lambda game, seed: pyspiel.ExternalSamplingMCCFRSolver(game, seed),
    lambda solver: solver.run_iteration(),
    "C++",
  ),
  "mccfr_outcome": (
    lambda game, seed: pyspiel.OutcomeSamplingMCCFRSolver(game, seed),
    lambda solver: solver.run_iteration(),
    "C++",
  ),
}
PEERS = tuple(_PEERS)


def run_peer(name: str, game: registry.Game, seconds: float, seed: int = 0) -> dict[str, Any]:
  """OpenSpiel's ``name`` for about ``seconds`` of its own time: {"implementation", "iterations",
  "seconds", "iterations_per_s", "exploitability"} (its average policy, evaluated by OpenSpiel), or
  {"implementation", "error"} where OpenSpiel fails on the game."""
  if name not in _PEERS:
    raise ValueError(f"OpenSpiel has no peer for {name!r}; peers: {list(PEERS)}")
  make, step, implementation = _PEERS[name]
  os_game = bridge.openspiel_game(game)
  try:
    solver, iterations, clock = make(os_game, seed), 0, 0.0
    while clock < seconds:
      start = time.perf_counter()
      step(solver)
      clock += time.perf_counter() - start
      iterations += 1
    policy = solver.average_policy()
    value = (
      pyspiel.exploitability(os_game, policy)
      if implementation == "C++"
      else openspiel_exploitability.exploitability(os_game, policy)
    )
  except pyspiel.SpielError as error:
    return {"implementation": implementation, "error": str(error).splitlines()[0]}
  return {
    "implementation": implementation,
    "iterations": iterations,
    "seconds": clock,
    "iterations_per_s": iterations / clock,
    "exploitability": float(value),
  }


def openspiel_psro(
  game: registry.Game, iterations: int, sims_per_entry: int = 1000, seed: int = 0
) -> list[float]:
  """OpenSpiel's PSRO (C++ exact best-response oracle, Nash meta-solver by linear programming, each
  payoff estimated from ``sims_per_entry`` games) from uniform policies: the exploitability of its
  meta-strategy mixture after each iteration. Its payoff sampling draws from Python's ``random``
  (episodes) and NumPy's global generator (strategy selection), both seeded here with ``seed``, so
  a run is reproducible. Needs the dev extras (cvxpy, ecos, networkx)."""
  from open_spiel.python import policy as openspiel_policy  # pylint: disable=import-outside-toplevel
  from open_spiel.python.algorithms import policy_aggregator  # pylint: disable=import-outside-toplevel
  from open_spiel.python.algorithms.psro_v2 import best_response_oracle  # pylint: disable=import-outside-toplevel
  from open_spiel.python.algorithms.psro_v2 import psro_v2  # pylint: disable=import-outside-toplevel
  from open_spiel.python.algorithms.psro_v2 import strategy_selectors  # pylint: disable=import-outside-toplevel

  random.seed(seed)
  np.random.seed(seed)
  os_game = bridge.openspiel_game(game)
  solver = psro_v2.PSROSolver(
    os_game,
    best_response_oracle.BestResponseOracle(game=os_game, best_response_backend="cpp"),
    initial_policies=[openspiel_policy.TabularPolicy(os_game) for _ in range(2)],
    meta_strategy_method="nash",
    sims_per_entry=sims_per_entry,
    training_strategy_selector=strategy_selectors.probabilistic,
    number_policies_selected=1,
    sample_from_marginals=False,
    symmetric_game=False,
  )
  curve = []
  for _ in range(iterations):
    solver.iteration()
    mixture = policy_aggregator.PolicyAggregator(os_game).aggregate(
      range(2), solver.get_policies(), solver.get_meta_strategies()
    )
    curve.append(float(openspiel_exploitability.exploitability(os_game, mixture)))
  return curve
