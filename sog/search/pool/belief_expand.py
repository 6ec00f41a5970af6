"""GT-CFR's expansion phase on the belief pool: simulations that draw a world state at the focus
(the root of a plain search), walk it down the grown tree by pi_select at the actor's infostate
(chance by its probabilities given the world state), and add the children of k actions where the
walk leaves the tree: at a frontier leaf, or at an interior node through an action not added yet
(k = all, every public child, is SoG's expansion in imperfect-information games; k = 1 in
perfect-information ones).

The walks were the table search's, the engine before this one, step for step and key for key: the
same world draw, the same pi_select (:func:`sog.search.walks.pi_select`), the same chance draw in
the game's outcome order, so a search on the pool grew the tree the table search marked, in
another order of nodes (its results are the fixtures in tests/fixtures/table_searches.npz).
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import batch_axis
from sog.search import leaf_calls
from sog.search import types as search_types
from sog.search import walks
from sog.search.pool import belief_state
from sog.search.pool import beliefs
from sog.search.pool import passes
from sog.search.pool import worlds


def uniform_prior(legal: chex.Array) -> chex.Array:
  """Uniform over each row's legal actions (zero rows in free slots, where nothing is legal)."""
  count = legal.sum(-1, keepdims=True)
  return jnp.where(count > 0, legal / jnp.maximum(count, 1), 0.0)


class LeafPrior(NamedTuple):
  """Where an expansion takes a node's prior from: the search's leaf model (``apply``, a
  :class:`~sog.search.leaf_models.LeafModel`'s, with ``params``) and SoG's prior temperature T."""

  apply: Callable
  params: Any
  temperature: float


def node_prior(
  prior: LeafPrior,
  state: belief_state.BeliefSearchState,
  node: chex.Array,
  wanted: chex.Array = True,
  axis_name: str | None = None,
) -> tuple[chex.Array, chex.Array]:
  """[S, A] the prior of ``node`` as an expansion makes it interior, and whether the leaf model was
  called for it (a bool scalar: this search's call, also in a vmapped batch, where the call runs
  for every search while one of them makes it). The prior: where
  the node was a frontier leaf of the last pass that recorded the prior (a slot below
  ``state.recorded_nodes``), the actor's softmax(logits / T) over its legal actions from the leaf
  model at the node's ranges of that pass, from the state that pass's call started from (the
  logits that call gave the node, computed for it alone); at the focus before any such pass, the
  prior ``init``'s call gave it; elsewhere (a node added since, and chance nodes and terminals,
  which no walk reads a prior at) uniform over the legal actions. The leaf model is called only
  where the prior is ``wanted`` (a bool, possibly traced) at such a node, and in a vmapped batch
  of searches (``axis_name``) where it is for one of the batch, so that the call stays a
  branch."""
  tree = state.tree
  dtype = state.prior.dtype
  recorded = (node < state.recorded_nodes) & (tree.kind[node] < public_game.CHANCE)
  own = recorded & wanted
  calls = batch_axis.any_of(own, axis_name)

  def called():
    out = prior.apply(
      prior.params,
      tree,
      node[None],
      state.ranges[node][None],
      jnp.ones(1, bool),
      state.prior_leaf_state,
    )
    return leaf_calls.prior_policy(tree, node[None], out.logits, prior.temperature)[0].astype(dtype)

  kept = jnp.where(node == state.focus, state.prior[node], uniform_prior(tree.legal[node]))
  computed = jax.lax.cond(calls, called, lambda: jnp.zeros(state.prior.shape[1:], dtype))
  return jnp.where(recorded, computed, kept.astype(dtype)), own


def chosen_actions(
  state: belief_state.BeliefSearchState, node: chex.Array, selected: chex.Array, k: int
) -> chex.Array:
  """[A] bool: the up to k actions an expansion of ``node`` adds: its top k missing actions by the
  prior weighted by the actor's range (uniformly over its valid infostates where that range is 0),
  as SoG's expansion ranks them, and at an interior node first ``selected``, the action the walk
  left it through (not in the tree yet)."""
  tree = state.tree
  actor = jnp.clip(tree.kind[node], 0, 1)
  valid = tree.valid[node, actor]
  missing = beliefs.can_act(tree, node[None])[0] & ~tree.added[node]
  own = state.ranges[node, actor]
  score = jnp.where(own.sum() > 0, own, valid.astype(own.dtype)) @ state.prior[node]
  return walks.top_missing_actions(score, missing, tree.expanded[node], selected, k)


def expand(
  game: public_game.PublicGame,
  state: belief_state.BeliefSearchState,
  node: chex.Array,
  config: search_types.GTCFRConfig,
  prior: LeafPrior,
  selected: chex.Array = 0,
  k: int | None = None,
  allowed: chex.Array = True,
  axis_name: str | None = None,
) -> belief_state.BeliefSearchState:
  """Adds the children of up to ``k`` actions at ``node`` (:func:`chosen_actions`; None: every
  public child; all outcomes at a chance node; nothing at a terminal), and with ``open_chance=
  "with_parent"`` the outcomes of the chance nodes among them; the node, where it becomes
  interior, gets its prior (:func:`node_prior`, from ``prior``), which later walks read (with
  k < all before its actions are chosen, which read it too), and records the iteration. Where
  the pool has no room for the node's new children (1 + C slots for each with ``open_chance=
  "with_parent"``: its outcomes, should it be a chance node), or where ``allowed`` (a bool,
  possibly traced) is False, nothing is added: the node stays a frontier leaf, and the search
  goes on with the tree it has.
  ``axis_name``: the vmap axis of a batch of searches, whose loops over a large node's children
  then run the batch's most steps (a loop whose count differs across the batch would select the
  whole pool at each step)."""
  before = state.tree.num_nodes
  was_expanded = state.tree.expanded[node]

  def with_prior(state, writes):
    """The state with the node's prior written where ``writes`` (a traced bool), and its call of
    the leaf model counted."""
    fresh, called = node_prior(prior, state, node, writes, axis_name)
    return state.replace(
      prior=state.prior.at[node].set(jnp.where(writes, fresh, state.prior[node])),
      prior_calls=state.prior_calls + called,
    )

  most = added_at_most(game, dataclasses.replace(config, expansion_k=k))
  chooses = k is not None and k < state.tree.added.shape[-1]
  actions = None
  if chooses:  # (k < all) the actions chosen read the prior: written first, unless refused
    state = with_prior(state, jnp.logical_and(~was_expanded, allowed))
    actions = chosen_actions(state, node, selected, k)
  tree = state.tree
  # room for the node's children and, opened with their parent, the outcomes of each
  with_outcomes = config.open_chance == "with_parent" and game.max_chance_outcomes
  reserve = 1 + game.max_chance_outcomes if with_outcomes else 1
  tree = beliefs.add_children(
    game, tree, node, allowed, actions, children_at_most(game, k), reserve, axis_name
  )
  if config.open_chance == "with_parent":
    tree = open_chance(game, tree, tree.children[node], axis_name)
  iteration = state.cfr.iteration
  window = min(most, beliefs.CHILDREN_PER_CHUNK)

  def opened_slots(start, since):
    """The iteration a chance node opened with its parent became interior, for the new slots from
    ``start`` on (``window`` of them)."""
    new = start + jnp.arange(window)
    is_new = new < tree.num_nodes
    opened = jnp.where(tree.expanded[jnp.minimum(new, tree.capacity - 1)] & is_new, iteration, -1)
    return since.at[new].max(opened, mode="drop")

  since = state.interior_since
  if config.open_chance == "with_parent":
    if window == most:
      since = opened_slots(before, since)
    else:  # a large game's expansion: the slots it added, a window at a time
      steps = batch_axis.most((tree.num_nodes - before + window - 1) // window, axis_name)
      since = jax.lax.fori_loop(0, steps, lambda j, c: opened_slots(before + j * window, c), since)
  if not chooses:  # (k = all) where the node became interior, read from the grown tree
    state = with_prior(state.replace(tree=tree), tree.expanded[node] & ~was_expanded)
  return state.replace(
    tree=tree,
    interior_since=since.at[node].set(
      jnp.where(tree.expanded[node] & ~was_expanded, iteration, since[node])
    ),
  )


def children_at_most(game: public_game.PublicGame, k: int | None) -> int:
  """The most children one expansion adds to a node: ``game.max_children``, or k with k < all in
  a perfect-information game without chance whose children do not depend on the opponent (each
  action has one child there)."""
  one_each = (
    public_game.is_perfect_information(game)
    and not game.child_depends_on_opponent
    and not game.max_chance_outcomes
  )
  return game.max_children if k is None or not one_each else min(k, game.max_children)


def added_at_most(game: public_game.PublicGame, config: search_types.GTCFRConfig) -> int:
  """The most public states one expansion adds: a node's children (:func:`children_at_most`), and
  with ``open_chance="with_parent"`` the outcomes of the chance nodes among them."""
  children = children_at_most(game, config.expansion_k)
  if config.open_chance == "with_parent" and game.max_chance_outcomes:
    return children * (1 + game.max_children)
  return children


def open_chance(
  game: public_game.PublicGame,
  tree: beliefs.BeliefTree,
  nodes: chex.Array,
  axis_name: str | None = None,
) -> beliefs.BeliefTree:
  """``tree`` with the outcomes of the chance nodes among ``nodes`` [K] (slots, -1 for none) that
  are not expanded yet added (``open_chance="with_parent"``; ``axis_name`` as :func:`expand`'s)."""

  def one(i, tree):
    node = nodes[i]
    safe = jnp.maximum(node, 0)
    opens = (node >= 0) & (tree.kind[safe] == public_game.CHANCE) & ~tree.expanded[safe]
    # (no cond: under vmap it selects trees)
    return beliefs.add_children(game, tree, safe, opens, axis_name=axis_name)

  return jax.lax.fori_loop(0, nodes.shape[0], one, tree)


class Pending(NamedTuple):
  """The phase's walks so far, whose visits PUCT takes a virtual loss for: each walk's path in a
  row, [W, L] (W: the most walks a phase makes, ceil(c) (1 + redraws); L: the path length), the
  node, infostate and action at each step and whether the walk went through them there (1.0, or
  0.0), and the rows written. A node sits at one step of every path (its depth below the focus),
  so its pending visits are read from that step's column alone."""

  nodes: chex.Array
  infostates: chex.Array
  actions: chex.Array
  counts: chex.Array
  walks: chex.Array


def no_pending(config: search_types.GTCFRConfig, length: int, dtype) -> Pending:
  """A phase's :class:`Pending` before its first walk."""
  shape = (config.simulations_in_phase * (config.redraws + 1), length)
  index = jnp.zeros(shape, jnp.int32)
  return Pending(index, index, index, jnp.zeros(shape, dtype), jnp.int32(0))


def pending_visits(
  pending: Pending, step: chex.Array, node: chex.Array, infostate: chex.Array, num_actions: int
) -> chex.Array:
  """[A] the phase's walks' visits of (``infostate``, a) at ``node``, ``step`` moves below the
  focus."""
  at = (pending.nodes[:, step] == node) & (pending.infostates[:, step] == infostate)
  counts = jnp.where(at, pending.counts[:, step], 0.0)
  return jnp.zeros(num_actions, counts.dtype).at[pending.actions[:, step]].add(counts)


def _walk(
  game: public_game.PublicGame,
  state: belief_state.BeliefSearchState,
  pending: Pending,
  config: search_types.GTCFRConfig,
  prior: LeafPrior,
  path_length: int,
  rng: chex.PRNGKey,
  active: chex.Array = True,
  counts: chex.Array = True,
  axis_name: str | None = None,
):
  """One expansion walk from the focus; returns the state, the phase's :class:`Pending` walks
  (its path added) and whether it added a public state (where ``active`` is False: nothing
  changes; where ``counts`` is False, the search's opening: it leaves no visits). The walk
  carries only its position and path (a ``while_loop`` under ``vmap`` selects every carried array
  at every step); visits and the expansion are written once it has stopped."""
  tree, focus = state.tree, state.focus
  world_rng, walk_rng = jax.random.split(rng)
  s0, s1 = worlds.sample_world(tree, focus, state.ranges[focus], world_rng)
  empty_path = jnp.zeros(path_length, jnp.int32)

  def step(carry):
    i, node, s0, s1, _, _, rng, path = carry
    rng, action_rng, chance_rng = jax.random.split(rng, 3)
    kind = tree.kind[node]
    infostate = jnp.where(kind == 1, s1, s0)
    is_player = kind < public_game.CHANCE
    chosen = walks.pi_select(
      tree.legal[node, infostate],
      state.visits[node, infostate],
      state.prior[node, infostate],
      state.action_values[node, infostate]
      - config.virtual_loss * pending_visits(pending, i, node, infostate, game.num_actions),
      state.cfr.policy_sums[node, infostate],
      config,
      action_rng,
    )
    action = jnp.where(is_player, chosen, 0)
    stop_here = ~tree.expanded[node] | (is_player & ~tree.added[node, action])
    moves = (kind != public_game.TERMINAL) & ~stop_here
    counted = moves & is_player
    path = tuple(
      p.at[i].set(jnp.where(counted, x, p[i]))
      for p, x in zip(path, (node, infostate, action, 1), strict=True)
    )
    child, t0, t1 = worlds.step_world(tree, node, s0, s1, action, chance_rng)
    return (
      i + 1,
      jnp.where(moves, child, node),
      jnp.where(moves, t0, s0),
      jnp.where(moves, t1, s1),
      ~moves,
      action,
      rng,
      path,
    )

  start = (jnp.int32(0), focus, s0, s1, jnp.bool_(False), jnp.int32(0), walk_rng, (empty_path,) * 4)
  _, node, _, _, _, action, _, (nodes, infostates, actions, counted) = jax.lax.while_loop(
    lambda c: ~c[4], step, start
  )
  counted = (counted & active & counts).astype(state.visits.dtype)
  size = state.tree.num_nodes
  state = state.replace(visits=state.visits.at[nodes, infostates, actions].add(counted))
  # (a terminal: no expansion)
  state = expand(game, state, node, config, prior, action, config.expansion_k, active, axis_name)
  grew = state.tree.num_nodes > size
  state = state.replace(walks=state.walks + active, growing_walks=state.growing_walks + grew)
  row = pending.walks
  put = lambda rows, path: jax.lax.dynamic_update_slice(rows, path[None], (row, 0 * row))  # noqa: E731
  pending = Pending(
    *(put(r, p) for r, p in zip(pending[:4], (nodes, infostates, actions, counted), strict=True)),
    walks=row + 1,
  )
  return state, pending, grew


def fully_grown(
  state: belief_state.BeliefSearchState, every_action_added: bool = False
) -> chex.Array:
  """Whether the tree holds the focus's whole subgame: no frontier leaf at the focus or below it
  (the branch's other children stay frontier leaves), and no interior decision node there with an
  action its actor can take that is not added yet (k < all; ``every_action_added``, static: the
  search's expansions add every action, k = all, so there is none to look for)."""
  tree = state.tree
  slots = jnp.arange(tree.capacity)
  below = (slots >= state.subgame_from) | (slots == state.focus)
  missing = False
  if not every_action_added:
    missing = (
      tree.expanded
      & (tree.kind < public_game.CHANCE)
      & (beliefs.can_act(tree, slots) & ~tree.added).any(-1)
    )
  return ~((passes.frontier(tree) | missing) & below).any()


def has_room(tree: beliefs.BeliefTree, most: int) -> chex.Array:
  """Whether the pool has room for another expansion: ``most`` free slots (the most one adds) and
  rows for every infostate of the node it expands."""
  S = tree.legal.shape[1]
  return (tree.num_nodes + most <= tree.capacity) & (tree.num_rows + S <= tree.row_capacity)


def path_length(config: search_types.GTCFRConfig) -> int:
  """The most moves a walk can make: the tree's height, which each expansion raises by at most one
  (two when it opens chance nodes with their parent)."""
  per_expansion = 2 if config.open_chance == "with_parent" else 1
  return per_expansion * (1 + config.phases * config.simulations_in_phase) + 1


def opens_by_walk(game: public_game.PublicGame, config: search_types.GTCFRConfig) -> bool:
  """Whether a search's opening expansion, every child of the focus, is a walk's (with k = all a
  walk from the focus, a frontier leaf, adds just that) rather than :func:`expand`'s call in
  ``init`` (k < all: a walk would add k actions' children)."""
  return config.expansion_k is None or config.expansion_k >= game.num_actions


def grow(
  game: public_game.PublicGame,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  prior: LeafPrior,
  axis_name: str | None = None,
  opening: chex.Array = False,
) -> belief_state.BeliefSearchState:
  """The expansion phase: ceil(c) simulations (:func:`sog.search.walks.expansion_phase`; each
  expansion's prior from ``prior``; ``axis_name``: the vmap axis of a batch of searches), or where
  ``opening`` (a bool, possibly traced) holds, the search's opening expansion: one walk from the
  focus where it opens by walk (:func:`opens_by_walk`; none otherwise), not counted among the
  search's walks or visits and drawing none of its keys. One copy of the expansion code serves
  both (a program's size is its compile time)."""
  length = path_length(config)
  most = added_at_most(game, config)
  simulations, every_action = None, opens_by_walk(game, config)
  counts = jnp.logical_not(opening)  # the opening's walk leaves no visits
  if opening is not False:
    simulations = jnp.where(opening, int(every_action), config.simulations_in_phase)
  grown = walks.expansion_phase(
    lambda s, p, r, active=True: _walk(
      game, s, p, config, prior, length, r, active, counts, axis_name
    ),
    # no redraw once the tree is whole, or the pool has no room (slots, rows) for an expansion
    lambda s: fully_grown(s, every_action) | ~has_room(s.tree, most),
    state,
    no_pending(config, length, state.visits.dtype),
    config,
    axis_name,
    simulations,
  )
  if opening is False:
    return grown
  # the opening leaves the search's keys and walk counts as they were (and its walk no visits)
  return grown.replace(
    **{
      field: jnp.where(opening, getattr(state, field), getattr(grown, field))
      for field in ("rng", "walks", "growing_walks")
    }
  )
