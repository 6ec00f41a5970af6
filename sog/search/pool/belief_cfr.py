"""Public-tree CFR+ on a :class:`~sog.search.pool.beliefs.BeliefTree`: ranges down, counterfactual
values up, and one player's regret-matching+ update, over the pool's used slots only.

The arithmetic is :mod:`sog.search.cfr`'s (DESIGN.md, "The game model"), on parent pointers
instead of level tables. Per node, ranges and values are [2, S] and a policy is the actor's [S, A]:

  * down: the parent actor's range reaches the child through the (s, a) that lead there,
    r_i(c, s') = sum_{(s, a) -> (c, s')} r_i(p, s) pi(a | s); every other range passes unchanged
    where the child admits the infostate;
  * up: a terminal's v_0(s0) = sum_s1 W u_0 r_1(s1) (and v_1 with -u_0 and r_0); a frontier leaf
    takes the given leaf values; an interior node's actor has Q_i(s, a) = sum of v_i(c, s') over
    the children (s, a) reaches and v_i(s) = sum_a pi(a | s) Q_i(s, a), the others sum their
    values over the children that admit them (weighted by P(k) below chance).

A pass (ranges down, values up) visits the interior nodes depth by depth in chunks of one depth,
and the leaves in chunks of any depths (:class:`~sog.search.pool.level_order.LevelOrder`), so it
costs the grown tree, each node once, not height x capacity; a chunk of the order's narrow class
reads only the first S_n rows of each [S, A] array. Beyond zeroing its per-slot ranges and values
(and the action-value sums where no buffer is given), nothing in it runs over the whole pool: a
chunk reads its nodes' policy rows (regret matching of their regrets,
:func:`current_policy`), and the up pass hands each chunk's finished values and action values to a
``visit`` (:func:`update_rows`: CFR+'s regret-matching+ step and linear averaging at those nodes),
so one CFR+ iteration is two passes over the grown tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import chex
import jax.numpy as jnp

from sog.games import propagation
from sog.games import public_game
from sog.search import cfr
from sog.search import leaf_calls
from sog.search.pool import beliefs
from sog.search.pool import level_order as level_order_lib
from sog.search.pool import passes

matching = passes.matching  # regret matching, zero rows where nothing is legal (free slots)


def _actors(kind: chex.Array) -> chex.Array:
  """[n, 2, 1] bool: whether each player is the actor at nodes of ``kind`` [n] (neither at
  chance)."""
  return (kind[:, None] == jnp.arange(2))[..., None]


class _Rows(NamedTuple):
  """The per-node fields a pass reads, at a chunk's nodes."""

  parent: chex.Array
  kind: chex.Array
  payoff: chex.Array
  edges: chex.Array
  passes: chex.Array
  probability: chex.Array
  expanded: chex.Array


def _gather(tree: beliefs.BeliefTree, nodes: chex.Array, width: int) -> _Rows:
  """The fields at ``nodes`` (clipped: a chunk's padding reads slot P - 1, and is dropped), the
  edges' first ``width`` rows."""
  at = jnp.minimum(nodes, tree.capacity - 1)
  return _Rows(
    **{field: getattr(tree, field)[at] for field in _Rows._fields if field != "edges"},
    edges=tree.edges[at, :width],
  )


#: A pass's policy: its first ``width`` rows [B, width, A] at ``nodes`` [B] (slots; B a chunk's
#: size, an interior chunk's or the leaves'), given the up pass's visit carry (the rows a visit has
#: not yet written, so a policy read from the carry is the pass's own): ``policy(nodes, carry,
#: width)``.
Policy = Callable[[chex.Array, Any, int], chex.Array]


def rows_of(policy: chex.Array) -> Policy:
  """The :data:`Policy` of a fixed ``policy`` [P, S, A]."""
  return lambda nodes, carry, width: policy[nodes, :width]


class Visit(NamedTuple):
  """A chunk of the up pass, its values final: the nodes [B] (B the chunk's size, an interior
  chunk's or the leaves'; P for the chunk's padding, which a write with ``mode="drop"`` drops) and
  their kind and expanded flag [B], ranges and counterfactual values [B, 2, S], the actor's action
  values Q [B, W, A] (an action not added yet, with k < all, takes the actor's value at the node:
  what PUCT reads for it) and the pass's policy there [B, W, A], over the first W rows (the
  chunk's width, :class:`~sog.search.pool.level_order.RowClass`; at an interior node the
  actor's infostates are among them)."""

  nodes: chex.Array
  kind: chex.Array
  expanded: chex.Array
  ranges: chex.Array
  values: chex.Array
  q: chex.Array
  policy: chex.Array


#: Ranges entering the tree at some nodes: (inside [P] bool, ranges [P, 2, S]); a node inside takes
#: its given ranges instead of its parent's flow (the roots of subgames solved together).
Entry = tuple[chex.Array, chex.Array] | None


def reach_down(
  tree: beliefs.BeliefTree,
  policy: Policy,
  root_ranges: chex.Array,
  order: level_order_lib.LevelOrder | None = None,
  carry: Any = (),
  entry: Entry = None,
) -> chex.Array:
  """[P, 2, S] both players' ranges under ``policy`` (read from ``carry``) from ``root_ranges``
  [2, S] (and ``entry``'s at the nodes it marks)."""
  order = level_order_lib.level_order(tree) if order is None else order
  P, S = tree.capacity, root_ranges.shape[-1]
  root_ranges = root_ranges.astype(tree.weight.dtype)
  root = root_ranges * tree.valid[0]

  def down(nodes, ranges, width):
    parent = jnp.maximum(tree.parent[jnp.minimum(nodes, P - 1)], 0)
    child = _gather(tree, nodes, width)
    above = ranges[parent]  # [B, 2, S]
    parent_kind = tree.kind[parent]
    own = jnp.take_along_axis(above, jnp.clip(parent_kind, 0, 1)[:, None, None], 1)[:, 0, :width]
    flow = child.edges * policy(parent, carry, width) * own[..., None]  # [B, W, A]
    into = tree.next_infostate[parent, :width]
    rows = jnp.broadcast_to(jnp.arange(nodes.shape[0])[:, None, None], into.shape)
    moved = jnp.zeros((nodes.shape[0], S), ranges.dtype).at[rows, into].add(flow)
    new = jnp.where(_actors(parent_kind), moved[:, None, :], child.passes * above)
    new = jnp.where((child.parent < 0)[:, None, None], root, new)
    if entry is not None:
      at = jnp.minimum(nodes, P - 1)
      new = jnp.where(entry[0][at][:, None, None], entry[1][at], new)
    return ranges.at[nodes].set(new, mode="drop")

  return order.walk(down, jnp.zeros((P, 2, S), root_ranges.dtype))


def values_up(
  tree: beliefs.BeliefTree,
  policy: Policy,
  ranges: chex.Array,
  leaf_values: chex.Array | None = None,
  order: level_order_lib.LevelOrder | None = None,
  best_response: bool | chex.Array = False,
  visit: Callable[[Any, Visit], Any] | None = None,
  carry: Any = (),
  sums: chex.Array | None = None,
) -> tuple[chex.Array, chex.Array, Any]:
  """Counterfactual values [P, 2, S] of ``policy`` (frontier leaves, the used nodes not expanded
  that are not terminal, take ``leaf_values`` [P, 2, S]; zero without), ``sums`` and ``carry``
  with every chunk's :class:`Visit` folded in by ``visit`` (the CFR update, :func:`update_rows`;
  a visit holds the actor's action values Q). ``sums`` [P, S, A] is where the pass sums each
  node's Q from its children: zero when given and zero again when returned (a node's rows are
  cleared once read), so that a loop of passes clears no [P, S, A] array (None: a new one).
  With ``best_response`` each actor plays a best response instead, max_a Q(s, a) over its
  playable actions, against the other's policy in ``ranges``: both players'
  best-response values (a traced bool too: vmapped over ``[False, True]``, one pass gives both
  the policy's values and the best responses').

  The leaves first, then the interior nodes depth by depth from the deepest
  (:meth:`~sog.search.pool.level_order.LevelOrder.walk`): a chunk's nodes take their values (a
  leaf's its own, an interior node's from its children's sums, complete by then), are visited, and
  add their parts into their parents' sums."""
  order = level_order_lib.level_order(tree) if order is None else order
  P, S, A = tree.legal.shape

  def up(nodes, loop, width):
    values, q, passed, carry = loop
    node = _gather(tree, nodes, width)
    at = jnp.minimum(nodes, P - 1)
    terminal = (node.kind == public_game.TERMINAL)[:, None, None]
    leaf = 0.0 if leaf_values is None else leaf_values[at]
    base = jnp.where(terminal, propagation.payoff_values(node.payoff, ranges[at], jnp), leaf)
    rows, node_q = policy(at, carry, width), q[at, :width]  # [B, W, A]
    summed = node_q
    acting = (rows * node_q).sum(-1)
    if best_response is not False:  # (traced: one pass computes both, vmapped over the flag)
      playable = beliefs.playable(tree, at, width)
      acting = jnp.where(best_response, jnp.where(playable, node_q, -jnp.inf).max(-1), acting)
    acting = jnp.pad(acting, [(0, 0), (0, S - width)])[:, None, :]  # the rows past W are zero
    interior = jnp.where(_actors(node.kind), acting, passed[at])
    value = jnp.where(node.expanded[:, None, None], interior, base)
    if visit is not None:
      # an action not added yet (k < all) is worth the actor's value at the node to PUCT
      mover = jnp.take_along_axis(value, jnp.clip(node.kind, 0, 1)[:, None, None], 1)[:, 0, :width]
      unplayed = tree.legal[at, :width] & ~beliefs.playable(tree, at, width)
      node_q = jnp.where(unplayed, mover[..., None], node_q)
      carry = visit(carry, Visit(nodes, node.kind, node.expanded, ranges[at], value, node_q, rows))
    # this chunk's parts of its parents' sums
    # the root and a chunk's padding send nothing
    parent = jnp.where((nodes < P) & (node.parent >= 0), node.parent, P)
    above = jnp.minimum(parent, P - 1)
    own = jnp.take_along_axis(value, jnp.clip(tree.kind[above], 0, 1)[:, None, None], 1)[:, 0]
    infostates = tree.next_infostate[above, :width].reshape(-1, width * A)
    reached = jnp.take_along_axis(own, infostates, 1).reshape(-1, width, A)
    reached = jnp.where(node.edges, reached, 0.0)
    # into the parents' sums; the nodes' own sums, read, cleared (x - x = 0 exactly)
    into = jnp.concatenate([parent, jnp.where(node.expanded, nodes, P)])
    return (
      values.at[nodes].set(value, mode="drop"),
      q.at[into, :width].add(jnp.concatenate([reached, -summed]), mode="drop"),
      passed.at[parent].add(node.passes * node.probability[:, None, None] * value, mode="drop"),
      carry,
    )

  zeros = jnp.zeros((P, 2, S), ranges.dtype)
  sums = jnp.zeros((P, S, A), ranges.dtype) if sums is None else sums
  values, sums, _, carry = order.walk(up, (zeros, sums, zeros, carry), upward=True)
  return values, sums, carry


@chex.dataclass(frozen=True)
class CFRState:
  """Cumulative regrets and linearly weighted policy sums [P, S, A] at the pool's nodes, and the
  up pass's buffer for its action-value sums (zero between passes, :func:`values_up`)."""

  regrets: chex.Array
  policy_sums: chex.Array
  iteration: chex.Array
  action_sums: chex.Array


def init_state(tree: beliefs.BeliefTree) -> CFRState:
  zeros = jnp.zeros(tree.legal.shape, tree.weight.dtype)
  return CFRState(regrets=zeros, policy_sums=zeros, iteration=jnp.int32(0), action_sums=zeros)


def current_policy(tree: beliefs.BeliefTree) -> Policy:
  """The :data:`Policy` regret matching gives from the regrets of a :class:`CFRState` carry (the
  search's current policy), at the nodes it is asked for."""
  return lambda nodes, state, width: matching(
    state.regrets[nodes, :width], beliefs.playable(tree, nodes, width)
  )


def update_rows(
  tree: beliefs.BeliefTree,
  state: CFRState,
  visit: Visit,
  updating: chex.Array,
  weight: chex.Array,
) -> CFRState:
  """Regret-matching+ and linear averaging (``weight``: t, a scalar, or [C, 1, 1] per node) at the
  visit's interior nodes whose actor ``updating`` [2] (bool) marks, at the actor's valid infostates
  and playable actions: R(s, a) <- max(R(s, a) + Q(s, a) - v(s), 0) and the policy sums gain
  weight r(s) pi(a | s) (a gain Q - v that ties zero to float64 rounding counts as zero:
  :func:`sog.search.cfr.regret_gains`)."""
  nodes, kind, W = visit.nodes, visit.kind, visit.q.shape[1]
  at = jnp.minimum(nodes, tree.capacity - 1)
  valid = tree.valid[at, :, :W]  # [C, 2, W]
  acts = visit.expanded & (kind < public_game.CHANCE) & updating[jnp.clip(kind, 0, 1)]
  playable = beliefs.playable(tree, at, W)
  acting = acts[:, None, None] & leaf_calls.actor_rows(kind, valid)[..., None] & playable
  own_values = leaf_calls.actor_rows(kind, visit.values)[:, :W, None]
  own_range = leaf_calls.actor_rows(kind, visit.ranges)[:, :W, None]
  regrets, sums = state.regrets[at, :W], state.policy_sums[at, :W]
  gains = cfr.regret_gains(visit.q, own_values)
  regrets = jnp.where(acting, jnp.maximum(regrets + gains, 0.0), regrets)
  sums = jnp.where(acting, sums + weight * own_range * visit.policy, sums)
  return state.replace(
    regrets=state.regrets.at[nodes, :W].set(regrets, mode="drop"),
    policy_sums=state.policy_sums.at[nodes, :W].set(sums, mode="drop"),
  )


def iteration(
  tree: beliefs.BeliefTree,
  state: CFRState,
  root_ranges: chex.Array,
  updates: cfr.Updates,
  order: level_order_lib.LevelOrder | None = None,
  entry: Entry = None,
) -> CFRState:
  """One CFR+ iteration on the whole pool: player 0 then player 1 (``"alternating"``), or both
  from one pass (``"simultaneous"``); ``order`` is the tree's
  :func:`~sog.search.pool.level_order.level_order` (computed when
  None; a loop over a fixed tree computes it once); ``entry``: ranges entering at some nodes, as in
  :func:`reach_down`."""
  weight = (state.iteration + 1).astype(tree.weight.dtype)
  groups = ((0,), (1,)) if updates == "alternating" else ((0, 1),)
  order = level_order_lib.level_order(tree) if order is None else order
  policy = current_policy(tree)
  for group in groups:
    updating = jnp.isin(jnp.arange(2), jnp.asarray(group))
    ranges = reach_down(tree, policy, root_ranges, order, state, entry)
    _, sums, state = values_up(
      tree,
      policy,
      ranges,
      order=order,
      visit=lambda s, v, u=updating: update_rows(tree, s, v, u, weight),
      carry=state,
      sums=state.action_sums,
    )
    state = state.replace(action_sums=sums)
  return state.replace(iteration=state.iteration + 1)


def average_policy(tree: beliefs.BeliefTree, state: CFRState) -> chex.Array:
  """[P, S, A] the linearly weighted average policy over the playable actions
  (:func:`~sog.search.pool.beliefs.playable`; uniform where a row was never reached)."""
  return matching(state.policy_sums, beliefs.playable(tree, jnp.arange(tree.capacity)))
