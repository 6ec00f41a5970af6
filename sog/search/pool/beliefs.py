"""The node pool for any game: public states with both players' infostates, grown from a
:class:`~sog.games.public_game.PublicGame`'s functions without enumerating its tree.

A :class:`BeliefTree` holds in P fixed slots the public states a search has added, and for each the
structure CFR needs over infostates (DESIGN.md, "The game model"): the pair weight W(s0, s1) (the
chance weight of a world state relative to the product of the prior marginals, zero where the pair
is impossible), the actor's legal actions per infostate, and the edge from its parent: which of the
parent actor's (s, a) lead to it (the actor's range flows down through those, into the infostate
``next_infostate`` names) and which infostates of the others pass down unchanged (the opponent's
that the child admits; both players' below a chance node, weighted there by the outcome's public
probability P(k)). Perfect information is the case S = 1.

:func:`add_children` adds the public children of a node's added actions at once, from one call of
the game's ``transitions`` (:mod:`sog.search.pool.belief_children` computes the children from the
node's world states) and ``child`` on each new child: every action in imperfect-information games
(SoG's k = all), k of them a call with k < all (perfect information's k = 1).
The children a node gets, their pair weights and edges are those the enumerating builder
(:mod:`sog.games.builder`) gives the same public states (a child no valid world state reaches is
not added), so a fully grown pool is the game's public tree in another order.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.search import batch_axis
from sog.search.pool import belief_children
from sog.search.pool import belief_rows
from sog.search.pool import types


@chex.dataclass(frozen=True)
class BeliefTree(types.Slots):
  """A public tree in a pool of P node slots (the root in slot 0; a node's children come after it).

  Attributes:
    states: the public states [P, ...] (a pytree; a free slot holds the root's).
    parent: [P] int32 parent slot (-1 at the root and in free slots).
    slot: [P] int32 the child slot k of the parent's transitions that holds the node.
    children: [P, K] int32 the node in each child slot (-1: none, or not added).
    depth: [P] int32 public moves below the root.
    kind: [P] int32 PLAYER_0, PLAYER_1, CHANCE or TERMINAL.
    legal: [P, S, A] bool the actor's legal actions (an infostate the actor cannot hold here takes
      the first valid one's row; action 0 alone at chance and terminal nodes, as in the search
      tables, so every row is a distribution's support).
    weight: [P, S0, S1] the pair weight W(s0, s1), over each player's own infostates (a side with
      one infostate, Scotland Yard's detectives, keeps it small; :meth:`pair_weight` pads it to
      [S, S]).
    valid: [P, 2, S] bool the infostates each player can hold at the node (W > 0 for some pair,
      :func:`valid_infostates`; kept beside W, so that reading it at a few nodes costs those).
    payoff: [P, S0, S1] W(s0, s1) u_0(s0, s1) at terminals (zero elsewhere; :func:`padded_pairs`
      pads it).
    next_infostate: [P, S, A] int32 the actor's infostate in the child that (s, a) reaches (set
      when the node's children are added).
    edges: [P, S, A] bool the parent actor's (s, a) that reach the node.
    passes: [P, 2, S] bool the infostates whose range passes down from the parent unchanged.
    probability: [P] the public probability of the chance outcome that led here (1 otherwise).
    encoding: [P, E] float32 the public state's network input (``game.encode``).
    expanded: [P] bool nodes whose children are in the tree (with k < all: the children of its
      added actions, once every valid infostate of its actor has one).
    added: [P, A] bool the actions whose children an expansion chose (every action its actor can
      take, with k = all); CFR plays only these at an expanded player node (:func:`playable`).
    row_of: [P, S] int32 the row of each infostate of the actor at a player node, once the node's
      children are added: one per valid infostate, R (none) elsewhere.
    row_start: [P] int32 the node's first row (its rows are consecutive; R: none).
    row_count: [P] int32 its rows, its actor's valid infostates (0: none).
    row_node: [R] int32 the node of each row (P: a free row).
    row_infostate: [R] int32 the actor's infostate s of each row.
    row_child: [R, A, F] int32 the children (s, a) reaches (P: none; F = ``game.max_fan_out``):
      the map a pass pushes ranges down and gathers action values up along, ``edges`` inverted.
    num_rows: int32 scalar, rows in use.
    num_nodes: int32 scalar, slots in use.
    height: int32 scalar, the deepest node's depth.
  """

  states: chex.ArrayTree
  parent: chex.Array
  slot: chex.Array
  children: chex.Array
  depth: chex.Array
  kind: chex.Array
  legal: chex.Array
  weight: chex.Array
  valid: chex.Array
  payoff: chex.Array
  next_infostate: chex.Array
  edges: chex.Array
  passes: chex.Array
  probability: chex.Array
  encoding: chex.Array
  expanded: chex.Array
  added: chex.Array
  row_of: chex.Array
  row_start: chex.Array
  row_count: chex.Array
  row_node: chex.Array
  row_infostate: chex.Array
  row_child: chex.Array
  num_rows: chex.Array
  num_nodes: chex.Array
  height: chex.Array

  @property
  def row_capacity(self) -> int:  # R
    return int(self.row_node.shape[-1])

  def pair_weight(self, nodes: chex.Array) -> chex.Array:
    """[..., S, S] W at ``nodes``, padded to S = max(S0, S1) as the game's arrays are."""
    return padded_pairs(self.weight[nodes], self.legal.shape[-2])


def padded_pairs(pairs: chex.Array, S: int) -> chex.Array:
  """``pairs`` [..., S0, S1] (a pool's W or W u_0) padded with zeros to [..., S, S]."""
  pad = [(0, 0)] * (pairs.ndim - 2) + [(0, S - pairs.shape[-2]), (0, S - pairs.shape[-1])]
  return jnp.pad(pairs, pad)


#: The most child slots an expansion steps at once (``game.child``, encoded, weighed): a node of a
#: game with more child slots than this (a large board's) gets its children a chunk at a time.
CHILDREN_PER_CHUNK = 64


#: The most entries an expansion's arrays may hold (its worlds' [S0, A, S1] and a chunk of its
#: children's [M, S, S + A]) for a pool to take a game on: about 2 GB of booleans.
MAX_EXPANSION_ENTRIES = 1 << 31


def expansion_entries(game: public_game.PublicGame) -> int:
  """The entries of one expansion's largest arrays: the node's worlds [S0, A, S1] and, for the
  child slots stepped at once (M: all K, or :data:`CHILDREN_PER_CHUNK` where K is larger), their
  pair weights, payoffs and legal actions [M, S, S + A]."""
  (S0, S1), S, A = game.num_infostates, game.max_infostates, game.num_actions
  M = min(game.max_children, CHILDREN_PER_CHUNK)
  return S0 * A * S1 + M * S * (S + A)


def valid_infostates(weight: chex.Array) -> chex.Array:
  """[n, 2, S] bool: the infostates each player can hold under pair weights ``weight`` [n, S0, S1]
  or [n, S, S] (W(s0, s1) > 0 for some s1, and for some s0), S = max(S0, S1)."""
  S = max(weight.shape[-2:])
  sums = (weight.sum(2), weight.sum(1))
  return jnp.stack([jnp.pad(x, [(0, 0), (0, S - x.shape[-1])]) > 0 for x in sums], axis=1)


def _actor_rows(legal: chex.Array, actor_valid: chex.Array) -> chex.Array:
  """``legal`` [S, A] with the rows of infostates the actor cannot hold replaced by the first
  valid one's (every row a distribution, none read)."""
  first = legal[jnp.argmax(actor_valid)]
  return jnp.where(actor_valid[:, None], legal, first[None, :])


def actor_legal(
  game: public_game.PublicGame, state: chex.ArrayTree, kind: chex.Array, weight: chex.Array
) -> chex.Array:
  """[S, A] the actor's legal actions in :class:`BeliefTree`'s convention, from the state, its kind
  and its pair weight."""
  actor_valid = valid_infostates(weight[None])[0, jnp.clip(kind, 0, 1)]
  first_action = jnp.arange(game.num_actions) == 0
  return jnp.where(
    kind < public_game.CHANCE, _actor_rows(game.legal(state), actor_valid), first_action
  )


def _node_facts(game: public_game.PublicGame, state: chex.ArrayTree, weight: chex.Array):
  """A node's kind, legal actions (:class:`BeliefTree`'s convention), payoff [S0, S1] and encoding
  from its state and pair weight [S0, S1] (or [S, S])."""
  kind = jnp.asarray(game.kind(state), jnp.int32)
  legal = actor_legal(game, state, kind, weight)
  S0, S1 = game.num_infostates
  weight = weight[:S0, :S1]
  payoff = jnp.where(
    (kind == public_game.TERMINAL) & (weight > 0), weight * game.utility(state)[:S0, :S1], 0.0
  )
  encoding = jnp.asarray(game.encode(state), jnp.float32)
  return kind, legal, payoff.astype(weight.dtype), encoding


def empty(
  game: public_game.PublicGame,
  capacity: int,
  dtype=jnp.float32,
  root: chex.ArrayTree | None = None,
  weight: chex.Array | None = None,
  every_row: bool = False,
) -> BeliefTree:
  """A pool of ``capacity`` slots holding one public state: ``root`` with pair weight ``weight``
  [S, S] (traceable; a re-solving search's s_prev), by default the game's root (after the private
  deal); ``every_row``: rows for every infostate of every slot (a whole tree's pool, which never
  runs out of them), else :func:`~sog.search.pool.belief_rows.row_capacity`'s."""
  S, A, K = game.max_infostates, game.num_actions, game.max_children
  S0, S1 = game.num_infostates
  if expansion_entries(game) > MAX_EXPANSION_ENTRIES:
    raise ValueError(
      f"{game.name}: the belief pool cannot grow this game: expanding one public state holds "
      f"[S0, A, S1] + [M, S, S + A] entries with (S0, S1)={(S0, S1)}, S={S}, A={A}, "
      f"M={min(K, CHILDREN_PER_CHUNK)} ({expansion_entries(game):.2g}, more than "
      f"{MAX_EXPANSION_ENTRIES:.2g}); its rules still play through the OpenSpiel bridge"
    )
  if (root is None) != (weight is None):
    raise ValueError("empty: give both the root's public state and its pair weight, or neither")
  if root is None:
    root, weight = game.root(), public_game.root_weight(game)
  weight = jnp.asarray(weight, dtype)
  weight = padded_pairs(weight[:S0, :S1], S)  # (a start's W past (S0, S1) is refused by GTCFR)
  kind, legal, payoff, encoding = _node_facts(game, root, weight)
  R = capacity * S if every_row else belief_rows.row_capacity(capacity, S)
  per_node = lambda fill, dtype: jnp.full(capacity, fill, dtype)  # noqa: E731
  return BeliefTree(
    states=jax.tree.map(lambda x: jnp.broadcast_to(x, (capacity, *jnp.shape(x))), root),
    parent=per_node(-1, jnp.int32),
    slot=per_node(-1, jnp.int32),
    children=jnp.full((capacity, K), -1, jnp.int32),
    depth=per_node(0, jnp.int32),
    kind=per_node(public_game.TERMINAL, jnp.int32).at[0].set(kind),
    legal=jnp.zeros((capacity, S, A), bool).at[0].set(legal),
    weight=jnp.zeros((capacity, S0, S1), dtype).at[0].set(weight[:S0, :S1]),
    valid=jnp.zeros((capacity, 2, S), bool).at[0].set(valid_infostates(weight[None])[0]),
    payoff=jnp.zeros((capacity, S0, S1), dtype).at[0].set(payoff),
    next_infostate=jnp.zeros((capacity, S, A), jnp.int32),
    edges=jnp.zeros((capacity, S, A), bool),
    passes=jnp.zeros((capacity, 2, S), bool),
    probability=jnp.ones(capacity, dtype),
    encoding=jnp.zeros((capacity, game.encoding_size), jnp.float32).at[0].set(encoding),
    expanded=per_node(False, bool),
    added=jnp.zeros((capacity, A), bool),
    row_of=jnp.full((capacity, S), R, jnp.int32),
    row_start=per_node(R, jnp.int32),
    row_count=per_node(0, jnp.int32),
    row_node=jnp.full(R, capacity, jnp.int32),
    row_infostate=jnp.zeros(R, jnp.int32),
    row_child=jnp.full((R, A, game.max_fan_out), capacity, jnp.int32),
    num_rows=jnp.int32(0),
    num_nodes=jnp.int32(1),
    height=jnp.int32(0),
  )


def can_act(tree: BeliefTree, nodes: chex.Array) -> chex.Array:
  """[n, A] bool: the actions the actor at ``nodes`` can take at one of its valid infostates."""
  actor = jnp.clip(tree.kind[nodes], 0, 1)
  valid = jnp.take_along_axis(tree.valid[nodes], actor[:, None, None], 1)[:, 0]  # [n, S]
  return (tree.legal[nodes] & valid[..., None]).any(-2)


def playable(tree: BeliefTree, nodes: chex.Array, width: int | None = None) -> chex.Array:
  """[n, S, A] bool (the first ``width`` rows: [n, width, A]): the actions CFR plays at ``nodes``:
  at an expanded player node the legal ones an expansion added (all of them with k = all),
  elsewhere every legal one (rows a policy there never reaches)."""
  restricted = tree.expanded[nodes] & (tree.kind[nodes] < public_game.CHANCE)
  legal = tree.legal[nodes] if width is None else tree.legal[nodes, :width]
  return legal & (tree.added[nodes][:, None, :] | ~restricted[:, None, None])


def add_children(
  game: public_game.PublicGame,
  tree: BeliefTree,
  node: chex.Array,
  allowed: chex.Array = True,
  actions: chex.Array | None = None,
  at_most: int | None = None,
  reserve: int | None = None,
  axis_name: str | None = None,
) -> BeliefTree:
  """Adds ``actions`` [A] bool (None: every action; all outcomes at a chance node) to ``node``'s
  added actions and, once every valid infostate of its actor has an added legal action (k < all
  expands a node over several calls), marks it expanded and adds the public children its added
  actions reach (one a valid world state reaches) that it does not hold yet, in the next free slots,
  in slot order. A terminal gets none, and nothing changes where ``allowed`` (a scalar bool,
  possibly traced) is False or the pool has too few rows left for the node's actor's valid
  infostates (:mod:`~sog.search.pool.belief_rows`); slots past the capacity are not written (the
  caller checks the capacity). ``at_most`` (static): the most children this call can add (the
  caller's bound, as :func:`~sog.search.pool.belief_expand.children_at_most` gives it). ``reserve``
  (static): add nothing unless the pool has ``reserve`` free slots for each child the call would add
  (the room later calls need for them; None: no check, an overflow then shows as ``num_nodes`` past
  the capacity). The children are stepped (``game.child``), weighed and encoded in one step (all K
  slots, or the first ``at_most`` present) where that is at most :data:`CHILDREN_PER_CHUNK` slots,
  else the children present that many at a time (in a vmapped batch of searches, ``axis_name`` its
  axis, as many times as the batch's node with the most children needs, so that the loop selects no
  tree: the extra steps write nothing)."""
  K = game.max_children
  state = jax.tree.map(lambda x: x[node], tree.states)
  kind, weight, legal = tree.kind[node], tree.pair_weight(node), tree.legal[node]
  actor = jnp.clip(kind, 0, 1)
  is_player = kind < public_game.CHANCE
  transitions = game.transitions(state)
  chosen = (
    can_act(tree, node[None])[0] if actions is None else actions & can_act(tree, node[None])[0]
  )
  needs_rows, own_valid = is_player & (tree.row_count[node] == 0), tree.valid[node, actor]
  # the node's rows, allocated as it expands: too few left, nothing is added
  allowed &= ~needs_rows | (tree.num_rows + own_valid.sum(dtype=jnp.int32) <= tree.row_capacity)
  added = jnp.where(allowed & is_player, tree.added[node] | chosen, tree.added[node])
  covered = ((legal & added).any(-1) | ~tree.valid[node, actor]).all()
  expands = allowed & (kind != public_game.TERMINAL) & (~is_player | covered)
  reached = belief_children.reached_slots(game, transitions, kind, weight, legal, added)
  exists = reached & expands & (tree.children[node] < 0)
  if reserve is not None:  # all of the node's new children, or none
    fits = tree.num_nodes + exists.sum(dtype=jnp.int32) * reserve <= tree.capacity
    allowed, expands, exists = allowed & fits, expands & fits, exists & fits
    added = jnp.where(fits, added, tree.added[node])
  count = exists.sum(dtype=jnp.int32)
  tree = belief_rows.allocate(tree, node, expands & needs_rows, own_valid)
  facts = (state, transitions, kind, weight, legal)
  bound = K if at_most is None else min(at_most, K)
  if bound == K and K <= CHILDREN_PER_CHUNK:  # every slot in one step
    picked = jnp.arange(K, dtype=jnp.int32)
    tree = _write_children(game, tree, node, facts, picked, exists, tree.num_nodes)
  elif bound <= CHILDREN_PER_CHUNK:  # the first ``at_most`` present in one step (k < all)
    picked = jnp.nonzero(exists, size=bound, fill_value=K)[0].astype(jnp.int32)
    new = jnp.arange(bound) < count
    tree = _write_children(game, tree, node, facts, picked, new, tree.num_nodes)
  else:  # the slots present in order, M at a time
    M = CHILDREN_PER_CHUNK
    order = jnp.nonzero(exists, size=K, fill_value=K)[0].astype(jnp.int32)
    order = jnp.pad(order, (0, -K % M), constant_values=K)

    def chunk(j, tree):
      picked = jax.lax.dynamic_slice(order, (j * M,), (M,))
      new = j * M + jnp.arange(M) < count
      return _write_children(game, tree, node, facts, picked, new, tree.num_nodes + j * M)

    steps = batch_axis.most((count + M - 1) // M, axis_name)
    tree = jax.lax.fori_loop(0, steps, chunk, tree)
  depth = tree.depth[node] + 1
  return tree.replace(
    next_infostate=tree.next_infostate.at[node].set(
      jnp.where(allowed & is_player, transitions.next_infostate, tree.next_infostate[node]).astype(
        jnp.int32
      )
    ),
    expanded=tree.expanded.at[node].set(tree.expanded[node] | expands),
    added=tree.added.at[node].set(added),
    num_nodes=tree.num_nodes + count,
    height=jnp.maximum(tree.height, jnp.where(count > 0, depth, 0)).astype(jnp.int32),
  )


def _write_children(game, tree, node, facts, picked, new, first_slot):
  """``tree`` with the children in slots ``picked`` [M] of ``node`` that are ``new`` [M] written
  in order from ``first_slot`` on (:func:`add_children`; ``facts``: the node's state,
  transitions, kind, pair weight and actor's legal actions)."""
  K = game.max_children
  state, transitions, kind, weight, legal = facts
  actor = jnp.clip(kind, 0, 1)
  is_player = kind < public_game.CHANCE
  slots = first_slot + jnp.cumsum(new, dtype=jnp.int32) - 1
  slots = jnp.where(new & (slots < tree.capacity), slots, tree.capacity)  # out of range: dropped
  written = slots < tree.capacity
  edges, admitted, child_weight, probability = belief_children.slot_children(
    game, transitions, kind, weight, legal, picked
  )
  opponent_row = (jnp.arange(2) != actor)[None, :, None] & admitted[:, None, :]
  passes = jnp.where(is_player, opponent_row, valid_infostates(child_weight))  # [M, 2, S]
  picked = jnp.minimum(picked, K - 1)
  kids = jax.vmap(game.child, in_axes=(None, 0))(state, picked)
  kid_kind, kid_legal, kid_payoff, kid_encoding = jax.vmap(lambda s, w: _node_facts(game, s, w))(
    kids, child_weight
  )
  put = lambda x, new: x.at[slots].set(new, mode="drop")  # noqa: E731
  M = picked.shape[0]
  return tree.replace(
    states=jax.tree.map(put, tree.states, kids),
    parent=put(tree.parent, jnp.full(M, node, jnp.int32)),
    slot=put(tree.slot, picked),
    children=tree.children.at[node, jnp.where(written, picked, K)].set(slots, mode="drop"),
    row_child=belief_rows.child_map(tree, node, edges & is_player & written[:, None, None], slots),
    depth=put(tree.depth, jnp.full(M, tree.depth[node] + 1, jnp.int32)),
    kind=put(tree.kind, kid_kind),
    legal=put(tree.legal, kid_legal),
    weight=put(tree.weight, child_weight),
    valid=put(tree.valid, valid_infostates(child_weight)),
    payoff=put(tree.payoff, kid_payoff),
    edges=put(tree.edges, edges & is_player),
    passes=put(tree.passes, passes),
    probability=put(tree.probability, probability),
    encoding=put(tree.encoding, kid_encoding),
  )


def grow_all(game: public_game.PublicGame, tree: BeliefTree) -> BeliefTree:
  """Expands every node in slot order until the tree holds the root's whole game, or until the pool
  has overflowed (then ``num_nodes`` exceeds the capacity; give it a pool with ``every_row``, whose
  rows never run out). Traceable."""

  def expand(carry):
    tree, node = carry
    return add_children(game, tree, node), node + 1

  def more(carry):
    tree, node = carry
    return (node < jnp.minimum(tree.num_nodes, tree.capacity)) & (tree.num_nodes <= tree.capacity)

  tree, _ = jax.lax.while_loop(more, expand, (tree, jnp.int32(0)))
  return tree


def paths(tree: BeliefTree) -> list[tuple[int, ...]]:
  """Each used node's sequence of child slots from the root (host side), as the enumerated tree's
  ``paths`` name public states."""
  parent, slot = np.asarray(tree.parent), np.asarray(tree.slot)
  out: list[tuple[int, ...]] = []
  for n in range(int(tree.num_nodes)):
    out.append(() if parent[n] < 0 else (*out[parent[n]], int(slot[n])))
  return out


_grow_all = jax.jit(grow_all, static_argnums=0)


def whole_tree_size(game: public_game.PublicGame, at_most: int, dtype=jnp.float32) -> int | None:
  """The number of public states in the root's whole game if it has at most ``at_most``, else
  None (grown in ``dtype``, the pair weights' of the search that asks, on a pool of the next power
  of two slots, once per game, pool size and dtype; games are hashable, as ``jit`` takes them)."""
  size = _grown_size(game, 1 << max(at_most - 1, 0).bit_length(), jnp.dtype(dtype))
  return size if size <= at_most else None


@functools.lru_cache(maxsize=64)
def _grown_size(game: public_game.PublicGame, capacity: int, dtype) -> int:
  return int(_grow_all(game, empty(game, capacity, dtype, every_row=True)).num_nodes)


def grow(game: public_game.PublicGame, capacity: int, dtype=jnp.float32) -> BeliefTree:
  """The game's whole public tree on a pool of ``capacity`` slots, grown from its functions without
  enumeration (``ValueError`` if the game has more public states than that)."""
  if not isinstance(capacity, int) or capacity < 1:
    raise ValueError(f"capacity must be a positive int, got {capacity!r}")
  tree = _grow_all(game, empty(game, capacity, dtype, every_row=True))
  if int(tree.num_nodes) > capacity:
    raise ValueError(
      f"{game.name} has more than capacity={capacity} public states; give a larger capacity"
    )
  return tree


def tree_nodes(tree: BeliefTree, public_tree: tree_lib.PublicTree) -> np.ndarray:
  """[num_nodes] int: the enumerated tree's node of each used slot (matched by path), the map that
  evaluates a pool's policy exactly on a game small enough to enumerate. ``public_tree`` is rooted
  where the pool is: the game's tree, or the subtree of the pool's root (which keeps the game's
  paths)."""
  root = tuple(public_tree.paths[0])
  return np.array([public_tree.node_of_path((*root, *path)) for path in paths(tree)], np.int64)
