"""The exact oracle on the belief pool: each frontier leaf's whole subgame solved by CFR+ at the
leaf's current ranges, on a pool grown from the game's functions (nothing enumerated).

The tables' oracle (:func:`sog.search.leaf_models.exact_leaf_model`, for ReBeL's solves and the
exact solver's) solves the subgames below a call's leaves together, in one CFR+ run over the search
tables with each leaf's ranges entering at its node. Here the tables are a second pool, the search
root's whole subgame grown once when the search starts (the oracle's state): a leaf of the search's
pool is found there by its path of child slots, and one run over that pool solves every leaf's
subgame together, with the same arithmetic (:mod:`~sog.search.pool.belief_cfr`'s passes, ranges
entering at the leaves). The same tremble, warm start and policy prior as the tables' oracle's; it
returns no policy sums below the leaves (the pool search does not average the oracle's strategy
into its own).

Slow, as the tables' oracle: a call costs ``iterations`` double passes over the root's whole
subgame. For tests, soundness checks and the protocol's exact rows on games small enough to grow
whole.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.games import registry
from sog.search import leaf_models
from sog.search.pool import belief_cfr
from sog.search.pool import beliefs
from sog.search.pool import depth_order


@chex.dataclass(frozen=True)
class OracleState:
  """The oracle's whole subgame and its CFR+ run (continued by each call when warm-started).

  Attributes:
    tree: the search root's whole subgame on a pool.
    order: its :class:`~sog.search.pool.depth_order.DepthOrder` (fixed).
    cfr: the CFR+ run's regrets, policy sums and iteration over it.
  """

  tree: beliefs.BeliefTree
  order: depth_order.DepthOrder
  cfr: belief_cfr.CFRState


def twin_slots(tree: beliefs.BeliefTree, whole: beliefs.BeliefTree) -> chex.Array:
  """[P] the slot of ``whole`` holding the public state at each slot of ``tree`` (both pools grown
  from the same root; -1 where ``whole`` lacks it, and for ``tree``'s free slots): depth by depth
  from the root, a node's twin is its parent twin's child in the node's child slot."""
  P = tree.capacity
  twins = jnp.where(jnp.arange(P) == 0, 0, -1).astype(jnp.int32)

  def level(depth, twins):
    parent_twin = twins[jnp.maximum(tree.parent, 0)]
    child = whole.children[jnp.maximum(parent_twin, 0), jnp.maximum(tree.slot, 0)]
    here = tree.used & (tree.depth == depth) & (parent_twin >= 0)
    return jnp.where(here, child, twins)

  return jax.lax.fori_loop(1, tree.height + 1, level, twins)


def exact_leaf_model(
  game: public_game.PublicGame | registry.Game,
  iterations: int = 200,
  tremble: float = 1e-3,
  warm_start: bool = False,
  policy_prior: bool = False,
  capacity: int | None = None,
) -> leaf_models.LeafModel:
  """The exact oracle for searches of ``game`` on the belief pool (the tables' oracle's arguments:
  ``iterations`` of CFR+ a call, solved at ranges trembled by ``tremble`` and valued at the true
  ones, ``warm_start`` continuing one run across a search's calls, ``policy_prior`` the solve's
  average policy as the prior). ``capacity``: the slots of the oracle's pool, at least the public
  states of the largest subgame a search roots at (default: the game's whole tree, counted by
  growing it, up to 8,192 public states). Where the pool cannot hold a search's subgame, or lacks
  a leaf, the leaf's values are NaN."""
  if iterations < 1:
    raise ValueError(f"oracle iterations must be >= 1, got {iterations}")
  if tremble < 0:
    raise ValueError(f"tremble must be >= 0, got {tremble}")
  game = game.public_game if isinstance(game, registry.Game) else game
  if capacity is not None and (not isinstance(capacity, int) or capacity < 1):
    raise ValueError(f"exact_leaf_model: capacity must be None or an int >= 1, got {capacity!r}")
  for at_most in (1 << 10, 1 << 13):
    if capacity is None:
      capacity = beliefs.whole_tree_size(game, at_most)
  if capacity is None:
    raise ValueError(
      f"exact_leaf_model: {game.name} has more than 8,192 public states; the oracle solves whole "
      "subgames on a pool: give a capacity that holds the largest subgame a search roots at"
    )

  def init(tree: beliefs.BeliefTree, start) -> OracleState:
    root = (None, None) if start is None else (start.state, start.weight)
    dtype = tree.weight.dtype
    whole = beliefs.grow_all(game, beliefs.empty(game, capacity, dtype, *root, every_row=True))
    return OracleState(
      tree=whole,
      order=depth_order.depth_order(whole),
      cfr=belief_cfr.init_state(whole),
    )

  def apply(params, tree, nodes, ranges, mask, state: OracleState) -> leaf_models.LeafOutput:
    del params
    whole, order = state.tree, state.order
    twins = twin_slots(tree, whole)[nodes]
    lost = (twins < 0) | (whole.num_nodes > whole.capacity)  # the pool lacks the leaf's subgame
    twins = jnp.maximum(twins, 0)
    run_from = state.cfr if warm_start else belief_cfr.init_state(whole)

    def solve(run):
      P = whole.capacity
      inside = jnp.zeros(P, bool).at[twins].max(mask)
      rows = mask[:, None, None]
      placed = (
        jnp.zeros((P, *ranges.shape[1:]), ranges.dtype).at[twins].add(jnp.where(rows, ranges, 0.0))
      )
      shaken = leaf_models.trembled(ranges, whole.valid[twins], tremble)
      shaken = jnp.zeros_like(placed).at[twins].add(jnp.where(rows, shaken, 0.0))
      zero_root = jnp.zeros(ranges.shape[1:], ranges.dtype)
      run = jax.lax.fori_loop(
        0,
        iterations,
        lambda _, s: belief_cfr.iteration(
          whole, s, zero_root, "alternating", order, (inside, shaken)
        ),
        run,
      )
      policy = belief_cfr.rows_of(whole, belief_cfr.average_policy(whole, run))
      true_ranges = belief_cfr.reach_down(whole, policy, zero_root, order, (), (inside, placed)).out
      values = belief_cfr.values_up(whole, policy, true_ranges, order=order)[0].out
      return values[twins], run

    def nothing(run):
      return jnp.zeros_like(ranges), run

    values, run = jax.lax.cond(mask.any(), solve, nothing, run_from)
    values = jnp.where(lost[:, None, None], jnp.nan, values)
    logits = leaf_models.uniform_logits(tree, nodes)
    if policy_prior:  # the actor's row is the one PUCT reads; both rows carry it
      average = belief_cfr.average_policy(whole, run)[twins]
      logits = jnp.where(logits > -jnp.inf, jnp.log(jnp.maximum(average, 1e-12))[:, None], logits)
    kept = run if warm_start else state.cfr
    return leaf_models.LeafOutput(values, logits, state=state.replace(cfr=kept))

  return leaf_models.LeafModel(init, apply, game=game.name)
