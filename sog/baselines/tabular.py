"""Full-game CFR, CFR+, Linear CFR and DCFR on the public tree: exact passes, one compiled loop.

Each iteration is OpenSpiel's ``_DCFRSolver`` step in range form: :func:`sog.search.cfr.run`'s loop
(with alternating updates player 0 is updated from a full pass, then player 1 from a pass that sees
player 0's new policy) with :func:`family_update` in place of CFR+'s update, that is
:func:`sog.baselines.regret.accumulate` with the chosen scheme.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sog.baselines import regret
from sog.games import registry
from sog.search import cfr
from sog.search import solver as solver_lib


def family_update(scheme: regret.Accumulation) -> cfr.PlayerUpdate:
  """:func:`sog.search.cfr.update_player`'s place for the family's member ``scheme``: exact
  instantaneous regrets and own-range-weighted policies into :func:`regret.accumulate`."""

  def update(levels, state, acting, policy, ranges, values, q_values, player, t):
    regrets, sums = regret.accumulate(
      scheme,
      state.regrets,
      state.policy_sums,
      cfr.instant_regrets(levels, values, q_values, player),
      cfr.own_ranges(levels, ranges, player) * policy,
      acting,
      t,
    )
    return state.replace(regrets=regrets, policy_sums=sums)

  return update


_NAMES = {"cfr": "cfr", "cfr_plus": "cfr_plus", "linear": "linear_cfr", "dcfr": "dcfr"}


class TabularCFR:
  """A member of the CFR family run on a whole game (:data:`sog.baselines.regret.ACCUMULATIONS`).

  Args:
    game: the game.
    scheme: ``"cfr"``, ``"cfr_plus"``, ``"linear"``, ``"dcfr"`` or an :class:`Accumulation`.
    updates: ``"alternating"`` (OpenSpiel's, the default) or ``"simultaneous"``.
  """

  def __init__(
    self,
    game: registry.Game,
    scheme: str | regret.Accumulation = "linear",
    updates: str = "alternating",
    dtype=jnp.float32,
  ):
    self.game = game
    self.name = _NAMES.get(scheme, "cfr_family") if isinstance(scheme, str) else "cfr_family"
    self.scheme = regret.accumulation(scheme)
    self.updates = cfr.check_updates(updates)
    self.levels = cfr.device_levels(game.tree, dtype)
    self._root_ranges = jnp.asarray(game.tree.root_ranges, dtype)
    self._run = jax.jit(self._loop)

  def _loop(
    self, levels: cfr.Levels, state: cfr.CFRState, root_ranges: jax.Array, iterations: jax.Array
  ) -> cfr.CFRState:
    return cfr.run(
      levels, state, root_ranges, iterations, self.updates, update=family_update(self.scheme)
    )[0]

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
