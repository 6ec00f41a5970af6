"""Full-game CFR, CFR+, Linear CFR and DCFR on the public tree: exact passes, one compiled loop.

Each iteration is OpenSpiel's ``_DCFRSolver`` step in range form: with alternating updates player 0
is updated from a full pass, then player 1 from a pass that sees player 0's new policy; the update is
:func:`sog.baselines.regret.accumulate` with the chosen scheme. CFR+ here is the same algorithm as
:mod:`sog.search.cfr` (the library's solver), written through the family's update.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sog.baselines import regret
from sog.games import registry
from sog.search import cfr
from sog.search import solver as solver_lib


def iteration(levels: cfr.Levels, state: cfr.CFRState, root_ranges: jax.Array,
              scheme: regret.Accumulation, updates: cfr.Updates, acting: jax.Array) -> cfr.CFRState:
  """One iteration of the family's member ``scheme`` (exact instantaneous regrets)."""
  t = (state.iteration + 1).astype(root_ranges.dtype)
  groups = ((0,), (1,)) if updates == "alternating" else ((0, 1),)
  for group in groups:
    policy = cfr.current_policy(levels, state)
    ranges, values, q_values, _ = cfr.evaluate_pass(levels, policy, root_ranges)
    for player in group:
      regrets, sums = regret.accumulate(
          scheme, state.regrets, state.policy_sums, cfr.instant_regrets(levels, values, q_values,
                                                                       player),
          cfr.own_ranges(levels, ranges, player) * policy, acting[player], t)
      state = state.replace(regrets=regrets, policy_sums=sums)
  return state.replace(iteration=state.iteration + 1)


_NAMES = {"cfr": "cfr", "cfr_plus": "cfr_plus", "linear": "linear_cfr", "dcfr": "dcfr"}


class TabularCFR:
  """A member of the CFR family run on a whole game (:data:`sog.baselines.regret.ACCUMULATIONS`).

  Args:
    game: the game.
    scheme: ``"cfr"``, ``"cfr_plus"``, ``"linear"``, ``"dcfr"`` or an :class:`Accumulation`.
    updates: ``"alternating"`` (OpenSpiel's, the default) or ``"simultaneous"``.
  """

  def __init__(self, game: registry.Game, scheme: str | regret.Accumulation = "linear",
               updates: str = "alternating", dtype=jnp.float32):
    self.game = game
    self.name = _NAMES.get(scheme, "cfr_family") if isinstance(scheme, str) else "cfr_family"
    self.scheme = regret.accumulation(scheme)
    self.updates = cfr.check_updates(updates)
    self.levels = cfr.device_levels(game.tree, dtype)
    self._root_ranges = jnp.asarray(game.tree.root_ranges, dtype)
    self._run = jax.jit(self._loop)

  def _loop(self, levels: cfr.Levels, state: cfr.CFRState, root_ranges: jax.Array,
            iterations: jax.Array) -> cfr.CFRState:
    acting = cfr.acting_masks(levels)
    return jax.lax.fori_loop(0, iterations, lambda _, s: iteration(
        levels, s, root_ranges, self.scheme, self.updates, acting), state)

  def init(self, seed: int = 0) -> cfr.CFRState:
    """The state before the first iteration (``seed`` is unused: the algorithm is deterministic)."""
    del seed
    return cfr.init_state(self.levels)

  def run(self, state: cfr.CFRState, iterations: int) -> cfr.CFRState:
    """``iterations`` more iterations (one compilation serves every count)."""
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    return self._run(self.levels, state, self._root_ranges, jnp.int32(iterations))

  def iterations(self, state: cfr.CFRState) -> int:
    return int(state.iteration)

  def average_policy(self, state: cfr.CFRState) -> np.ndarray:
    """The average policy [N, S, A] (float64) over the game's public states."""
    return solver_lib.tree_policy(self.game.tree, cfr.average_policy(self.levels, state))

  def current_policy(self, state: cfr.CFRState) -> np.ndarray:
    return solver_lib.tree_policy(self.game.tree, cfr.current_policy(self.levels, state))

