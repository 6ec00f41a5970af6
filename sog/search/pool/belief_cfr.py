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
and the leaves in chunks of any depths (:class:`LevelOrder`), so it costs the grown tree, each node
once, not height x capacity. Beyond zeroing its per-slot sums, nothing in it runs over the whole
pool: a chunk reads its nodes' policy rows (regret matching of their regrets,
:func:`current_policy`), and the up pass hands each chunk's finished values and action values to a
``visit`` (:func:`update_rows`: CFR+'s regret-matching+ step and linear averaging at those nodes),
so one CFR+ iteration is two passes over the grown tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.games import propagation
from sog.games import public_game
from sog.search import cfr
from sog.search import leaf_calls
from sog.search.pool import beliefs
from sog.search.pool import passes

matching = passes.matching  # regret matching, zero rows where nothing is legal (free slots)


#: Interior nodes a pass handles in one step (all of one depth). A step costs a fixed part and a
#: part per row, padding included: small chunks suit the trees searches grow with k = all (a few
#: interior nodes per depth: a re-solve's branch and the nodes below its focus that an expansion
#: opened), at the price of more steps on a bushy tree.
CHUNK = 8

#: The interior chunk of searches whose expansions add k < all children (perfect information's
#: k = 1): every expansion opens an interior node, so their interior levels are wide.
WIDE_CHUNK = 32

#: Leaves (frontier leaves and terminals) a pass handles in one step, of any depths: a leaf depends
#: only on its parent going down and on nothing below it going up, so every leaf of the tree is
#: one batch of steps, after the interior nodes going down and before them going up.
LEAF_CHUNK = 64


@chex.dataclass(frozen=True)
class LevelOrder:
  """The used slots in the order a pass visits them: the interior (expanded) nodes by depth (then
  slot), cut into chunks of at most C nodes of one depth (:func:`interior_chunk`), and the leaves
  in slot order, cut into chunks of ``LEAF_CHUNK``. A pass walks the interior chunks down and then
  the leaves' (or the leaves' and then the interior chunks up, :meth:`walk`) and touches each node
  once.

  Attributes:
    order: [P + C] int32 the interior slots by (depth, slot), then P (no node).
    chunk_start: [P + 1] int32 the position in ``order`` of each interior chunk's first node.
    chunk_size: [P + 1] int32 the nodes in each interior chunk (0 past the last).
    num_chunks: int32 scalar, the interior chunks (in a vmapped batch of searches ordered with its
      axis name, the batch's largest, so that the passes' loops run the same steps for every
      search and select nothing: the extra chunks are empty).
    leaves: [P + LEAF_CHUNK] int32 the used slots that are not expanded, in slot order, then P.
    num_leaf_chunks: int32 scalar, the leaves' chunks (the batch's largest, as ``num_chunks``).
  """

  order: chex.Array
  chunk_start: chex.Array
  chunk_size: chex.Array
  num_chunks: chex.Array
  leaves: chex.Array
  num_leaf_chunks: chex.Array

  @property
  def size(self) -> int:
    """C, the nodes of an interior chunk (static)."""
    return self.order.shape[0] - (self.chunk_start.shape[0] - 1)

  def chunk(self, c: chex.Array) -> chex.Array:
    """[C] int32 the nodes of interior chunk ``c`` (P where the chunk is shorter, and past the
    last)."""
    nodes = jax.lax.dynamic_slice(self.order, (self.chunk_start[c],), (self.size,))
    return jnp.where(jnp.arange(self.size) < self.chunk_size[c], nodes, self.order.size - self.size)

  def leaf_chunk(self, c: chex.Array) -> chex.Array:
    """[LEAF_CHUNK] int32 the leaves of leaf chunk ``c`` (P past the last leaf)."""
    return jax.lax.dynamic_slice(self.leaves, (c * LEAF_CHUNK,), (LEAF_CHUNK,))

  def walk(self, step: Callable[[chex.Array, Any], Any], init: Any, upward: bool = False) -> Any:
    """``step(nodes, carry)`` folded over the interior chunks from the shallowest and then the
    leaves' chunks (with ``upward``: the leaves' chunks and then the interior chunks from the
    deepest); ``nodes`` are a chunk's slots ([C] or [LEAF_CHUNK], P for padding)."""
    last = self.num_chunks - 1
    at = (lambda i: last - i) if upward else (lambda i: i)

    def interior(carry):
      return jax.lax.fori_loop(
        0, self.num_chunks, lambda i, carry: step(self.chunk(at(i)), carry), carry
      )

    def leaves(carry):
      return jax.lax.fori_loop(
        0, self.num_leaf_chunks, lambda i, carry: step(self.leaf_chunk(i), carry), carry
      )

    return interior(leaves(init)) if upward else leaves(interior(init))


def interior_chunk(k: int | None, num_actions: int) -> int:
  """The interior chunk C for a search whose expansions add the children of ``k`` of the game's
  ``num_actions`` actions (None: all of them): ``CHUNK``, or ``WIDE_CHUNK`` where k < all."""
  return CHUNK if k is None or k >= num_actions else WIDE_CHUNK


def level_order(
  tree: beliefs.BeliefTree, axis_name: str | None = None, chunk: int = CHUNK
) -> LevelOrder:
  """The :class:`LevelOrder` of the tree's used slots, in interior chunks of ``chunk`` nodes
  (``axis_name``: the vmap axis of a batch of searches, whose passes then all run the batch's
  largest numbers of chunks)."""
  P, C = tree.capacity, chunk
  interior = tree.used & tree.expanded
  depth = jnp.where(interior, tree.depth, P)
  order = jnp.argsort(depth, stable=True).astype(jnp.int32)
  order = jnp.concatenate([jnp.where(interior[order], order, P), jnp.full(C, P, jnp.int32)])
  size = jnp.zeros(P + 1, jnp.int32).at[depth].add(1)[: P + 1].at[P].set(0)  # nodes per depth
  chunks = (size + C - 1) // C  # chunks per depth
  num_chunks = chunks.sum()
  # each chunk's depth, its first node's position in the order and its length
  of = jnp.repeat(jnp.arange(P + 1), chunks, total_repeat_length=P + 1)
  first = (jnp.arange(P + 1) - (jnp.cumsum(chunks) - chunks)[of]) * C
  live = jnp.arange(P + 1) < num_chunks
  is_leaf = tree.used & ~tree.expanded
  leaves = jnp.nonzero(is_leaf, size=P + LEAF_CHUNK, fill_value=P)[0].astype(jnp.int32)
  num_leaf_chunks = (is_leaf.sum(dtype=jnp.int32) + LEAF_CHUNK - 1) // LEAF_CHUNK
  if axis_name is not None:
    num_chunks = jax.lax.pmax(num_chunks, axis_name)
    num_leaf_chunks = jax.lax.pmax(num_leaf_chunks, axis_name)
  return LevelOrder(
    order=order,
    chunk_start=jnp.where(live, (jnp.cumsum(size) - size)[of] + first, 0),
    chunk_size=jnp.where(live, jnp.minimum(size[of] - first, C), 0),
    num_chunks=num_chunks,
    leaves=leaves,
    num_leaf_chunks=num_leaf_chunks,
  )


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


def _gather(tree: beliefs.BeliefTree, nodes: chex.Array) -> _Rows:
  """The fields at ``nodes`` (clipped: a chunk's padding reads slot P - 1, and is dropped)."""
  at = jnp.minimum(nodes, tree.capacity - 1)
  return _Rows(*(getattr(tree, field)[at] for field in _Rows._fields))


#: A pass's policy: its rows [B, S, A] at ``nodes`` [B] (slots; B a chunk's size, an interior
#: chunk's or the leaves'), given the up pass's visit carry
#: (the rows a visit has not yet written, so a policy read from the carry is the pass's own).
Policy = Callable[[chex.Array, Any], chex.Array]


def rows_of(policy: chex.Array) -> Policy:
  """The :data:`Policy` of a fixed ``policy`` [P, S, A]."""
  return lambda nodes, carry: policy[nodes]


class Visit(NamedTuple):
  """A chunk of the up pass, its values final: the nodes [B] (B the chunk's size, an interior
  chunk's or the leaves'; P for the chunk's padding, which a write with ``mode="drop"`` drops) and
  their kind and expanded flag [B], ranges and counterfactual values [B, 2, S], the actor's action
  values Q [B, S, A] (an action not added yet, with k < all, takes the actor's value at the node:
  what PUCT reads for it) and the pass's policy there [B, S, A]."""

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
  order: LevelOrder | None = None,
  carry: Any = (),
  entry: Entry = None,
) -> chex.Array:
  """[P, 2, S] both players' ranges under ``policy`` (read from ``carry``) from ``root_ranges``
  [2, S] (and ``entry``'s at the nodes it marks)."""
  order = level_order(tree) if order is None else order
  P, S = tree.capacity, root_ranges.shape[-1]
  root_ranges = root_ranges.astype(tree.weight.dtype)
  root = root_ranges * tree.valid[0]

  def down(nodes, ranges):
    parent = jnp.maximum(tree.parent[jnp.minimum(nodes, P - 1)], 0)
    child = _gather(tree, nodes)
    above = ranges[parent]  # [B, 2, S]
    parent_kind = tree.kind[parent]
    own = jnp.take_along_axis(above, jnp.clip(parent_kind, 0, 1)[:, None, None], 1)[:, 0]
    flow = child.edges * policy(parent, carry) * own[..., None]  # [B, S, A]
    into = tree.next_infostate[parent]
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
  order: LevelOrder | None = None,
  best_response: bool | chex.Array = False,
  visit: Callable[[Any, Visit], Any] | None = None,
  carry: Any = (),
) -> tuple[chex.Array, chex.Array, Any]:
  """Counterfactual values [P, 2, S] of ``policy``, the actor's action values Q [P, S, A] (frontier
  leaves, the used nodes not expanded that are not terminal, take ``leaf_values`` [P, 2, S]; zero
  without) and ``carry`` with every chunk's :class:`Visit` folded in by ``visit`` (the CFR update,
  :func:`update_rows`). With ``best_response`` each actor plays a best response instead, max_a
  Q(s, a) over its playable actions, against the other's policy in ``ranges``: both players'
  best-response values (a traced bool too: vmapped over ``[False, True]``, one pass gives both
  the policy's values and the best responses').

  The leaves first, then the interior nodes depth by depth from the deepest
  (:meth:`LevelOrder.walk`): a chunk's nodes take their values (a leaf's its own, an interior
  node's from its children's sums, complete by then), are visited, and add their parts into their
  parents' sums."""
  order = level_order(tree) if order is None else order
  P, S, A = tree.legal.shape

  def up(nodes, loop):
    values, q, passed, carry = loop
    node = _gather(tree, nodes)
    at = jnp.minimum(nodes, P - 1)
    terminal = (node.kind == public_game.TERMINAL)[:, None, None]
    leaf = 0.0 if leaf_values is None else leaf_values[at]
    payoff = beliefs.padded_pairs(node.payoff, S)
    base = jnp.where(terminal, propagation.payoff_values(payoff, ranges[at], jnp), leaf)
    rows = policy(at, carry)
    acting = (rows * q[at]).sum(-1)[:, None, :]
    if best_response is not False:  # (traced: one pass computes both, vmapped over the flag)
      best = jnp.where(beliefs.playable(tree, at), q[at], -jnp.inf).max(-1)[:, None, :]
      acting = jnp.where(best_response, best, acting)
    interior = jnp.where(_actors(node.kind), acting, passed[at])
    value = jnp.where(node.expanded[:, None, None], interior, base)
    if visit is not None:
      # an action not added yet (k < all) is worth the actor's value at the node to PUCT
      mover = jnp.take_along_axis(value, jnp.clip(node.kind, 0, 1)[:, None, None], 1)[:, 0]
      unplayed = tree.legal[at] & ~beliefs.playable(tree, at)
      node_q = jnp.where(unplayed, mover[..., None], q[at])
      carry = visit(carry, Visit(nodes, node.kind, node.expanded, ranges[at], value, node_q, rows))
    # this chunk's parts of its parents' sums
    # the root and a chunk's padding send nothing
    parent = jnp.where((nodes < P) & (node.parent >= 0), node.parent, P)
    above = jnp.minimum(parent, P - 1)
    own = jnp.take_along_axis(value, jnp.clip(tree.kind[above], 0, 1)[:, None, None], 1)[:, 0]
    reached = jnp.take_along_axis(own, tree.next_infostate[above].reshape(-1, S * A), 1)
    reached = jnp.where(node.edges, reached.reshape(-1, S, A), 0.0)
    return (
      values.at[nodes].set(value, mode="drop"),
      q.at[parent].add(reached, mode="drop"),
      passed.at[parent].add(node.passes * node.probability[:, None, None] * value, mode="drop"),
      carry,
    )

  zeros = jnp.zeros((P, 2, S), ranges.dtype)
  values, q, _, carry = order.walk(
    up, (zeros, jnp.zeros((P, S, A), ranges.dtype), zeros, carry), upward=True
  )
  return values, q, carry


@chex.dataclass(frozen=True)
class CFRState:
  """Cumulative regrets and linearly weighted policy sums [P, S, A] at the pool's nodes."""

  regrets: chex.Array
  policy_sums: chex.Array
  iteration: chex.Array


def init_state(tree: beliefs.BeliefTree) -> CFRState:
  zeros = jnp.zeros(tree.legal.shape, tree.weight.dtype)
  return CFRState(regrets=zeros, policy_sums=zeros, iteration=jnp.int32(0))


def current_policy(tree: beliefs.BeliefTree) -> Policy:
  """The :data:`Policy` regret matching gives from the regrets of a :class:`CFRState` carry (the
  search's current policy), at the nodes it is asked for."""
  return lambda nodes, state: matching(state.regrets[nodes], beliefs.playable(tree, nodes))


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
  nodes, kind = visit.nodes, visit.kind
  at = jnp.minimum(nodes, tree.capacity - 1)
  valid = tree.valid[at]  # [C, 2, S]
  acts = visit.expanded & (kind < public_game.CHANCE) & updating[jnp.clip(kind, 0, 1)]
  playable = beliefs.playable(tree, at)
  acting = acts[:, None, None] & leaf_calls.actor_rows(kind, valid)[..., None] & playable
  own_values = leaf_calls.actor_rows(kind, visit.values)[..., None]
  own_range = leaf_calls.actor_rows(kind, visit.ranges)[..., None]
  regrets, sums = state.regrets[at], state.policy_sums[at]
  gains = cfr.regret_gains(visit.q, own_values)
  regrets = jnp.where(acting, jnp.maximum(regrets + gains, 0.0), regrets)
  sums = jnp.where(acting, sums + weight * own_range * visit.policy, sums)
  return state.replace(
    regrets=state.regrets.at[nodes].set(regrets, mode="drop"),
    policy_sums=state.policy_sums.at[nodes].set(sums, mode="drop"),
  )


def iteration(
  tree: beliefs.BeliefTree,
  state: CFRState,
  root_ranges: chex.Array,
  updates: cfr.Updates,
  order: LevelOrder | None = None,
  entry: Entry = None,
) -> CFRState:
  """One CFR+ iteration on the whole pool: player 0 then player 1 (``"alternating"``), or both
  from one pass (``"simultaneous"``); ``order`` is the tree's :func:`level_order` (computed when
  None; a loop over a fixed tree computes it once); ``entry``: ranges entering at some nodes, as in
  :func:`reach_down`."""
  weight = (state.iteration + 1).astype(tree.weight.dtype)
  groups = ((0,), (1,)) if updates == "alternating" else ((0, 1),)
  order = level_order(tree) if order is None else order
  policy = current_policy(tree)
  for group in groups:
    updating = jnp.isin(jnp.arange(2), jnp.asarray(group))
    ranges = reach_down(tree, policy, root_ranges, order, state, entry)
    _, _, state = values_up(
      tree,
      policy,
      ranges,
      order=order,
      visit=lambda s, v, u=updating: update_rows(tree, s, v, u, weight),
      carry=state,
    )
  return state.replace(iteration=state.iteration + 1)


def average_policy(tree: beliefs.BeliefTree, state: CFRState) -> chex.Array:
  """[P, S, A] the linearly weighted average policy over the playable actions
  (:func:`~sog.search.pool.beliefs.playable`; uniform where a row was never reached)."""
  return matching(state.policy_sums, beliefs.playable(tree, jnp.arange(tree.capacity)))
