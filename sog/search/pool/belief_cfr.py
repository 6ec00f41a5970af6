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

A pass (ranges down, values up) visits the used nodes and the rows of the actors' valid
infostates depth by depth (:class:`~sog.search.pool.depth_order.DepthOrder`), each once: a node
step moves [2, S] ranges or values, a row step one infostate's [A] actions, along the row's map to
the children its actions reach (:attr:`~sog.search.pool.beliefs.BeliefTree.row_child`): going
down the row pushes r_i(p, s) pi(a | s) into the children, going up it gathers Q_i(s, a) from
them. So a pass costs the grown tree and its valid infostates, not height x capacity nor the
pool's [P, S, A] layout. Nothing in a search's pass runs over the whole pool (it writes into the
:class:`PassArrays` the search keeps; a pass given none starts from zeros): a row
step reads its row's policy (regret matching of its regrets, :func:`current_policy`), and the
up pass hands each row chunk's values and action values to a ``visit`` (:func:`update_rows`:
CFR+'s regret-matching+ step and linear averaging at those rows), so one CFR+ iteration is two
passes over the grown tree.
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
from sog.search.pool import beliefs
from sog.search.pool import depth_order as depth_order_lib
from sog.search.pool import passes

matching = passes.matching  # regret matching, zero rows where nothing is legal (free slots)


def _actors(kind: chex.Array) -> chex.Array:
  """[n, 2, 1] bool: whether each player is the actor at nodes of ``kind`` [n] (neither at
  chance)."""
  return (kind[:, None] == jnp.arange(2))[..., None]


class RowsAt(NamedTuple):
  """Where a chunk's rows [C] are: ``ok`` [C] (False for padding, R), and each row (clipped), its
  node (clipped), the actor's infostate s there and the actor."""

  ok: chex.Array
  rows: chex.Array
  nodes: chex.Array
  infostates: chex.Array
  actor: chex.Array


def rows_at(tree: beliefs.BeliefTree, rows: chex.Array) -> RowsAt:
  """The :class:`RowsAt` of ``rows`` [C] (R for padding)."""
  R, P = tree.row_capacity, tree.capacity
  at = jnp.minimum(rows, R - 1)
  nodes = jnp.minimum(tree.row_node[at], P - 1)
  return RowsAt(rows < R, at, nodes, tree.row_infostate[at], jnp.clip(tree.kind[nodes], 0, 1))


def playable_rows(tree: beliefs.BeliefTree, at: RowsAt) -> chex.Array:
  """[C, A] bool: the actions CFR plays at the rows (:func:`~sog.search.pool.beliefs.playable`)."""
  restricted = tree.expanded[at.nodes] & (tree.kind[at.nodes] < public_game.CHANCE)
  legal = tree.legal[at.nodes, at.infostates]
  return legal & (tree.added[at.nodes] | ~restricted[:, None])


#: A pass's policy at a chunk's rows [C] (R for padding), [C, A], given the up pass's visit carry
#: (the rows a visit has not yet written, so a policy read from the carry is the pass's own):
#: ``policy(rows, carry)``.
Policy = Callable[[chex.Array, Any], chex.Array]


def rows_of(tree: beliefs.BeliefTree, policy: chex.Array) -> Policy:
  """The :data:`Policy` of a fixed ``policy`` [P, S, A]."""

  def at_rows(rows, carry):
    at = rows_at(tree, rows)
    return policy[at.nodes, at.infostates]

  return at_rows


class RowVisit(NamedTuple):
  """A chunk of rows of the up pass, their values final: the rows [C] (R for the chunk's padding,
  which a write with ``mode="drop"`` drops), where they are (:class:`RowsAt`), their node's
  expanded flag [C], the actor's range r_i(s) and value v_i(s) [C] at each, the opponent's range
  mass at the node [C], the actor's action values Q(s, a) [C, A] (an action not added yet, with
  k < all, takes v_i(s): what PUCT reads for it) and the pass's policy there [C, A]."""

  rows: chex.Array
  at: RowsAt
  expanded: chex.Array
  range: chex.Array
  value: chex.Array
  opponent_mass: chex.Array
  q: chex.Array
  policy: chex.Array


#: Ranges entering the tree at some nodes: (inside [P] bool, ranges [P, 2, S]); a node inside takes
#: its given ranges instead of its parent's flow (the roots of subgames solved together).
Entry = tuple[chex.Array, chex.Array] | None


class PassArrays(NamedTuple):
  """[P, 2, S] arrays a pass writes into: a search keeps them between its passes, so that no pass
  sets the whole pool (5.8 MB an array on the board at its default pool). ``out``: what the pass
  returns, set at every used slot (ranges down; values up, whose frontier leaves the leaf call set
  first); ``sums``: where the pass adds what flows into a node (the parent's rows' pushes down,
  the children's parts up), zeroed at the used slots first
  (:meth:`~sog.search.pool.depth_order.DepthOrder.zero_used`). No pass writes past the used
  slots, so a search's kept arrays stay zero there."""

  out: chex.Array
  sums: chex.Array


def fresh_arrays(
  tree: beliefs.BeliefTree, like: chex.Array, out: chex.Array | None = None
) -> PassArrays:
  """:class:`PassArrays` of zeros [P, 2, S] (S and dtype those of ``like``), ``out`` given or
  zero: a pass outside a search's loop, which keeps none."""
  zeros = jnp.zeros((tree.capacity, 2, like.shape[-1]), like.dtype)
  return PassArrays(zeros if out is None else out, zeros)


def reach_down(
  tree: beliefs.BeliefTree,
  policy: Policy,
  root_ranges: chex.Array,
  order: depth_order_lib.DepthOrder | None = None,
  carry: Any = (),
  entry: Entry = None,
  arrays: PassArrays | None = None,
) -> PassArrays:
  """Both players' ranges [P, 2, S] under ``policy`` (read from ``carry``) from ``root_ranges``
  [2, S] (and ``entry``'s at the nodes it marks), in ``out`` of ``arrays`` (None: fresh zeros)."""
  order = depth_order_lib.depth_order(tree) if order is None else order
  P = tree.capacity
  root_ranges = root_ranges.astype(tree.weight.dtype)
  if arrays is None:
    arrays = fresh_arrays(tree, root_ranges)
  root = root_ranges * tree.valid[0]

  def take(nodes, arrays):
    """The nodes' ranges: the parent actor's, pushed by its rows already; the others' passed."""
    ranges, pushed = arrays
    at = jnp.minimum(nodes, P - 1)
    parent = jnp.maximum(tree.parent[at], 0)
    new = jnp.where(_actors(tree.kind[parent]), pushed[at], tree.passes[at] * ranges[parent])
    new = jnp.where((tree.parent[at] < 0)[:, None, None], root, new)
    if entry is not None:
      new = jnp.where(entry[0][at][:, None, None], entry[1][at], new)
    return PassArrays(ranges.at[nodes].set(new, mode="drop"), pushed)

  def push(rows, arrays):
    """r_i(p, s) pi(a | s) into the actor's infostate in each child (s, a) reaches."""
    ranges, pushed = arrays
    at = rows_at(tree, rows)
    flow = policy(rows, carry) * ranges[at.nodes, at.actor, at.infostates][:, None]  # [C, A]
    children = jnp.where(at.ok[:, None, None], tree.row_child[at.rows], P)  # [C, A, F]
    into = tree.next_infostate[at.nodes, at.infostates][..., None]
    shape = children.shape
    pushed = pushed.at[
      children, jnp.broadcast_to(at.actor[:, None, None], shape), jnp.broadcast_to(into, shape)
    ].add(jnp.broadcast_to(flow[..., None], shape), mode="drop")
    return PassArrays(ranges, pushed)

  return order.down(take, push, arrays._replace(sums=order.zero_used(arrays.sums)))


def values_up(
  tree: beliefs.BeliefTree,
  policy: Policy,
  ranges: chex.Array,
  order: depth_order_lib.DepthOrder | None = None,
  best_response: bool | chex.Array = False,
  visit: Callable[[Any, RowVisit], Any] | None = None,
  carry: Any = (),
  arrays: PassArrays | None = None,
) -> tuple[PassArrays, Any]:
  """Counterfactual values [P, 2, S] of ``policy`` in ``out`` of ``arrays`` (None: fresh zeros),
  whose ``out`` holds the leaf values at the frontier leaves (the used nodes not expanded that are
  not terminal; :func:`sog.search.leaf_calls.call_frontier` sets them), and ``carry`` with every
  row chunk's :class:`RowVisit` folded in by ``visit`` (the CFR update, :func:`update_rows`).
  ``out`` is set at every used slot (zero at an infostate the actor cannot hold there). With
  ``best_response`` each actor plays a best response instead, max_a Q(s, a) over its playable
  actions, against the other's policy in ``ranges``: both players' best-response values (a traced
  bool too: vmapped over ``[False, True]``, one pass gives both the policy's values and the best
  responses').

  From the deepest depth up (:meth:`~sog.search.pool.depth_order.DepthOrder.up`): a depth's rows
  gather Q(s, a) from their children (final by then) and take v_i(s), then its nodes take their
  values (a terminal's payoff, a leaf's value, an interior node's actor's from its rows and the
  others' from the children's sums) and add the parts their parents do not act on into the
  parents' sums."""
  if arrays is None:
    arrays = fresh_arrays(tree, ranges)
  order = depth_order_lib.depth_order(tree) if order is None else order
  P = tree.capacity

  def gather(rows, loop):
    (values, passed), carry = loop
    at = rows_at(tree, rows)
    children = tree.row_child[at.rows]  # [C, A, F]
    into = tree.next_infostate[at.nodes, at.infostates][..., None]
    reached = values[jnp.minimum(children, P - 1), at.actor[:, None, None], into]
    q = jnp.where(children < P, reached, 0.0).sum(-1)  # [C, A]
    row_policy = policy(rows, carry)
    value = (row_policy * q).sum(-1)
    playable = playable_rows(tree, at)
    if best_response is not False:  # (traced: one pass computes both, vmapped over the flag)
      value = jnp.where(best_response, jnp.where(playable, q, -jnp.inf).max(-1), value)
    if visit is not None:
      # an action not added yet (k < all) is worth the actor's value at the node to PUCT
      unplayed = tree.legal[at.nodes, at.infostates] & ~playable
      opponent = ranges[at.nodes, 1 - at.actor].sum(-1)
      own = ranges[at.nodes, at.actor, at.infostates]
      q = jnp.where(unplayed, value[:, None], q)
      expanded = tree.expanded[at.nodes]
      carry = visit(carry, RowVisit(rows, at, expanded, own, value, opponent, q, row_policy))
    written = jnp.where(at.ok, at.nodes, P)
    values = values.at[written, at.actor, at.infostates].set(value, mode="drop")
    return PassArrays(values, passed), carry

  def take(nodes, loop):
    (values, passed), carry = loop
    at = jnp.minimum(nodes, P - 1)
    kind = tree.kind[at]
    terminal = (kind == public_game.TERMINAL)[:, None, None]
    leaf = values[at]  # set at a frontier leaf by the leaf call
    base = jnp.where(terminal, propagation.payoff_values(tree.payoff[at], ranges[at], jnp), leaf)
    # the actor's from its rows (zero at infostates it cannot hold, which have none)
    own = jnp.where(tree.valid[at], values[at], 0.0)
    interior = jnp.where(_actors(kind), own, passed[at])
    value = jnp.where(tree.expanded[at][:, None, None], interior, base)
    # the root and a chunk's padding send nothing
    parent = jnp.where((nodes < P) & (tree.parent[at] >= 0), tree.parent[at], P)
    part = tree.passes[at] * tree.probability[at][:, None, None] * value
    passed = passed.at[parent].add(part, mode="drop")
    return PassArrays(values.at[nodes].set(value, mode="drop"), passed), carry

  arrays = arrays._replace(sums=order.zero_used(arrays.sums))
  return order.up(take, gather, (arrays, carry))


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
  search's current policy), at the rows it is asked for."""

  def at_rows(rows, state):
    at = rows_at(tree, rows)
    return matching(state.regrets[at.nodes, at.infostates], playable_rows(tree, at))

  return at_rows


def update_rows(
  tree: beliefs.BeliefTree,
  state: CFRState,
  visit: RowVisit,
  updating: chex.Array,
  weight: chex.Array,
) -> CFRState:
  """Regret-matching+ and linear averaging (``weight``: t, a scalar, or [C, 1] per row) at the
  visit's rows of expanded nodes whose actor ``updating`` [2] (bool) marks, at their playable
  actions: R(s, a) <- max(R(s, a) + Q(s, a) - v(s), 0) and the policy sums gain weight
  r(s) pi(a | s) (a gain Q - v that ties zero to float64 rounding counts as zero:
  :func:`sog.search.cfr.regret_gains`)."""
  at = visit.at
  acting = at.ok & visit.expanded & updating[at.actor]
  acting = acting[:, None] & playable_rows(tree, at)
  regrets = state.regrets[at.nodes, at.infostates]
  sums = state.policy_sums[at.nodes, at.infostates]
  gains = cfr.regret_gains(visit.q, visit.value[:, None])
  regrets = jnp.where(acting, jnp.maximum(regrets + gains, 0.0), regrets)
  sums = jnp.where(acting, sums + weight * visit.range[:, None] * visit.policy, sums)
  written = jnp.where(at.ok, at.nodes, tree.capacity)
  return state.replace(
    regrets=state.regrets.at[written, at.infostates].set(regrets, mode="drop"),
    policy_sums=state.policy_sums.at[written, at.infostates].set(sums, mode="drop"),
  )


def iteration(
  tree: beliefs.BeliefTree,
  state: CFRState,
  root_ranges: chex.Array,
  updates: cfr.Updates,
  order: depth_order_lib.DepthOrder | None = None,
  entry: Entry = None,
) -> CFRState:
  """One CFR+ iteration on the whole pool: player 0 then player 1 (``"alternating"``), or both
  from one pass (``"simultaneous"``); ``order`` is the tree's
  :func:`~sog.search.pool.depth_order.depth_order` (computed when None; a loop over a fixed tree
  computes it once); ``entry``: ranges entering at some nodes, as in :func:`reach_down`."""
  weight = (state.iteration + 1).astype(tree.weight.dtype)
  groups = ((0,), (1,)) if updates == "alternating" else ((0, 1),)
  order = depth_order_lib.depth_order(tree) if order is None else order
  policy = current_policy(tree)
  for group in groups:
    updating = jnp.isin(jnp.arange(2), jnp.asarray(group))
    ranges = reach_down(tree, policy, root_ranges, order, state, entry).out
    _, state = values_up(
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
