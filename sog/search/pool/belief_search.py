"""One GT-CFR search on the belief pool as pure functions: ``init``, ``run`` (the focus's expansion,
then phases of CFR+ updates then simulations, one ``fori_loop``), ``finish``; ``search`` chains
them (jit it; to vmap it, give it ``leaf_calls.leaf_batches(frontier_capacity(...), SEARCH_AXIS)``
and vmap with ``axis_name=SEARCH_AXIS``, as :class:`~sog.search.pool.GTCFR` does).

SoG's Algorithm 1 for any :class:`~sog.games.public_game.PublicGame`, grown without enumeration:
the pool holds the public states the search added, each with its pair weights W(s0, s1), the
actor's legal actions per infostate and its edges from its parent
(:mod:`~sog.search.pool.beliefs`); a CFR+ pass costs the grown tree, each node once
(:mod:`~sog.search.pool.belief_cfr`), and values its frontier with one leaf-model call sized by the
frontier (:func:`sog.search.leaf_calls.call_frontier`). The arithmetic, the walks and every random
draw were those of the table search, the engine before it, so the two gave the same search from the
same key (in float64; in float32 their sums of merged infostates' ranges differed in order): its
results are the fixtures in tests/fixtures/table_searches.npz.

A search starts from a :class:`~sog.search.pool.belief_state.BeliefStart`: the pool's root is any
public state with its pair weights (the game's root, :func:`root_start`, or a re-solving search's
s_prev), the branch from there down to the focus is grown first, the safe re-solving gadget
(:mod:`sog.search.gadget`) sets the opponent's root range before each pass, and the walks start at
the focus.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import belief_expand
from sog.search.pool import belief_state
from sog.search.pool import belief_update
from sog.search.pool import beliefs
from sog.search.pool import depth_order
from sog.search.pool import passes


def first_expansion_bound(
  game: public_game.PublicGame, config: search_types.GTCFRConfig, branch_depth: int = 0
) -> int:
  """The most public states a search holds before its first simulation: the root, the children of
  the nodes of a branch of up to ``branch_depth`` moves, and every child of the focus (whatever k:
  the focus is expanded whole)."""
  first = belief_expand.added_at_most(game, dataclasses.replace(config, expansion_k=None))
  return 1 + branch_depth * game.max_children + first


#: The memory a default pool's search state takes at most, where its floor allows
#: (:func:`node_capacity`): 2 GiB.
POOL_BYTES = 2 << 30


def node_capacity(
  game: public_game.PublicGame,
  config: search_types.GTCFRConfig,
  dtype=jnp.float32,
  branch_depth: int = 0,
) -> int:
  """The most public states a search can hold: the root, the children of the nodes of a branch of
  up to ``branch_depth`` moves, the focus's children and every expansion's
  (:func:`~sog.search.pool.belief_expand.added_at_most`), or, where the game's whole public tree is
  smaller than that (:func:`~sog.search.pool.beliefs.whole_tree_size`; a search from any public
  state holds part of it), the tree plus the room a walk that added nothing asks for before it is
  walked again (``added_at_most - 1``, :func:`~sog.search.pool.belief_expand.grow`): every
  expansion of the whole tree then fits and every redraw happens, so the search grows the tree it
  would grow in any larger pool (counted in ``dtype``, the search's).

  A game too large to enumerate is never grown whole, and where its bound's search state would
  take more than :data:`POOL_BYTES` (:func:`state_bytes`; the bound counts every expansion at
  ``max_children``), the pool holds the slots that fit, but at least the root, the branch's
  children and the focus's: a search that fills it goes on with the tree it has."""
  most = belief_expand.added_at_most(game, config)
  smallest = first_expansion_bound(game, config, branch_depth)
  bound = smallest + most * (config.phases * config.simulations_in_phase)
  if not game.enumerable:
    if state_bytes(game, config, bound, jnp.dtype(dtype)) <= POOL_BYTES:
      return bound
    return max(smallest, _slots_within(game, config, jnp.dtype(dtype), POOL_BYTES))
  size = beliefs.whole_tree_size(game, bound, dtype)
  return bound if size is None else min(bound, size + most - 1)


@functools.lru_cache(maxsize=64)
def state_bytes(
  game: public_game.PublicGame,
  config: search_types.GTCFRConfig,
  capacity: int,
  dtype: jax.typing.DTypeLike = jnp.float32,
) -> int:
  """The bytes of a search's state in a pool of ``capacity`` slots (its tree, CFR sums, visits,
  priors and statistics; a leaf model's own state aside), from its shapes."""
  start = root_start(game, public_game.prior_ranges(game), dtype)
  zero = leaf_models.zero_leaf_model()
  shapes = jax.eval_shape(
    lambda: init(game, capacity, zero.apply, zero.params, jax.random.PRNGKey(0), start, config)
  )
  return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))


def _slots_within(
  game: public_game.PublicGame, config: search_types.GTCFRConfig, dtype: jnp.dtype, budget: int
) -> int:
  """The most slots (at least one) whose search state takes at most ``budget`` bytes, as far as
  :func:`state_bytes` tells: extrapolated from two pool sizes, then stepped down while a pool of
  that size takes more (where the rows' cap, :data:`~sog.search.pool.belief_rows.MAX_ROWS`, lifts
  past them a larger pool costs more a slot)."""
  small, large = 1 << 10, 1 << 11
  size = functools.partial(state_bytes, game, config, dtype=dtype)
  per_slot = -(-(size(large) - size(small)) // (large - small))
  slots = max(1, small + (budget - size(small)) // per_slot)
  while slots > 1 and size(slots) > budget:
    slots = max(1, slots * budget // size(slots))
  return slots


def subgame_capacity(
  game: public_game.PublicGame,
  config: search_types.GTCFRConfig,
  subgame_size: int,
  branch_depth: int = 0,
) -> int:
  """The most public states a search holds when its focus's subgame has ``subgame_size`` public
  states (the focus included; known where the game is enumerated): the root, the children of a
  branch of up to ``branch_depth`` moves, the focus's children, the subgame and the room a walk
  that added nothing asks for before it is walked again (``added_at_most - 1``). Every expansion
  then fits and every redraw happens, so the search grows the tree it would grow in any larger
  pool."""
  most = belief_expand.added_at_most(game, config)
  return first_expansion_bound(game, config, branch_depth) + subgame_size + most - 1


def frontier_capacity(capacity: int) -> int:
  """The most frontier leaves a pool of ``capacity`` slots can hold (all but the root)."""
  return max(1, capacity - 1)


def root_start(
  game: public_game.PublicGame, root_ranges: chex.Array, dtype=jnp.float32, branch_depth: int = 0
) -> belief_state.BeliefStart:
  """A plain search from the game's root at ``root_ranges`` [2, S]: no branch (``branch_depth``
  slots of padding), no gadget."""
  return belief_state.BeliefStart(
    state=game.root(),
    weight=jnp.asarray(public_game.root_weight(game), dtype),
    branch=jnp.full(branch_depth, -1, jnp.int32),
    ranges=jnp.asarray(root_ranges, dtype),
    gadget=gadget_lib.disabled(game.max_infostates, dtype),
  )


def state_start(
  game: public_game.PublicGame, state: chex.ArrayTree, dtype=jnp.float32, branch_depth: int = 0
) -> belief_state.BeliefStart:
  """A plain search from ``state``, a public state of a perfect-information game (one infostate per
  player: the state is all either player knows, so W = 1 and both ranges are 1 there, as at the
  game's root)."""
  return root_start(game, public_game.prior_ranges(game), dtype, branch_depth).replace(state=state)


def grow_branch(
  game: public_game.PublicGame,
  tree: beliefs.BeliefTree,
  branch: chex.Array,
  axis_name: str | None = None,
) -> tuple[beliefs.BeliefTree, chex.Array]:
  """``tree`` (a pool holding its root) with every child of the branch's nodes added, from the root
  down the child slots ``branch`` [D] (-1 past the end), and the slot the branch ends at (-1 where
  a slot names no child: the branch leaves the game; ``axis_name``: the vmap axis of a batch of
  searches, :func:`~sog.search.pool.beliefs.add_children`'s)."""

  def step(i, carry):
    tree, node = carry
    moves = (branch[i] >= 0) & (node >= 0)
    at = jnp.maximum(node, 0)
    tree = beliefs.add_children(game, tree, at, moves, axis_name=axis_name)
    return tree, jnp.where(moves, tree.children[at, jnp.maximum(branch[i], 0)], node)

  if not branch.shape[0]:  # a plain search (static)
    return tree, jnp.int32(0)
  return jax.lax.fori_loop(0, branch.shape[0], step, (tree, jnp.int32(0)))


def init(
  game: public_game.PublicGame,
  capacity: int,
  apply,
  params,
  rng: chex.PRNGKey,
  start: belief_state.BeliefStart,
  config: search_types.GTCFRConfig,
  leaf_state: Any = (),
  axis_name: str | None = None,
) -> belief_state.BeliefSearchState:
  """The initial tree in a pool of ``capacity`` slots (the start's root and the branch with every
  child of its nodes; with k < all also the focus's children, with ``open_chance="with_parent"``
  the outcomes of the chance nodes among them, which with k = all :func:`run` adds first) and the
  focus's prior (one leaf-model call at its ranges under the uniform policy, from
  ``leaf_state``; ``axis_name``: the vmap axis of a batch of searches, whose expansions here then
  loop the batch's most steps, as the walks' do).

  ``apply`` here, in :func:`run` and in :func:`finish` is the leaf model's
  (:class:`~sog.search.leaf_models.LeafModel`); it reads the pool (``kind``, ``legal``, ``valid``,
  ``encoding`` at slots)."""
  dtype = jnp.dtype(start.weight.dtype)
  tree = beliefs.empty(game, capacity, dtype, start.state, start.weight)
  tree, focus = grow_branch(game, tree, start.branch, axis_name)
  start = start.replace(ranges=start.ranges.astype(dtype) * tree.valid[0])
  gadget = gadget_lib.init_state(start.gadget)
  uniform = belief_expand.uniform_prior(tree.legal).astype(dtype)
  root_ranges = gadget_lib.root_ranges(start.gadget, gadget, start.ranges, tree.valid[0])
  ranges = belief_cfr.reach_down(tree, belief_cfr.rows_of(tree, uniform), root_ranges).out
  at = focus[None]
  out = apply(params, tree, at, ranges[at], jnp.ones(1, bool), leaf_state)
  S = start.ranges.shape[-1]
  zeros = jnp.zeros(tree.legal.shape, dtype)
  focus_prior = leaf_calls.prior_policy(tree, at, out.logits, config.prior_temperature)[0]
  state = belief_state.BeliefSearchState(
    tree=tree,
    cfr=belief_cfr.init_state(tree),
    start=start,
    gadget=gadget,
    focus=focus,
    subgame_from=tree.num_nodes,
    visits=zeros,
    prior=zeros.at[focus].set(focus_prior),
    action_values=zeros,
    ranges=jnp.zeros((tree.capacity, 2, S), dtype),
    values=jnp.zeros((tree.capacity, 2, S), dtype),
    pushed=jnp.zeros((tree.capacity, 2, S), dtype),
    passed=jnp.zeros((tree.capacity, 2, S), dtype),
    leaf_state=out.state,
    recorded_nodes=jnp.int32(0),
    prior_leaf_state=out.state,
    queries=search_types.QuerySample(
      nodes=jnp.zeros(config.query_samples, jnp.int32),
      ranges=jnp.zeros((config.query_samples, 2, S), dtype),
      keys=jnp.full(config.query_samples, jnp.inf, dtype),
    ),
    leaf_evaluations=jnp.int32(1),
    leaf_calls=jnp.int32(1),
    prior_calls=jnp.int32(0),
    interior_since=jnp.zeros(tree.capacity, jnp.int32),
    walks=jnp.int32(0),
    growing_walks=jnp.int32(0),
    rng=rng,
  )
  if belief_expand.opens_by_walk(game, config):
    return state  # the focus is expanded by the first phase's walk (:func:`run`)
  prior = belief_expand.LeafPrior(apply, params, config.prior_temperature)
  return belief_expand.expand(game, state, focus, config, prior, axis_name=axis_name)


def run(
  game: public_game.PublicGame,
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
) -> belief_state.BeliefSearchState:
  """The focus's expansion, then the config's phases of CFR+ updates then expansion simulations,
  in one loop whose step i is expansion phase i (i = 0: the focus's expansion,
  :func:`~sog.search.pool.belief_expand.grow`) then phase i + 1's updates (none after the last):
  the walks' code also opens the focus, so the program holds one copy of it."""
  scale = game.utility_scale
  prior = belief_expand.LeafPrior(apply, params, config.prior_temperature)

  def step(i, state):
    state = belief_expand.grow(game, state, config, prior, batches.axis_name, opening=i == 0)
    return jax.lax.fori_loop(
      0,
      jnp.where(i < config.phases, config.updates_per_phase, 0),
      lambda j, s: belief_update.cfr_update(
        apply, params, s, config, batches, scale, j == config.updates_per_phase - 1
      ),
      state,
    )

  return jax.lax.fori_loop(0, config.phases + 1, step, state)


def finish(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  batches: leaf_calls.LeafBatches,
) -> belief_state.BeliefSearchResult:
  """The search's answer: the average policy, its ranges and values in the final tree (and both
  players' best-response values; the opponent's root range the gadget's average, when it is on),
  the policy and values at the focus."""
  tree, start = state.tree, state.start
  average = belief_cfr.average_policy(tree, state.cfr)
  policy = belief_cfr.rows_of(tree, average)
  order = depth_order.depth_order(tree, batches.axis_name)
  root_ranges = gadget_lib.average_range(start.gadget, state.gadget, start.ranges, tree.valid[0])
  ranges = belief_cfr.reach_down(tree, policy, root_ranges, order).out
  frontier = passes.frontier(tree)
  called = leaf_calls.call_frontier(
    tree, apply, params, frontier, ranges, batches, state.leaf_state
  )
  values, best = jax.vmap(
    lambda best_response: (
      belief_cfr.values_up(
        tree,
        policy,
        ranges,
        order,
        best_response,
        arrays=belief_cfr.fresh_arrays(tree, ranges, called.values),
      )[0].out
    )
  )(jnp.array([False, True]))
  return belief_state.BeliefSearchResult(
    focus_policy=average[state.focus],
    focus_values=values[state.focus],
    focus=state.focus,
    tree=tree,
    average_policy=average,
    policy_sums=state.cfr.policy_sums,
    ranges=ranges,
    values=values,
    best_response_values=best,
    queries=state.queries,
    leaf_evaluations=state.leaf_evaluations + frontier.sum(dtype=jnp.int32),
    leaf_calls=state.leaf_calls + called.called,
    prior_calls=state.prior_calls,
    walks=state.walks,
    growing_walks=state.growing_walks,
    complete=belief_expand.fully_grown(state),
  )


def search(
  game: public_game.PublicGame,
  capacity: int,
  apply,
  params,
  rng: chex.PRNGKey,
  start: belief_state.BeliefStart,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  leaf_state: Any = (),
) -> belief_state.BeliefSearchResult:
  """One GT-CFR search from ``start`` in a pool of ``capacity`` slots: init, run, finish."""
  state = init(game, capacity, apply, params, rng, start, config, leaf_state, batches.axis_name)
  state = run(game, apply, params, state, config, batches)
  return finish(apply, params, state, batches)
