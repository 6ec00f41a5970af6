"""Monte Carlo CFR (Lanctot et al. 2009) on the public tree: external and outcome sampling, in
vector form over the update player's private states, with any regret accumulation of the CFR family.

One sample for update player i fixes a *world*: the opponent's private state (drawn from its prior),
one outcome at every public chance node (drawn from its public probabilities), and one action at
every opponent infostate (drawn from the opponent's current policy). Outcome sampling also draws one
action at every infostate of player i, from the exploring policy sigma' = eps * uniform +
(1 - eps) * sigma_i. The world is then evaluated by one pass over the public tree in range form:

  * the opponent's range is one-hot on its drawn private state and follows its drawn actions, and
    the tables' chance weights keep only the drawn outcomes, each with weight 1 (= p / q): this is
    external sampling, whose sampled counterfactual values of player i are exact for the world;
  * outcome sampling also weighs player i's own edges by 1[a = a*] / sigma'(a*) on the way up (its
    action values: the sampled child over its sampling probability, 0 elsewhere; its values: the sum
    of sigma_i(a) times those) and scales each regret by 1 / q_i, the product of sigma'(a*) above
    the infostate (OpenSpiel's opp_reach / sample_reach with on-policy opponent and chance).

Every factor is linear in what it replaces, so the sampled instantaneous regrets are unbiased for
CFR's, for every private state of player i at once (the *vector form* of Johanson et al. 2012; the
scalar form of OpenSpiel also samples player i's own private state). The average policy is updated
exactly with player i's own reach (OpenSpiel's "full" averaging, here free of sampling noise).

Cost: a sample is one pass over the whole public tree (the tables are fixed-shape; paths the world
does not reach carry zeros), so an iteration costs what a CFR iteration costs; ``samples`` worlds
per player and iteration run as one batch. MCCFR is here for its dynamics, the comparison Pluribus'
blueprint makes, not as a faster solver of games this small.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.baselines import regret
from sog.games import propagation
from sog.games import public_game
from sog.games import registry
from sog.search import cfr
from sog.search import solver as solver_lib

SAMPLINGS = ("external", "outcome")


@chex.dataclass(frozen=True)
class MCCFRState:
  cfr: cfr.CFRState
  rng: chex.PRNGKey


@dataclasses.dataclass(frozen=True)
class _ChanceTables:
  """Static facts of the public chance nodes, per level: which inner nodes are chance nodes, the
  probabilities of their A * K child slots, and which nodes of the level have a chance parent."""

  is_chance: tuple[np.ndarray, ...]  # per level [inner] bool
  slot_probability: tuple[np.ndarray, ...]  # per level [inner, A * K]
  chance_parent: tuple[np.ndarray, ...]  # per level [n] bool


def _chance_tables(tree) -> _ChanceTables:
  is_chance, probabilities, chance_parent = [], [], []
  for d, level in enumerate(tree.levels):
    start = tree.level_starts[d]
    nodes = start + np.arange(level.inner)
    chance = tree.kind[nodes] == public_game.CHANCE
    child = tree.up_child[nodes]  # [inner, A, K]
    probability = np.where(child >= 0, tree.chance_probability[np.maximum(child, 0)], 0.0)
    probability[~chance] = 0.0
    probability[~chance, 0, 0] = 1.0  # a harmless draw at the nodes that are not chance nodes
    probabilities.append(probability.reshape(level.inner, child.shape[1] * child.shape[2]))
    is_chance.append(chance)
    parents = tree.parent[start + np.arange(level.size)]
    chance_parent.append((parents >= 0) & (tree.kind[np.maximum(parents, 0)] == public_game.CHANCE))
  return _ChanceTables(tuple(is_chance), tuple(probabilities), tuple(chance_parent))


def _rows_of(levels: cfr.Levels, player: int) -> chex.Array:
  """[M, 1, 1] bool: the inner nodes where ``player`` acts."""
  return jnp.concatenate([level.kind[: level.inner] == player for level in levels])[:, None, None]


def _draw(rng: chex.PRNGKey, policy: chex.Array) -> chex.Array:
  """One action per row of a policy [..., A], as one-hot rows."""
  with np.errstate(divide="ignore"):
    logits = jnp.log(policy)
  return jax.nn.one_hot(jax.random.categorical(rng, logits), policy.shape[-1], dtype=policy.dtype)


def sampled_levels(
  levels: cfr.Levels,
  chance: _ChanceTables,
  rng: chex.PRNGKey,
  player: int,
  own_factor: list[chex.Array] | None = None,
) -> cfr.Levels:
  """The tables of one world's chance draws for update player ``player``.

  At every chance node one child is drawn with its public probability q; the opponent's range enters
  it weighted 1 / q and the others get none, so every value below (linear in that range) is unbiased
  for its full-tree counterpart, and the chance node's value (the tables' p-weighted sum) too.
  ``player``'s own range only follows the draw (it keeps meaning 1 / q_i under outcome sampling).
  ``own_factor`` (per level [inner, S, A]) multiplies ``player``'s own edges at its nodes on the way
  up (outcome sampling's 1[a = a*] / sigma'(a*)).
  """
  keys = jax.random.split(rng, len(levels))
  out, weight_next = [], None
  for d, level in enumerate(levels):
    if weight_next is not None:
      weight = jnp.where(chance.chance_parent[d], weight_next, 1.0)  # opponent: 1[drawn] / q
      follows = (weight > 0).astype(weight.dtype)  # player: 1[drawn]
      scale = jnp.stack([follows, weight] if player == 0 else [weight, follows], axis=1)
      level = level.replace(down_weight=level.down_weight * scale[:, :, None, None])
    k = level.inner
    weight_next = None
    if k and d + 1 < len(levels):
      logits = jnp.log(chance.slot_probability[d])
      drawn = jax.nn.one_hot(
        jax.random.categorical(keys[d], logits), logits.shape[-1], dtype=level.down_weight.dtype
      )
      inverse = (
        jnp.where(drawn > 0, 1.0 / jnp.where(drawn > 0, chance.slot_probability[d], 1.0), 0.0)
        * chance.is_chance[d][:, None]
      )
      weight_next = (
        jnp.zeros(levels[d + 1].size, level.down_weight.dtype)
        .at[level.child_index[:k]]
        .max(inverse.reshape(level.child_index[:k].shape))
      )
      if own_factor is not None and own_factor[d] is not None:
        factor = jnp.where((level.kind[:k] == player)[:, None, None], own_factor[d], 1.0)
        up = level.up_weight[:k].at[:, :, :, player].multiply(factor.transpose(0, 2, 1)[:, :, None])
        level = level.replace(up_weight=jnp.concatenate([up, level.up_weight[k:]]))
    out.append(level)
  return tuple(out)


def sampled_regrets(
  levels: cfr.Levels,
  chance: _ChanceTables,
  policy: chex.Array,
  root_ranges: chex.Array,
  path_weight: chex.Array,
  rng: chex.PRNGKey,
  player: int,
  sampling: str,
  exploration: float,
) -> chex.Array:
  """One world's sampled instantaneous regrets [M, S, A] of ``player`` (unbiased for CFR's).

  ``path_weight`` [M, S, 1] is the player's range at the inner nodes if every own legal action had
  weight 1: the prior mass of all own paths into an infostate (more than one where they merge, as
  Mr X's do). Outcome sampling scales the regrets by the player's range under its importance weights
  (the prior-weighted 1 / q_i of the drawn path) over it, so merged paths are not counted twice.
  """
  opponent = 1 - player
  k_private, k_opponent, k_own, k_chance = jax.random.split(rng, 4)
  legal = cfr.flat_legal(levels)
  down = jnp.where(_rows_of(levels, opponent), _draw(k_opponent, policy), policy)
  own_factor = None
  if sampling == "outcome":
    uniform = legal / legal.sum(-1, keepdims=True)
    explore = exploration * uniform + (1.0 - exploration) * policy
    weight = _draw(k_own, explore) / jnp.where(legal, explore, 1.0)
    down = jnp.where(_rows_of(levels, player), weight, down)
    own_factor = cfr.per_level_policy(levels, weight)
  world = sampled_levels(levels, chance, k_chance, player, own_factor)
  prior = root_ranges[opponent] / root_ranges[opponent].sum()
  drawn = (
    jax.nn.one_hot(
      jax.random.categorical(k_private, jnp.log(prior)), prior.shape[-1], dtype=root_ranges.dtype
    )
    * root_ranges[opponent].sum()
  )
  own = root_ranges[player]
  root = jnp.stack([own, drawn] if player == 0 else [drawn, own])
  ranges = propagation.reach_down(world, cfr.per_level_policy(levels, down), root, jnp)
  values, q_values = propagation.values_up(world, cfr.per_level_policy(levels, policy), ranges, jnp)
  instant = cfr.instant_regrets(levels, values, q_values, player)
  if sampling == "outcome":
    instant = (
      instant
      * cfr.own_ranges(levels, ranges, player)
      / jnp.where(path_weight > 0, path_weight, 1.0)
    )
  return instant


class MCCFR:
  """External- or outcome-sampling MCCFR with a CFR-family accumulation, alternating updates.

  Args:
    game: the game.
    sampling: ``"external"`` or ``"outcome"``.
    scheme: the regret accumulation (:data:`sog.baselines.regret.ACCUMULATIONS`); ``"linear"`` is
      Pluribus' blueprint (Linear CFR's discount), ``"cfr"`` the textbook MCCFR.
    samples: worlds per player and iteration, averaged (1: the textbook algorithm).
    exploration: outcome sampling's eps (OpenSpiel's default 0.6).
  """

  def __init__(
    self,
    game: registry.Game,
    sampling: str = "external",
    scheme: str | regret.Accumulation = "linear",
    samples: int = 1,
    exploration: float = 0.6,
    dtype=jnp.float32,
  ):
    if sampling not in SAMPLINGS:
      raise ValueError(f"unknown MCCFR sampling {sampling!r}; valid: {list(SAMPLINGS)}")
    if samples < 1:
      raise ValueError(f"samples must be >= 1, got {samples}")
    if not 0.0 < exploration <= 1.0:
      raise ValueError(f"exploration must be in (0, 1], got {exploration}")
    self.game = game
    self.sampling = sampling
    self.scheme = regret.accumulation(scheme)
    self.samples = samples
    self.exploration = exploration
    self.levels = cfr.device_levels(game.tree, dtype)
    self.chance = _chance_tables(game.tree)
    self._root_ranges = jnp.asarray(game.tree.root_ranges, dtype)
    every_action = cfr.flat_legal(self.levels).astype(dtype)
    paths = propagation.reach_down(
      self.levels, cfr.per_level_policy(self.levels, every_action), self._root_ranges, jnp
    )
    self.path_weight = jnp.stack([cfr.own_ranges(self.levels, paths, p) for p in (0, 1)])
    self._run = jax.jit(self._loop)

  @property
  def name(self) -> str:
    return f"mccfr_{self.sampling}"

  def regrets(
    self, levels: cfr.Levels, policy: chex.Array, rng: chex.PRNGKey, player: int
  ) -> chex.Array:
    """The mean of ``samples`` worlds' sampled instantaneous regrets of ``player``."""
    one = lambda key: sampled_regrets(  # noqa: E731
      levels,
      self.chance,
      policy,
      self._root_ranges,
      self.path_weight[player],
      key,
      player,
      self.sampling,
      self.exploration,
    )
    return jax.vmap(one)(jax.random.split(rng, self.samples)).mean(0)

  def _iteration(self, levels: cfr.Levels, state: MCCFRState, acting: chex.Array) -> MCCFRState:
    inner = state.cfr
    t = (inner.iteration + 1).astype(self._root_ranges.dtype)
    rng, *keys = jax.random.split(state.rng, 3)
    for player in (0, 1):
      policy = cfr.current_policy(levels, inner)
      own = propagation.reach_down(
        levels, cfr.per_level_policy(levels, policy), self._root_ranges, jnp
      )
      regrets, sums = regret.accumulate(
        self.scheme,
        inner.regrets,
        inner.policy_sums,
        self.regrets(levels, policy, keys[player], player),
        cfr.own_ranges(levels, own, player) * policy,
        acting[player],
        t,
      )
      inner = inner.replace(regrets=regrets, policy_sums=sums)
    return MCCFRState(cfr=inner.replace(iteration=inner.iteration + 1), rng=rng)

  def _loop(self, levels: cfr.Levels, state: MCCFRState, iterations: jax.Array) -> MCCFRState:
    acting = cfr.acting_masks(levels)
    return jax.lax.fori_loop(0, iterations, lambda _, s: self._iteration(levels, s, acting), state)

  def init(self, seed: int = 0) -> MCCFRState:
    return MCCFRState(cfr=cfr.init_state(self.levels), rng=jax.random.PRNGKey(seed))

  def run(self, state: MCCFRState, iterations: int) -> MCCFRState:
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    return self._run(self.levels, state, jnp.int32(iterations))

  def iterations(self, state: MCCFRState) -> int:
    return int(state.cfr.iteration)

  def average_policy(self, state: MCCFRState) -> np.ndarray:
    return solver_lib.tree_policy(self.game.tree, cfr.average_policy(self.levels, state.cfr))
