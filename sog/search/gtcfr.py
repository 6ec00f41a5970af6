"""GT-CFR: growing-tree counterfactual regret minimisation (SoG, Algorithm 1), one jitted function.

A search starts from a public belief state beta = (root public state, r0, r1) with the root and all its
children in its tree (a re-solving search, :mod:`sog.search.resolving`, from a branch of the tree
leading from its root down to the public state it decides at, its *focus*, with the gadget setting the
opponent's root range; see :class:`Start`), and then runs ``phases`` times:

  * ceil(1/c) public-tree CFR+ updates on the current tree (regret-matching+, linear averaging;
    alternating updates by default, SoG's simultaneous ones as an option): ranges down, values up,
    frontier leaves valued by the leaf model in one batch, terminals exactly;
  * ceil(c) expansion simulations. A simulation samples a world state (s0, s1) from the beliefs at the
    focus (the root of a plain search) in the latest pass, walks it down
    the tree, choosing the actor's action from pi_select = 1/2 pi_PUCT + 1/2 pi_CFR (the average
    policy) and chance outcomes from their probabilities given the world state, until its next
    public state is not in the tree (at a frontier leaf none is): there it adds that state and the
    other children of up to k actions of the node, ranked by the prior, the selected action first
    (chance nodes add all outcomes). Visit counts along the path are updated at once; with several
    simulations per phase, a virtual loss on the pending (infostate, action) pairs spreads them out.

PUCT at the actor's infostate s of public state h is argmax_a Q(s, a) + C P(s, a) sqrt(N(s)) / (1 +
N(s, a)), where Q is the counterfactual action value of the latest CFR pass divided by the opponent's
range mass at h (a value conditional on s) and by the game's utility scale (so Q is in [-1, 1]), P the
leaf model's policy at s when h was last a frontier leaf (softmax with temperature T_prior), N the
visit counts. Statistics are per infostate and kept for the whole search.

The tree lives inside the fixed tables of the root's whole subgame (:mod:`sog.search.tables`) as masks:
``active`` (in the tree and counted by CFR) and ``expanded`` (an interior node, its chosen actions'
children active). A node is a frontier leaf when it is active, not terminal and not expanded. With
k < infinity a player node becomes expanded once every infostate of its actor has an added action;
until then it stays a frontier leaf. The leaf model sees at most ``capacity`` frontier leaves per pass,
a bound derived from (s, c, k) and the game. Nodes outside the tree are carried along (their regrets
never change and their values are overwritten at the frontier), so a pass costs a pass over the whole
subgame whatever the tree's size: the price of fixed shapes, measured by ``scripts/bench_search.py``.
Searches rooted deep in a game therefore run on the compact tables of their root's subgame
(:mod:`sog.search.subgames`, :meth:`GTCFR.search_in_subgames`), not on the whole game's.

Soundness (SoG's Theorem 1) is about the average, over iterations, of the strategy each iteration
played on the whole subgame: the search's policy in the tree and the leaf solver's below the frontier.
With the exact oracle the search accumulates the latter too (``leaf_policy_sums``), and
:meth:`GTCFR.completed_policy` offers both that average and the re-solve-at-final-ranges completion.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import registry
from sog.games import rules as rules_lib
from sog.games import tree as tree_lib
from sog.search import cfr
from sog.search import gadget as gadget_lib
from sog.search import leaf_models
from sog.search import subgames as subgames_lib
from sog.search import tables as tables_lib


@dataclasses.dataclass(frozen=True)
class GTCFRConfig:
  """SoG(s, c) and the constants the paper leaves open.

  Attributes:
    simulations: s, expansion simulations in the whole search (rounded up to whole phases).
    simulations_per_phase: c; each phase runs ceil(1/c) CFR+ updates and ceil(c) simulations
      (c = 0.1: one simulation every 10 updates; c = 10: 10 simulations after each update).
    expansion_k: actions whose children one expansion adds; None: the game's default (all of them
      for imperfect information, 1 for perfect information).
    puct_constant: C in PUCT, on values scaled to [-1, 1] (AlphaZero's order of magnitude).
    prior_temperature: T_prior of the softmax turning the leaf model's logits into PUCT's prior;
      ``math.inf`` makes the prior uniform over the legal actions (the logits are then ignored).
    virtual_loss: subtracted from Q(s, a) per simulation of the same phase already through (s, a);
      only acts when ceil(c) > 1.
    leaf_capacity: frontier leaves evaluated per CFR pass (None: the bound implied by s, c and k).
    query_samples: size of the uniform sample of leaf queries (PBSs) kept across the whole search.
    updates: "alternating" (the default: player 0, then player 1 against player 0's new policy, as
      OpenSpiel's CFR+: two passes and two leaf-model calls per update, and far faster convergence
      per update) or "simultaneous" (SoG's GT-CFR as the paper states it). Measured on Leduc by SoG's
      protocol with the exact oracle at SoG(100,1), 3 seeds: 57 mbb/h alternating against 128
      simultaneous (README, "Update schedule").
  """

  simulations: int = 100
  simulations_per_phase: float = 1.0
  expansion_k: int | None = None
  puct_constant: float = 1.0
  prior_temperature: float = 1.0
  virtual_loss: float = 1.0
  leaf_capacity: int | None = None
  query_samples: int = 16
  updates: str = "alternating"

  def __post_init__(self):
    checks = [
        (isinstance(self.simulations, int) and self.simulations >= 1,
         "simulations (s) must be an int >= 1"),
        (self.simulations_per_phase > 0, "simulations_per_phase (c) must be > 0"),
        (self.expansion_k is None or (isinstance(self.expansion_k, int) and self.expansion_k >= 1),
         "expansion_k (k) must be None (the game's default) or an int >= 1"),
        (self.puct_constant >= 0, "puct_constant must be >= 0"),
        (self.prior_temperature > 0, "prior_temperature must be > 0"),
        (self.virtual_loss >= 0, "virtual_loss must be >= 0"),
        (self.leaf_capacity is None or (isinstance(self.leaf_capacity, int)
                                        and self.leaf_capacity >= 1),
         "leaf_capacity must be None or an int >= 1"),
        (isinstance(self.query_samples, int) and self.query_samples >= 0,
         "query_samples must be an int >= 0"),
        (self.updates in cfr.UPDATES, f"updates must be one of {cfr.UPDATES}"),
    ]
    for ok, message in checks:
      if not ok:
        raise ValueError(f"GT-CFR config: {message}; got {self}")

  @property
  def updates_per_phase(self) -> int:
    return math.ceil(round(1.0 / self.simulations_per_phase, 9))

  @property
  def passes_per_update(self) -> int:
    """Tree passes (each valuing the frontier with one leaf-model call) per CFR update: one
    simultaneous pass, or one per player when alternating."""
    return 1 if self.updates == "simultaneous" else 2

  @property
  def simulations_in_phase(self) -> int:
    return math.ceil(round(self.simulations_per_phase, 9))

  @property
  def phases(self) -> int:
    return math.ceil(self.simulations / self.simulations_in_phase)


@chex.dataclass(frozen=True)
class QuerySample:
  """A uniform sample (without replacement) of the leaf queries of a search: the Q queries with the
  smallest random keys; ``keys`` is inf in unused rows."""

  nodes: chex.Array   # [Q] int32, search-table nodes (``tables.game_node``: the game's node)
  ranges: chex.Array  # [Q, 2, S]
  keys: chex.Array    # [Q]

  @property
  def valid(self) -> chex.Array:
    return jnp.isfinite(self.keys)


@chex.dataclass(frozen=True)
class Start:
  """Where a search starts (all arrays, so a batch of starts runs under ``vmap``).

  A plain search starts at its root: ``root == focus``, the branch is the root alone. A re-solving
  search (:mod:`sog.search.resolving`) starts at s_prev, the public state of an earlier search's tree
  closest to the current one: its initial tree is the branch from s_prev down to the current public
  state (the focus) with every child of the branch's nodes (off-branch ones as frontier leaves), and
  its simulations start at the focus, so the tree only grows below it.

  Attributes:
    root: scalar int32, the node whose ranges are given (s_prev).
    focus: scalar int32, the public state the search decides at (s_pub); a descendant of ``root``.
    branch: [N] bool, the nodes from ``root`` to ``focus`` (both included).
    ranges: [2, S] the ranges at the root (the gadget replaces the opponent's row while enabled).
    gadget: the safe re-solving gadget at the root (disabled for a plain search).
  """

  root: chex.Array
  focus: chex.Array
  branch: chex.Array
  ranges: chex.Array
  gadget: gadget_lib.Gadget


def root_start(tables: tables_lib.SearchTables, root_ranges: chex.Array,
               node: chex.Array | int = 0) -> Start:
  """A plain search from ``node`` (default the tables' root) at ``root_ranges`` [2, S]: the search
  of a public belief state, as the query solver runs."""
  num_infostates = tables.valid.shape[-1]
  root = jnp.asarray(node, jnp.int32)
  return Start(root=root, focus=root, branch=jnp.arange(tables.num_nodes) == root,
               ranges=root_ranges.astype(tables.levels[0].payoff.dtype) * tables.valid[root],
               gadget=gadget_lib.disabled(num_infostates, tables.levels[0].payoff.dtype))


@chex.dataclass(frozen=True)
class SearchState:
  """Everything a search carries from one phase to the next (per-node arrays over the tables' N
  nodes; per-decision arrays over its M inner nodes)."""

  cfr: cfr.CFRState
  start: Start
  gadget: gadget_lib.GadgetState
  active: chex.Array          # [N] bool: in the tree
  expanded: chex.Array        # [N] bool: an interior node of the tree
  added: chex.Array           # [N, A] bool: actions whose children are in the tree
  visits: chex.Array          # [M, S, A]
  prior: chex.Array           # [M, S, A]: the actor's prior policy
  action_values: chex.Array   # [M, S, A]: PUCT's Q, the actor's normalised action values
  ranges: chex.Array          # [N, 2, S]: of the latest CFR pass
  leaf_policy_sums: chex.Array  # [M, S, A]: weighted realisation weights from the leaf model
  leaf_state: Any               # a stateful leaf model's state (() for the others)
  queries: QuerySample
  leaf_evaluations: chex.Array  # PBSs the leaf model was asked for
  leaf_calls: chex.Array        # leaf-model calls made (none by an unbatched pass with no leaves)
  rng: chex.Array


@chex.dataclass(frozen=True)
class SearchResult:
  """What a search returns; per-node arrays are over the search tables' nodes.

  Attributes:
    root_policy: [S, A] the average policy at the search's public state (the start's focus: the root
      of a plain search), for every infostate of its actor.
    root_values: [2, S] counterfactual values of the average policy there.
    root, focus: scalar int32, the start's root and focus.
    average_policy: [M, S, A] at the tables' inner nodes (meaningful where ``expanded``).
    policy_sums: [M, S, A] the linearly weighted realisation weights behind ``average_policy``.
    leaf_policy_sums: [M, S, A] the same for the leaf model's strategies below the frontier, summed
      over the iterations (zero unless the leaf model plays there, as the exact oracle does).
    in_tree, expanded: [N] the final tree: its public states and its interior ones (the others in it
      are terminals or frontier leaves).
    ranges, values: [N, 2, S] of the average policy in the final tree (the summary re-solving keeps).
    best_response_values: [N, 2, S] each player's best-response counterfactual values against the
      other's average policy in the final tree (frontier leaves valued as in ``values``).
    queries: a uniform sample of the leaf PBSs queried across the search.
    leaf_evaluations, leaf_calls: PBSs evaluated by the leaf model, and calls made.
  """

  root_policy: chex.Array
  root_values: chex.Array
  root: chex.Array
  focus: chex.Array
  average_policy: chex.Array
  policy_sums: chex.Array
  leaf_policy_sums: chex.Array
  in_tree: chex.Array
  expanded: chex.Array
  ranges: chex.Array
  values: chex.Array
  best_response_values: chex.Array
  queries: QuerySample
  leaf_evaluations: chex.Array
  leaf_calls: chex.Array

  @property
  def nodes(self) -> chex.Array:
    return self.in_tree.sum(-1)


# ----------------------------------------------------------------------------------------------
# Pieces of one search (pure functions of the tables and the state).


def frontier_mask(kind: chex.Array, in_tree: chex.Array, expanded: chex.Array) -> chex.Array:
  """[N] bool: the frontier leaves, in the tree, not terminal, not expanded (NumPy or JAX arrays)."""
  return in_tree & ~expanded & (kind != rules_lib.TERMINAL)


def _frontier(tables: tables_lib.SearchTables, state: SearchState) -> chex.Array:
  return frontier_mask(tables.kind, state.active, state.expanded)


def _with_leaves(tables: tables_lib.SearchTables, frontier: chex.Array) -> cfr.Levels:
  """The tables' levels with the frontier marked as leaves (valued by the leaf model in a pass)."""
  return tuple(level.replace(is_leaf=f) for level, f in zip(tables.levels, tables.split(frontier)))


def _available(tables: tables_lib.SearchTables, state: SearchState) -> chex.Array:
  """[M, S, A]: the actions CFR may play at each inner node: those whose children are in the tree
  (all legal ones at nodes outside it, where the policy is never used)."""
  legal = tables.to_inner(tables.legal)
  restricted = tables.to_inner(state.expanded & (tables.kind < rules_lib.CHANCE))
  added = tables.to_inner(state.added)
  return legal & (added[:, None, :] | ~restricted[:, None, None])


def leaf_batch_sizes(capacity: int | tuple[int, ...]) -> tuple[int, ...]:
  """The leaf-model batch sizes an unbatched search chooses from (ascending, the last the capacity):
  the capacity bound is loose (it covers any tree s simulations could grow), so a pass evaluates the
  smallest batch that holds its frontier; about 1/16 and 1/4 of the bound, and the bound."""
  sizes = {max(8, -(-capacity // 16)), max(8, -(-capacity // 4)), capacity}
  return tuple(sorted(size for size in sizes if size <= capacity))


def _evaluate_frontier(tables, apply, params, frontier, capacity: int | tuple[int, ...],
                       leaf_state: Any):
  """The leaf-values hook of a CFR pass: the frontier leaves' values from one leaf-model call
  (``apply`` in the stateful form, :func:`sog.search.leaf_models.stateful_apply`, from ``leaf_state``).

  ``capacity`` is the batch of that call, or ascending batch sizes (:func:`leaf_batch_sizes`) of
  which the pass takes the smallest that holds the frontier, and makes no call at all while the
  frontier is empty (a ``lax.switch``: only worth it outside ``vmap``, where it would run every
  branch). A deep re-solve grows its whole small subgame in a few simulations, and then its
  remaining passes would ask the leaf model about nothing. Outputs are padded to the largest size;
  the hook's extra output is (nodes, ranges, mask, output, whether the model was called).
  """
  sizes = capacity if isinstance(capacity, tuple) else (capacity,)
  full = sizes[-1]

  def leaf_values(ranges):
    flat = jnp.concatenate(ranges)
    count = frontier.sum()

    def at(size):
      def evaluate(_):
        nodes = jnp.nonzero(frontier, size=size, fill_value=0)[0].astype(jnp.int32)
        mask = jnp.arange(size) < count
        batch = jnp.where(mask[:, None, None], flat[nodes], 0.0)
        out = apply(params, tables, nodes, batch, mask, leaf_state)
        placed = jnp.zeros_like(flat).at[nodes].add(jnp.where(mask[:, None, None], out.values, 0.0))
        pad = lambda x: jnp.pad(x, [(0, full - size)] + [(0, 0)] * (x.ndim - 1))  # noqa: E731
        out = out._replace(values=pad(out.values), logits=pad(out.logits))
        return placed, (pad(nodes), pad(batch), pad(mask), out, jnp.bool_(True))
      return evaluate

    def skip(_):  # what a call with every row masked gives, without the call
      placed, (nodes, batch, mask, out, _) = jax.tree.map(
          lambda x: jnp.zeros(x.shape, x.dtype), jax.eval_shape(at(full), None))
      return placed, (nodes, batch, mask, out._replace(state=leaf_state), jnp.bool_(False))

    if not isinstance(capacity, tuple):
      placed, extra = at(full)(None)
    else:
      tier = jnp.minimum(jnp.searchsorted(jnp.asarray(sizes), count), len(sizes) - 1)
      placed, extra = jax.lax.switch(jnp.where(count > 0, tier + 1, 0),
                                     [skip] + [at(size) for size in sizes], None)
    return tables.split(placed), extra

  return leaf_values


def _actor_rows(kind: chex.Array, per_player: chex.Array) -> chex.Array:
  """x[n, actor(n)] from x [n, 2, ...] (player 0's row at chance and terminal nodes)."""
  return jnp.where((kind == 1).reshape(-1, *[1] * (per_player.ndim - 2)), per_player[:, 1],
                   per_player[:, 0])


def _prior(tables, nodes: chex.Array, logits: chex.Array, temperature: float) -> chex.Array:
  """The actor's softmax(logits / T) over legal actions, [L, S, A]."""
  rows = _actor_rows(tables.kind[nodes], logits)
  return jax.nn.softmax(jnp.where(tables.legal[nodes], rows / temperature, -jnp.inf), axis=-1)


def _normalised_action_values(tables, levels, ranges, q_values) -> chex.Array:
  """[M, S, A]: the actor's counterfactual action values over the opponent's range mass, scaled."""
  rows = []
  for level, r, q in zip(levels, ranges, q_values):
    k = level.inner
    if not k:
      continue
    if q is None:
      rows.append(jnp.zeros(level.legal[:k].shape, r.dtype))
      continue
    opponent_mass = _actor_rows(level.kind[:k], r[:k, ::-1].sum(-1))
    scale = jnp.where(opponent_mass > 0, opponent_mass, 1.0) * tables.utility_scale
    rows.append(jnp.where((opponent_mass > 0)[:, None, None],
                          _actor_rows(level.kind[:k], q) / scale[:, None, None], 0.0))
  return jnp.concatenate(rows)


def _sample_queries(sample: QuerySample, rng, nodes, ranges, mask) -> QuerySample:
  size = sample.keys.shape[0]
  if not size:
    return sample
  keys = jnp.concatenate([sample.keys, jnp.where(mask, jax.random.uniform(rng, mask.shape), jnp.inf)])
  _, keep = jax.lax.top_k(-keys, size)
  return QuerySample(nodes=jnp.concatenate([sample.nodes, nodes])[keep],
                     ranges=jnp.concatenate([sample.ranges, ranges])[keep], keys=keys[keep])


def _cfr_update(tables, apply, params, state: SearchState, config: GTCFRConfig,
                capacity: int | tuple[int, ...]) -> SearchState:
  """One CFR+ update of the current tree (both players from one pass, or player 0 then player 1)."""
  groups = ((0, 1),) if config.updates == "simultaneous" else ((0,), (1,))
  weight = (state.cfr.iteration + 1).astype(state.start.ranges.dtype)  # linear averaging
  for players in groups:
    state = _update_players(tables, apply, params, state, config, capacity, players, weight)
  return state.replace(cfr=state.cfr.replace(iteration=state.cfr.iteration + 1))


def _root_entry(tables, root: chex.Array, root_ranges: chex.Array) -> cfr.Entry:
  """The per-level injection of ``root_ranges`` at ``root`` (nodes above it get no range)."""
  ranges = root_ranges * tables.valid[root]
  return [(mask, ranges) for mask in tables.split(jnp.arange(tables.num_nodes) == root)]


def _pass(tables, levels, policy, root_ranges, state: SearchState, leaf_values=None,
          best_response_values: bool = False):
  """A CFR pass from the start's root at ``root_ranges``."""
  return cfr.evaluate_pass(levels, policy, jnp.zeros_like(root_ranges), leaf_values,
                           _root_entry(tables, state.start.root, root_ranges), best_response_values)


def _update_gadget(tables, state: SearchState, values, players, weight) -> gadget_lib.GadgetState:
  """The gadget's regret-matching+ step from the opponent's root values, if the opponent updated."""
  gadget, root = state.start.gadget, state.start.root
  updated = gadget_lib.update(gadget, state.gadget, jnp.concatenate(values)[root, gadget.player],
                              tables.valid[root, gadget.player], weight)
  applies = jnp.isin(gadget.player, jnp.asarray(players))
  return jax.tree.map(lambda new, old: jnp.where(applies, new, old), updated, state.gadget)


def _update_players(tables, apply, params, state: SearchState, config: GTCFRConfig,
                    capacity: int | tuple[int, ...], players: tuple[int, ...],
                    weight: chex.Array) -> SearchState:
  """One pass over the current tree (frontier valued by the leaf model) updating ``players``'
  regrets and average policies (and the gadget's, for the opponent), and the statistics PUCT reads
  from it."""
  frontier = _frontier(tables, state)
  levels = _with_leaves(tables, frontier)
  available = _available(tables, state)
  policy = cfr.regret_matching(state.cfr.regrets, available)
  root_ranges = gadget_lib.root_ranges(state.start.gadget, state.gadget, state.start.ranges,
                                       tables.valid[state.start.root])
  ranges, values, q_values, (nodes, batch, mask, out, called) = _pass(
      tables, levels, policy, root_ranges, state,
      _evaluate_frontier(tables, apply, params, frontier, capacity, state.leaf_state))
  interior = tables.to_inner(state.expanded)[:, None, None]
  acting = cfr.acting_masks(levels) & available & interior
  solver_state = state.cfr
  for player in players:
    solver_state = cfr.update_player(levels, solver_state, acting[player], policy, ranges, values,
                                     q_values, player, weight)
  positions = tables.inner_position[nodes]
  prior = _prior(tables, nodes, out.logits, config.prior_temperature)
  leaf_policy_sums = state.leaf_policy_sums
  if out.policy_sums is not None:
    updated = tables.to_inner(jnp.isin(tables.kind, jnp.asarray(players)))[:, None, None]
    leaf_policy_sums = leaf_policy_sums + jnp.where(updated, weight * out.policy_sums, 0.0)
  rng, query_rng = jax.random.split(state.rng)
  return state.replace(
      cfr=solver_state, gadget=_update_gadget(tables, state, values, players, weight),
      prior=state.prior.at[positions].set(
          jnp.where(mask[:, None, None], prior, state.prior[positions])),
      action_values=jnp.where(interior, _normalised_action_values(tables, levels, ranges, q_values),
                              state.action_values),
      ranges=jnp.concatenate(ranges), leaf_policy_sums=leaf_policy_sums, leaf_state=out.state,
      queries=_sample_queries(state.queries, query_rng, nodes, batch, mask),
      leaf_evaluations=state.leaf_evaluations + mask.sum(),
      leaf_calls=state.leaf_calls + called, rng=rng)


def _select_action(tables, state: SearchState, pending, node, infostate, config, rng):
  """pi_select = 1/2 one-hot(argmax PUCT) + 1/2 average CFR policy, at the actor's infostate."""
  m = tables.inner_position[node]
  expanded = state.expanded[node]
  allowed = tables.legal[node, infostate] & (state.added[node] | ~expanded)
  visits = state.visits[m, infostate]
  q = state.action_values[m, infostate] - config.virtual_loss * pending[m, infostate]
  u = config.puct_constant * state.prior[m, infostate] * jnp.sqrt(visits.sum()) / (1.0 + visits)
  puct = jax.nn.one_hot(jnp.argmax(jnp.where(allowed, q + u, -jnp.inf)), allowed.shape[0])
  average = cfr.regret_matching(state.cfr.policy_sums[m, infostate], allowed)
  return jax.random.choice(rng, allowed.shape[0], p=0.5 * puct + 0.5 * average)


def _expand(tables, state: SearchState, node, selected, k: int | None, grow) -> SearchState:
  """If ``grow``: adds the children of up to k actions at ``node`` (``selected`` first, then by the
  prior weighted by the actor's range; all outcomes at a chance node)."""
  m = tables.inner_position[node]
  actor = jnp.clip(tables.kind[node], 0, 1)
  num_actions = tables.legal.shape[-1]
  can_act = (tables.legal[node] & tables.valid[node, actor][:, None]).any(0)
  missing = can_act & ~state.added[node]
  chance = tables.kind[node] == rules_lib.CHANCE
  if k is None or k >= num_actions:
    new = missing
  else:
    score = state.ranges[node, actor] @ state.prior[m]
    score = jnp.where(missing, score, -jnp.inf).at[selected].set(
        jnp.where(missing[selected], jnp.inf, -jnp.inf))
    top_scores, top = jax.lax.top_k(score, k)
    new = jnp.zeros(num_actions, bool).at[top].set(top_scores > -jnp.inf)
  added = jnp.where(grow, jnp.where(chance, True, state.added[node] | new), state.added[node])
  has_action = (tables.legal[node] & added[None, :]).any(-1) | ~tables.valid[node, actor]
  expanded = state.expanded[node] | (grow & (chance | has_action.all()))
  children = tables.up_child[node]
  activate = (children >= 0) & added[:, None] & expanded
  return state.replace(
      added=state.added.at[node].set(added), expanded=state.expanded.at[node].set(expanded),
      active=state.active.at[jnp.where(activate, children, 0).ravel()].max(activate.ravel()))


def _simulate(tables, state: SearchState, pending, config: GTCFRConfig, k: int | None, rng):
  """One expansion simulation; returns the state and the phase's pending (virtual-loss) counts.

  The walk carries only its position and path (a ``while_loop`` under ``vmap`` selects every carried
  array at every step); visits and the expansion are written once it has stopped.
  """
  world_rng, walk_rng = jax.random.split(rng)
  focus = state.start.focus
  s0, s1 = tables_lib.sample_world(tables, focus, state.ranges[focus], world_rng)
  depth = len(tables.level_starts) - 1
  empty_path = jnp.zeros(depth, jnp.int32)

  def step(carry):
    i, node, s0, s1, _, _, rng, path = carry
    rng, action_rng, chance_rng = jax.random.split(rng, 3)
    kind = tables.kind[node]
    infostate = jnp.where(kind == 1, s1, s0)
    is_player = kind < rules_lib.CHANCE
    action = jnp.where(is_player, _select_action(tables, state, pending, node, infostate, config,
                                                 action_rng), 0)
    stop_here = ~state.expanded[node] | (is_player & ~state.added[node, action])
    moves = (kind != rules_lib.TERMINAL) & ~stop_here
    counted = moves & is_player
    path = tuple(p.at[i].set(jnp.where(counted, x, p[i])) for p, x in
                 zip(path, (tables.inner_position[node], infostate, action, 1)))
    child, t0, t1 = tables_lib.step_world(tables, node, s0, s1, action, chance_rng)
    return (i + 1, jnp.where(moves, child, node), jnp.where(moves, t0, s0),
            jnp.where(moves, t1, s1), ~moves, action, rng, path)

  start = (jnp.int32(0), focus.astype(jnp.int32), s0, s1, jnp.bool_(False), jnp.int32(0), walk_rng,
           (empty_path,) * 4)
  _, node, _, _, _, action, _, (rows, infostates, actions, counted) = jax.lax.while_loop(
      lambda c: ~c[4], step, start)
  counted = counted.astype(state.visits.dtype)
  state = state.replace(visits=state.visits.at[rows, infostates, actions].add(counted))
  state = _expand(tables, state, node, action, k, tables.kind[node] != rules_lib.TERMINAL)
  return state, pending.at[rows, infostates, actions].add(counted)


def _grow(tables, state: SearchState, config: GTCFRConfig, k: int | None) -> SearchState:
  rng, sims_rng = jax.random.split(state.rng)
  rngs = jax.random.split(sims_rng, config.simulations_in_phase)

  def one(i, carry):
    return _simulate(tables, *carry, config, k, rngs[i])

  state, _ = jax.lax.fori_loop(0, config.simulations_in_phase, one,
                               (state, jnp.zeros_like(state.visits)))
  return state.replace(rng=rng)


# ----------------------------------------------------------------------------------------------
# The search.


def init(tables: tables_lib.SearchTables, apply, params, rng: chex.PRNGKey, start: Start,
         config: GTCFRConfig, leaf_state: Any = ()) -> SearchState:
  """The initial tree (the start's branch, expanded, and all its nodes' children) and the focus's
  prior (one leaf-model call at its ranges under the uniform policy, from ``leaf_state``).

  ``apply`` here, in :func:`run` and in :func:`finish` is the leaf model's stateful form
  (:func:`sog.search.leaf_models.stateful_apply`)."""
  n, num_actions = tables.legal.shape[0], tables.legal.shape[-1]
  legal_inner = tables.to_inner(tables.legal)
  levels = tables.levels
  dtype = levels[0].payoff.dtype
  start = start.replace(ranges=start.ranges.astype(dtype))
  uniform = legal_inner / legal_inner.sum(-1, keepdims=True)
  S = tables.valid.shape[-1]
  gadget = gadget_lib.init_state(start.gadget)
  root_ranges = gadget_lib.root_ranges(start.gadget, gadget, start.ranges, tables.valid[start.root])
  focus = start.focus[None].astype(jnp.int32)
  first = cfr.evaluate_pass(levels, uniform, jnp.zeros_like(root_ranges), None,
                            _root_entry(tables, start.root, root_ranges))[0]
  out = apply(params, tables, focus, jnp.concatenate(first)[focus], jnp.ones(1, bool), leaf_state)
  branch = start.branch
  has_parent = tables.parent >= 0
  return SearchState(
      cfr=cfr.init_state(levels), start=start, gadget=gadget,
      active=branch | (has_parent & branch[jnp.maximum(tables.parent, 0)]),
      expanded=branch, added=jnp.broadcast_to(branch[:, None], (n, num_actions)),
      visits=jnp.zeros(legal_inner.shape, uniform.dtype),
      prior=uniform.at[tables.inner_position[focus]].set(
          _prior(tables, focus, out.logits, config.prior_temperature)),
      action_values=jnp.zeros(legal_inner.shape, uniform.dtype),
      ranges=jnp.zeros((n, 2, S), uniform.dtype),
      leaf_policy_sums=jnp.zeros(legal_inner.shape, uniform.dtype), leaf_state=out.state,
      queries=QuerySample(nodes=jnp.zeros(config.query_samples, jnp.int32),
                          ranges=jnp.zeros((config.query_samples, 2, S), uniform.dtype),
                          keys=jnp.full(config.query_samples, jnp.inf, uniform.dtype)),
      leaf_evaluations=jnp.int32(1), leaf_calls=jnp.int32(1), rng=rng)


def run(tables: tables_lib.SearchTables, apply, params, state: SearchState, config: GTCFRConfig,
        capacity: int | tuple[int, ...], k: int | None) -> SearchState:
  """The config's phases of CFR+ updates then expansion simulations, in one loop."""

  def phase(_, state):
    state = jax.lax.fori_loop(
        0, config.updates_per_phase,
        lambda _, s: _cfr_update(tables, apply, params, s, config, capacity), state)
    return _grow(tables, state, config, k)

  return jax.lax.fori_loop(0, config.phases, phase, state)


def finish(tables: tables_lib.SearchTables, apply, params, state: SearchState,
           capacity: int | tuple[int, ...]) -> SearchResult:
  """The search's answer: the average policy and its values and ranges (the opponent's root range
  the gadget's average, when it is on), the policy and values at the focus."""
  frontier = _frontier(tables, state)
  levels = _with_leaves(tables, frontier)
  average = cfr.average_policy(levels, state.cfr)
  start = state.start
  root_ranges = gadget_lib.average_range(start.gadget, state.gadget, start.ranges,
                                         tables.valid[start.root])
  ranges, values, _, (_, _, mask, _, called), best = _pass(
      tables, levels, average, root_ranges, state,
      _evaluate_frontier(tables, apply, params, frontier, capacity, state.leaf_state),
      best_response_values=True)
  values = jnp.concatenate(values)
  return SearchResult(
      root_policy=average[tables.inner_position[start.focus]], root_values=values[start.focus],
      root=start.root, focus=start.focus, average_policy=average,
      policy_sums=state.cfr.policy_sums, leaf_policy_sums=state.leaf_policy_sums,
      in_tree=state.active, expanded=state.expanded, ranges=jnp.concatenate(ranges),
      values=values, best_response_values=jnp.concatenate(best), queries=state.queries,
      leaf_evaluations=state.leaf_evaluations + mask.sum(), leaf_calls=state.leaf_calls + called)


def search(tables: tables_lib.SearchTables, apply, params, rng: chex.PRNGKey, start: Start,
           config: GTCFRConfig, capacity: int | tuple[int, ...], k: int | None,
           leaf_state: Any = ()) -> SearchResult:
  """One GT-CFR search from ``start``: init, run, finish."""
  state = init(tables, apply, params, rng, start, config, leaf_state)
  state = run(tables, apply, params, state, config, capacity, k)
  return finish(tables, apply, params, state, capacity)


class GTCFR:
  """GT-CFR searches in ``tree`` with one leaf model and config, compiled once.

  ``search(rng, root_ranges)`` runs one search from the tree's root; ``search_batch(rngs,
  root_ranges)`` a batch of independent ones under ``vmap`` (each with its own rng and root ranges).
  ``search_from(rng, start)`` and ``search_from_batch(rngs, starts)`` run searches from any
  :class:`Start` in the tree: the re-solving searches of :mod:`sog.search.resolving`. The config is
  checked against the game (capacity, k) here, before anything is traced.
  """

  def __init__(self, game_or_tree: registry.Game | tree_lib.PublicTree,
               leaf_model: leaf_models.LeafModel, config: GTCFRConfig = GTCFRConfig()):
    tree = game_or_tree.tree if isinstance(game_or_tree, registry.Game) else game_or_tree
    if tree.kind[0] == rules_lib.TERMINAL:
      raise ValueError("the search root is terminal: there is nothing to search")
    self.tree, self.leaf_model, self.config = tree, leaf_model, config
    default_k = 1 if tables_lib.has_perfect_information(tree) else None
    self.k = default_k if config.expansion_k is None else config.expansion_k
    needed = tables_lib.frontier_capacity(tree, config.phases * config.simulations_in_phase,
                                          self.k, branches=True)
    if config.leaf_capacity is not None and config.leaf_capacity < needed:
      raise ValueError(f"leaf_capacity={config.leaf_capacity} is too small for s="
                       f"{config.simulations} on {tree.name}: the frontier can reach {needed} "
                       "leaves; use a larger capacity or None")
    self.capacity = needed if config.leaf_capacity is None else config.leaf_capacity
    self.tables = tables_lib.make_tables(tree)
    self._search = jax.jit(self._search_fn(leaf_batch_sizes(self.capacity)))
    self._batch = jax.jit(jax.vmap(self._search_fn(self.capacity), in_axes=(None, None, 0, 0)))
    self._root_starts = jax.jit(jax.vmap(root_start, in_axes=(None, 0)))
    self._in_subgames = {}  # capacity (batched) or batch sizes (unbatched) -> compiled search

  @functools.cached_property
  def subgames(self) -> subgames_lib.Subgames:
    """Compact tables for searches rooted below the tree's root (:mod:`sog.search.subgames`)."""
    return subgames_lib.Subgames(self.tree, self.capacity)

  def root_ranges(self, ranges: np.ndarray | None) -> jax.Array:
    ranges = self.tree.root_ranges if ranges is None else best_response.check_ranges(self.tree,
                                                                                          ranges)
    return jnp.asarray(ranges, jnp.float32)

  def search(self, rng: chex.PRNGKey, root_ranges: np.ndarray | None = None,
             params=None) -> SearchResult:
    """One search from the tree's root at ``root_ranges`` (default: the tree's priors)."""
    return self.search_from(rng, root_start(self.tables, self.root_ranges(root_ranges)), params)

  def search_batch(self, rngs: chex.PRNGKey, root_ranges: np.ndarray | None = None,
                   params=None) -> SearchResult:
    """Searches for a batch of rngs [B] (and root ranges [B, 2, S], default the tree's priors)."""
    count = rngs.shape[0]
    if root_ranges is None:
      ranges = jnp.broadcast_to(self.root_ranges(None), (count, *self.tree.root_ranges.shape))
    else:
      root_ranges = np.asarray(root_ranges)
      if root_ranges.ndim != 3 or root_ranges.shape[0] != count:
        raise ValueError(f"batched root ranges must be [{count}, 2, S], got {root_ranges.shape}")
      ranges = jnp.stack([self.root_ranges(r) for r in root_ranges])
    return self.search_from_batch(rngs, self._root_starts(self.tables, ranges), params)

  def search_from(self, rng: chex.PRNGKey, start: Start, params=None) -> SearchResult:
    """One search from ``start`` (a root, a branch down to the focus, ranges and a gadget)."""
    params = self.leaf_model.params if params is None else params
    return self._search(self.tables, params, rng, start)

  def search_from_batch(self, rngs: chex.PRNGKey, starts: Start, params=None) -> SearchResult:
    """Searches from a batch of starts (every array with a leading axis [B], as ``rngs``)."""
    params = self.leaf_model.params if params is None else params
    if starts.root.shape != rngs.shape[:1]:
      raise ValueError(f"got {rngs.shape[0]} rngs for starts of batch shape {starts.root.shape}")
    return self._batch(self.tables, params, rngs, starts)

  def search_in_subgames(self, tables: tables_lib.SearchTables, capacity: int, rngs: chex.PRNGKey,
                         starts: Start, params=None) -> SearchResult:
    """Searches from a batch of starts, each in its own tables: ``tables`` are subgame tables of one
    shape (:attr:`subgames` of one depth) stacked on a leading axis [B], ``capacity`` their frontier
    bound, ``starts`` in their nodes. One compilation per shape."""
    params = self.leaf_model.params if params is None else params
    if starts.root.shape != rngs.shape[:1] or tables.kind.shape[0] != rngs.shape[0]:
      raise ValueError(f"got {rngs.shape[0]} rngs for starts of batch shape {starts.root.shape} "
                       f"and tables of batch shape {tables.kind.shape[:1]}")
    if rngs.shape[0] == 1:  # unbatched: each pass evaluates the smallest leaf batch that fits
      key = leaf_batch_sizes(capacity)
      if key not in self._in_subgames:
        self._in_subgames[key] = jax.jit(self._search_fn(key))
      first = lambda x: x[0]  # noqa: E731
      result = self._in_subgames[key](jax.tree.map(first, tables), params, rngs[0],
                                      jax.tree.map(first, starts))
      return jax.tree.map(lambda x: x[None], result)
    if capacity not in self._in_subgames:
      self._in_subgames[capacity] = jax.jit(jax.vmap(self._search_fn(capacity),
                                                     in_axes=(0, None, 0, 0)))
    return self._in_subgames[capacity](tables, params, rngs, starts)

  def search_grouped(self, subgames: Sequence[subgames_lib.Subgame],
                     make_starts: Callable[[tables_lib.SearchTables, list[int]], Start],
                     rngs: chex.PRNGKey, chunk: int,
                     params=None) -> Iterator[tuple[list[int], SearchResult]]:
    """Searches for jobs 0..J-1, job j in ``subgames[j]``: grouped by subgame depth (one shape each)
    and run as vmapped chunks of ``chunk`` searches (padded by repeating the chunk's last job).

    ``make_starts(tables, jobs)`` gives the starts of a chunk (the jobs' tables stacked, [chunk, ...]);
    ``rngs`` [J] are the jobs' keys. Yields each chunk's jobs and its results ([chunk, ...], the
    padding rows last).
    """
    if chunk < 1:
      raise ValueError(f"chunk must be >= 1, got {chunk}")
    for depth in sorted({subgame.depth for subgame in subgames}):
      group = [j for j, subgame in enumerate(subgames) if subgame.depth == depth]
      for lo in range(0, len(group), chunk):
        jobs = group[lo:lo + chunk]
        padded = jobs + [jobs[-1]] * (chunk - len(jobs))
        tables = jax.tree.map(lambda *xs: np.stack(xs), *[subgames[j].tables for j in padded])
        starts = make_starts(tables, padded)
        yield jobs, self.search_in_subgames(tables, subgames[jobs[0]].capacity,
                                            rngs[np.asarray(padded)], starts, params)

  def _search_fn(self, capacity: int | tuple[int, ...]):
    """search(tables, params, rng, start) with this searcher's leaf model, config and k."""
    model = self.leaf_model
    one = functools.partial(search, apply=leaf_models.stateful_apply(model), config=self.config,
                            capacity=capacity, k=self.k)
    return lambda tables, params, rng, start: one(
        tables, params=params, rng=rng, start=start,
        leaf_state=leaf_models.initial_state(model, tables))

  def completed_policy(self, result: SearchResult, iterations: int = 1000,
                       method: str = "resolve", tremble: float = 1e-3) -> np.ndarray:
    """The search's policy completed over its whole subgame, for exact evaluation ([N, S, A] float64).

    ``method="resolve"``: the average policy at the tree's interior nodes and, below every frontier
    leaf, a CFR+ solve (``iterations``, trembled as the exact oracle) of the leaf's subgame at its final
    ranges. This is not safe (a re-solve at fixed ranges may pick an opponent-exploitable equilibrium
    of the leaf subgame), so it can be exploitable while the frontier holds leaves the search rarely
    reaches.

    ``method="average"`` (needs a leaf model that plays below the leaves, the exact oracle): the
    average over the search's iterations of the whole-subgame strategy each iteration played, its
    own policy in the tree and the oracle's below the frontier. This is the strategy GT-CFR's
    soundness theorem (as CFR-D's) bounds, so its exploitability falls with the regret.
    """
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    if method == "resolve":
      inner = np.asarray(_resolve_below_frontier(self.tables, result, self.capacity, iterations,
                                                 tremble), np.float64)
    elif method == "average":
      sums = np.asarray(result.policy_sums, np.float64) + np.asarray(result.leaf_policy_sums,
                                                                     np.float64)
      legal = np.asarray(self.tables.to_inner(self.tables.legal))
      inner = np.where(sums.sum(-1, keepdims=True) > 0, sums, legal)
    else:
      raise ValueError(f"method must be 'resolve' or 'average', got {method!r}")
    policy = policy_lib.uniform_policy(self.tree)
    policy[np.asarray(self.tables.inner_nodes)] = inner / inner.sum(-1, keepdims=True)
    return policy

  def exploitability(self, result: SearchResult, iterations: int = 1000, method: str = "resolve",
                     root_ranges: np.ndarray | None = None) -> float:
    """Exact exploitability (float64) of :meth:`completed_policy` in the subgame from ``root_ranges``
    (default: the tree's priors, so the game's exploitability when the root is the game's root)."""
    return best_response.evaluate(self.tree, self.completed_policy(result, iterations, method),
                                  root_ranges).exploitability


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def _resolve_below_frontier(tables: tables_lib.SearchTables, result: SearchResult, capacity: int,
                            iterations: int, tremble: float) -> chex.Array:
  leaves = frontier_mask(tables.kind, result.in_tree, result.expanded)
  nodes = jnp.nonzero(leaves, size=capacity, fill_value=0)[0]
  mask = jnp.arange(capacity) < leaves.sum()
  below, _, _ = leaf_models.solve_at_nodes(tables, nodes, result.ranges[nodes], mask, iterations,
                                           tremble)
  return jnp.where(tables.to_inner(result.expanded)[:, None, None], result.average_policy, below)
