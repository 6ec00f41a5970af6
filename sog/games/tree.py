"""The public tree of a game, enumerated into fixed-shape NumPy tables.

Nodes are public states in breadth-first order (node 0 is the root), so each depth is a contiguous
slice ``level_starts[d]:level_starts[d + 1]``; within a depth, terminal public states come last.
Every table is padded to S = max(S0, S1) infostates and A actions; ``valid`` says which infostates
can occur at a node.

Ranges and counterfactual values follow one convention everywhere in sog:
  * a range r_i(s) at a node is player i's own reach of infostate s times the prior marginal p_i(s)
    of its private state (so the root ranges of a game are its prior marginals, not all ones);
  * ``prior_weight`` p_i(s) at a node is the chance part alone: the prior mass of the private states
    the player may have started from and still hold s here (:func:`prior_weights`), the largest
    range any policy gives s. Own reach is then r_i(s) / p_i(s) in [0, 1], the unit of a probability
    the player chooses (the re-solving gadget's Follow probability);
  * the counterfactual value is per unit of own range: v_0(s0) = sum_{s1} r_1(s1) U(s0, s1) with the
    node's payoff matrix U = W * u_0, where W folds the deal's correlation (card removal) and public
    chance likelihoods into a pair weight. Then r_0 . v_0 is player 0's expected utility and
    r_0 . v_0 + r_1 . v_1 = 0 at every node (zero-sum).

Edges are stored per node as gathers (no scatter is ever needed, see :mod:`sog.games.propagation`):
  * ``src_*`` [N, 2, S, J]: the sources of infostate s of player i at a node, as (infostate, action)
    of the parent. A non-actor's (or chance's) source is its own infostate with the dummy action 0
    and weight 1 where the infostate stays valid.
  * ``up_child`` [N, A, K]: the public child in slot (a, k) of a node: the k-th child that action a
    leads to below a player node; below a chance node the children fill the slots in order.
    ``up_infostate`` and ``up_weight`` [N, A, K, 2, S] say which infostate of the child's values
    player i's infostate s reads through a slot, and with what weight: 1 on the actor's edges (s,
    a), 1 on a non-actor's first slot of each child, the chance probability below chance nodes. The
    action value is Q_i(m, s, a) = sum_k w V_i(child, s'), and a non-actor's value sums all its
    slots.
"""

from __future__ import annotations

from collections.abc import Hashable
import dataclasses
import functools

import flax.struct
import jax
import numpy as np

from sog.games import public_game


@flax.struct.dataclass
class Level:
  """The tables of one depth of the public tree (a pytree, so a search can take it as an argument).

  ``down_index`` is a flat index into the previous level's [m, 2, S, A] array of reach times policy;
  ``child_index`` the position of each slot's child in the next level, whose [2, S] value rows are
  gathered whole. The last fields are static (known at trace time) and let passes skip work a level
  does not need: ``same_infostates`` says no edge changes an infostate (poker, dice); nodes from
  ``inner`` on are terminal, and ``inner_terminals`` says some before it are too (padded batches).
  """

  kind: np.ndarray  # [n] int8
  valid: np.ndarray  # [n, 2, S] bool
  legal: np.ndarray  # [n, S, A] bool
  payoff: np.ndarray  # [n, S, S]
  is_leaf: np.ndarray  # [n] bool: a depth-limit frontier node, valued by a leaf function
  down_index: np.ndarray  # [n, 2, S, J] int32
  down_weight: np.ndarray  # [n, 2, S, J]
  child_index: np.ndarray  # [n, A, K] int32
  up_infostate: np.ndarray  # [n, A, K, 2, S] int32
  up_weight: np.ndarray  # [n, A, K, 2, S]
  same_infostates: bool = flax.struct.field(pytree_node=False, default=False)
  actors: tuple[int, ...] = flax.struct.field(pytree_node=False, default=())
  inner: int = flax.struct.field(pytree_node=False, default=0)  # nodes [inner:] are terminal
  inner_terminals: bool = flax.struct.field(pytree_node=False, default=False)

  @property
  def size(self) -> int:
    return int(self.kind.shape[0])

  def slice(self, start: int, stop: int) -> Level:
    """The nodes [start, stop) of the level (static bounds)."""
    return jax.tree_util.tree_map(lambda x: x[start:stop], self)


@dataclasses.dataclass(frozen=True, eq=False)
class PublicTree:
  """A game's (sub)tree of public states; see the module docstring for the conventions."""

  name: str
  num_infostates: tuple[int, int]
  num_actions: int
  kind: np.ndarray  # [N] int8
  depth: np.ndarray  # [N] int32, from this tree's root
  parent: np.ndarray  # [N] int32 (-1 at the root)
  valid: np.ndarray  # [N, 2, S] bool
  legal: np.ndarray  # [N, S, A] bool (the actor's; a copy of a valid row at invalid rows)
  payoff: np.ndarray  # [N, S, S] float64
  pair_weight: (
    np.ndarray
  )  # [N, S, S] float64: W of the world state (s0, s1) at the node (0: impossible)
  chance_probability: np.ndarray  # [N] float64: of the chance outcome leading here (else 1)
  is_leaf: np.ndarray  # [N] bool
  histories: np.ndarray  # [N] int64: histories at the node (for Mr X: one per path, not station)
  deal_histories: int  # chance histories of the private deal above the root (as OpenSpiel)
  encoding: np.ndarray  # [N, E] float32
  root_ranges: np.ndarray  # [2, S] float64: the prior marginals of the private states
  # The child slots from the game's root to each node (('padding', j) for a padding row).
  paths: tuple[tuple[Hashable, ...], ...]
  src_infostate: np.ndarray  # [N, 2, S, J] int32
  src_action: np.ndarray  # [N, 2, S, J] int32
  src_weight: np.ndarray  # [N, 2, S, J] float64
  up_child: np.ndarray  # [N, A, K] int32 (-1: empty slot)
  up_infostate: np.ndarray  # [N, A, K, 2, S] int32
  up_weight: np.ndarray  # [N, A, K, 2, S] float64
  game_node: np.ndarray  # [N] int32: the node's index in the game's full tree
  prior_weight: np.ndarray  # [N, 2, S] float64: the chance part of each range (see prior_weights)

  @property
  def num_nodes(self) -> int:
    return int(self.kind.shape[0])

  @property
  def max_infostates(self) -> int:
    return int(self.valid.shape[-1])

  @functools.cached_property
  def level_starts(self) -> np.ndarray:
    counts = np.bincount(self.depth)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

  @property
  def num_levels(self) -> int:
    return len(self.level_starts) - 1

  @property
  def max_moves(self) -> int:
    """The most public moves from the root to any public state (at least 1): how long a path of
    child slots must be to name every public state."""
    return max(self.num_levels - 1, 1)

  @functools.cached_property
  def levels(self) -> tuple[Level, ...]:
    return tuple(_make_level(self, d) for d in range(self.num_levels))

  @functools.cached_property
  def _node_by_path(self) -> dict[tuple[Hashable, ...], int]:
    return {path: i for i, path in enumerate(self.paths)}

  def node_of_path(self, path: tuple[Hashable, ...]) -> int:
    """The node reached by a sequence of child slots from the root; ``KeyError`` if none is."""
    return self._node_by_path[tuple(path)]

  def nodes_of_padded_paths(self, paths: np.ndarray) -> np.ndarray:
    """[B] the nodes that ``paths`` [B, L] of child slots from the root reach (-1 past a path's
    end, as self-play and the belief resolver store them)."""
    return np.array(
      [self.node_of_path(tuple(int(k) for k in path if k >= 0)) for path in paths], np.int64
    )

  def largest_utility(self) -> float:
    """max |u_0| over the terminal world states that occur (payoff = W * u_0); 1 if all are 0."""
    terminal = (self.kind == public_game.TERMINAL)[:, None, None] & (self.pair_weight > 0)
    utilities = np.abs(
      np.divide(self.payoff, self.pair_weight, out=np.zeros_like(self.payoff), where=terminal)
    )
    return float(utilities.max()) or 1.0

  def decision_infostates(self, player: int) -> np.ndarray:
    """Boolean [N, S]: the (public state, infostate) pairs where ``player`` acts."""
    return (self.kind == player)[:, None] & self.valid[:, player, :]

  def size_summary(self) -> dict[str, object]:
    """Sizes: public states (by kind), infostates per player, world states over public states."""
    by_kind = {name: int((self.kind == k).sum()) for k, name in enumerate(public_game.KIND_NAMES)}
    return {
      "public_states": self.num_nodes,
      "public_states_by_kind": by_kind,
      "infostates": [int(self.decision_infostates(p).sum()) for p in (0, 1)],
      "histories": self.deal_histories + int(self.histories.sum()),
      "depth": self.num_levels,
    }

  def descendants(self, node: int, max_depth: int | None = None) -> np.ndarray:
    """``node`` and the nodes below it (at most ``max_depth`` levels down), breadth-first."""
    inside = np.zeros(self.num_nodes, bool)
    inside[node] = True
    last = (
      self.num_levels
      if max_depth is None
      else min(self.num_levels, int(self.depth[node]) + max_depth + 1)
    )
    for d in range(int(self.depth[node]) + 1, last):
      lo, hi = self.level_starts[d], self.level_starts[d + 1]
      inside[lo:hi] = inside[self.parent[lo:hi]]
    return np.flatnonzero(inside)

  def subgame_sizes(self) -> np.ndarray:
    """[N] the public states in each node's subgame (the node included)."""
    size = np.ones(self.num_nodes, np.int64)
    for d in range(self.num_levels - 1, 0, -1):
      lo, hi = self.level_starts[d], self.level_starts[d + 1]
      np.add.at(size, self.parent[lo:hi], size[lo:hi])
    return size

  def subtree(self, node: int, max_depth: int | None = None) -> PublicTree:
    """The public subtree rooted at ``node``, cut ``max_depth`` levels down if given.

    Non-terminal nodes at the cut become leaves (``is_leaf``): a search values them with a leaf
    function. Root ranges are left as the game's priors; a subgame solve passes its own.
    """
    if not 0 <= node < self.num_nodes:
      raise ValueError(f"node {node} is not in the tree (it has {self.num_nodes} nodes)")
    if max_depth is not None and max_depth < 1:
      raise ValueError(f"max_depth must be >= 1, got {max_depth}")
    keep = self.descendants(node, max_depth)
    depth = self.depth[keep] - self.depth[node]
    cut = np.zeros(len(keep), bool) if max_depth is None else depth == max_depth
    sub = self.limited(keep, self.is_leaf[keep] | (cut & (self.kind[keep] != public_game.TERMINAL)))
    return dataclasses.replace(sub, depth=depth.astype(np.int32), deal_histories=0)

  def limited(self, nodes: np.ndarray, leaves: np.ndarray) -> PublicTree:
    """The tree of ``nodes`` (as :meth:`select`) with ``leaves`` [len(nodes)] bool made depth-limit
    leaves: their children are cut, and a search values them with a leaf function."""
    sub = self.select(nodes)
    return dataclasses.replace(
      sub,
      is_leaf=leaves,
      up_child=np.where(leaves[:, None, None], -1, sub.up_child),
      up_weight=np.where(leaves[:, None, None, None, None], 0.0, sub.up_weight),
    )

  def padded(
    self, inner: tuple[int, ...], terminal: tuple[int, ...], dummy_kinds: tuple[int, ...]
  ) -> PublicTree:
    """This tree with dummy public states added so that depth d holds ``inner[d]`` non-terminal
    nodes (the last ones dummies of kind ``dummy_kinds[d]``) then ``terminal[d]`` terminal ones (the
    last ones dummies): shapes that many subtrees share, so that one compiled search serves them
    all.

    A dummy has no valid infostate, no parent (-1: it is never added to a search's tree), no
    children, zero payoff and weights, and action 0 legal (so uniform policies stay finite); no
    range or value ever reaches it. ``game_node`` is -1 there.
    """
    levels = len(inner)
    if len(terminal) != levels or len(dummy_kinds) != levels or levels < self.num_levels:
      raise ValueError(
        f"padding needs one size per depth for all {self.num_levels} depths, got "
        f"{len(inner)} inner, {len(terminal)} terminal, {len(dummy_kinds)} kinds"
      )
    starts = np.concatenate([self.level_starts, np.full(levels - self.num_levels, self.num_nodes)])
    terminal_node = self.kind == public_game.TERMINAL
    order, kinds, depth = [], [], []
    for d in range(levels):
      nodes = np.arange(starts[d], starts[d + 1])
      blocks = (
        (nodes[~terminal_node[nodes]], inner[d], dummy_kinds[d]),
        (nodes[terminal_node[nodes]], terminal[d], public_game.TERMINAL),
      )
      for real, size, kind in blocks:
        if real.size > size:
          raise ValueError(f"depth {d} has {real.size} nodes of a kind padded to {size}")
        order.append(np.concatenate([real, np.full(size - real.size, -1)]))
        kinds.append(np.concatenate([self.kind[real], np.full(size - real.size, kind)]))
      depth.append(np.full(inner[d] + terminal[d], d))
    order = np.concatenate(order).astype(np.int64)
    if (order[:1] != 0).any():
      raise ValueError("the root's depth cannot be padded")
    real = order >= 0
    position = np.full(self.num_nodes + 1, -1, np.int32)  # slot -1 (no node) maps to -1
    position[order[real]] = np.flatnonzero(real)
    depth = np.concatenate(depth).astype(np.int32)
    fields = {}
    for f in dataclasses.fields(self):
      value = getattr(self, f.name)
      if isinstance(value, np.ndarray) and f.name != "root_ranges":
        rows = np.zeros((order.size, *value.shape[1:]), value.dtype)
        rows[real] = value[order[real]]
        fields[f.name] = rows
    dummy = ~real
    fields["kind"] = np.concatenate(kinds).astype(self.kind.dtype)
    fields["depth"] = depth
    fields["parent"] = np.where(real, position[self.parent[np.maximum(order, 0)]], -1).astype(
      np.int32
    )
    fields["up_child"] = np.where(real[:, None, None], position[fields["up_child"]], -1)
    fields["legal"][dummy, :, 0] = True
    fields["chance_probability"][dummy] = 1.0
    fields["game_node"][dummy] = -1
    paths = tuple(self.paths[i] if i >= 0 else ("padding", int(j)) for j, i in enumerate(order))
    return dataclasses.replace(self, **fields, paths=paths)

  def select(self, nodes: np.ndarray) -> PublicTree:
    """The tree of ``nodes`` in the given order; links to nodes left out become -1.

    ``nodes`` must be ordered by depth and hold the parent of every node but the first.
    """
    position = np.full(self.num_nodes + 1, -1, np.int32)  # slot -1 (no node) maps to -1
    position[nodes] = np.arange(len(nodes), dtype=np.int32)
    per_node = {
      f.name: getattr(self, f.name)[nodes]
      for f in dataclasses.fields(self)
      if isinstance(getattr(self, f.name), np.ndarray) and f.name != "root_ranges"
    }
    per_node.update(
      parent=position[self.parent[nodes]],
      up_child=position[self.up_child[nodes]],
      paths=tuple(self.paths[i] for i in nodes),
    )
    return dataclasses.replace(self, **per_node)


def _make_level(tree: PublicTree, d: int) -> Level:
  """Turns the node-global edges of depth ``d`` into gathers local to the neighbouring levels."""
  lo, hi = int(tree.level_starts[d]), int(tree.level_starts[d + 1])
  S, A = tree.max_infostates, tree.num_actions
  if d == 0:
    down_index = np.zeros_like(tree.src_infostate[lo:hi])
    down_weight = np.zeros_like(tree.src_weight[lo:hi])
  else:
    prev_lo = int(tree.level_starts[d - 1])
    # Padding nodes (no parent, zero weights) read the level above's first row.
    parent_local = (np.maximum(tree.parent[lo:hi], prev_lo) - prev_lo)[:, None, None, None]
    player = np.arange(2)[None, :, None, None]
    down_index = (
      (parent_local * 2 + player) * S + tree.src_infostate[lo:hi]
    ) * A + tree.src_action[lo:hi]
    down_weight = tree.src_weight[lo:hi]
  child = tree.up_child[lo:hi]
  has_child = child >= 0
  next_lo = int(tree.level_starts[d + 1]) if d + 1 < tree.num_levels else 0
  child_index = np.where(has_child, child - next_lo, 0)
  up_weight = np.where(has_child[..., None, None], tree.up_weight[lo:hi], 0.0)
  up_infostate = tree.up_infostate[lo:hi]
  return Level(
    kind=tree.kind[lo:hi],
    valid=tree.valid[lo:hi],
    legal=tree.legal[lo:hi],
    payoff=tree.payoff[lo:hi],
    is_leaf=tree.is_leaf[lo:hi],
    down_index=down_index.astype(np.int32),
    down_weight=down_weight,
    child_index=child_index.astype(np.int32),
    up_infostate=up_infostate,
    up_weight=up_weight,
    same_infostates=bool(((up_infostate == np.arange(S)) | (up_weight == 0)).all()),
    actors=tuple(p for p in (0, 1) if (tree.kind[lo:hi] == p).any()),
    inner=int((tree.kind[lo:hi] != public_game.TERMINAL).sum()),
    inner_terminals=False,
  )


def prior_weights(tree: PublicTree) -> np.ndarray:
  """[N, 2, S] p_i(s): the prior mass of the root infostates (private deals) r from which player i
  can hold infostate s at the node, sum_r p_i(r) [s descends from r]. Descent follows the tree's
  sources with positive weight (own moves, the opponent's, public chance). A policy's range at s
  splits over these origins and reaches each with probability at most 1, so every range is at most
  p; where an infostate has a single origin (poker's cards, a public start) p is the prior marginal
  of that origin, and where paths from several origins merge (Mr X's station after a private start)
  p sums them. ``tree`` must be ordered parents first (as every built tree is)."""
  S = tree.max_infostates
  origins = np.zeros((tree.num_nodes, 2, S, S), bool)  # [n, i, s, r]: s at n may descend from r
  origins[0] = np.eye(S, dtype=bool)[None] & tree.valid[0][..., None]
  player = np.arange(2)[None, :, None, None]
  for d in range(1, tree.num_levels):
    lo, hi = tree.level_starts[d], tree.level_starts[d + 1]
    parent = np.maximum(tree.parent[lo:hi], 0)
    sources = origins[parent[:, None, None, None], player, tree.src_infostate[lo:hi]]  # [n,2,S,J,S]
    has_parent = (tree.parent[lo:hi] >= 0)[:, None, None, None, None]
    linked = (tree.src_weight[lo:hi] > 0)[..., None] & has_parent
    origins[lo:hi] = (sources & linked).any(-2) & tree.valid[lo:hi][..., None]
  return (origins * tree.root_ranges[None, :, None, :]).sum(-1)


#: Which search a re-solve continues: the player's own last decision, or either player's.
PREDECESSORS = ("own", "nearest")


def previous_decisions(tree: PublicTree, predecessor: str = "own") -> np.ndarray:
  """[N] int: for a decision node, the search a re-solve there continues (-1: none, a root search):
  the nearest strict ancestor where the same player acts (``"own"``: the searching player's last
  decision) or where either player acts (``"nearest"``)."""
  if predecessor not in PREDECESSORS:
    raise ValueError(f"predecessor must be one of {PREDECESSORS}, got {predecessor!r}")
  last = np.full((tree.num_nodes, 2), -1, np.int64)  # per node: each player's last decision
  nearest = np.full(tree.num_nodes, -1, np.int64)  # per node: the last decision at/above
  previous = np.full(tree.num_nodes, -1, np.int64)
  for n in range(tree.num_nodes):  # parents come first (breadth-first)
    above = last[tree.parent[n]] if tree.parent[n] >= 0 else np.full(2, -1)
    nearest_above = nearest[tree.parent[n]] if tree.parent[n] >= 0 else -1
    last[n], nearest[n] = above, nearest_above
    if tree.kind[n] in (public_game.PLAYER_0, public_game.PLAYER_1):
      previous[n] = above[tree.kind[n]] if predecessor == "own" else nearest_above
      last[n, tree.kind[n]] = nearest[n] = n
  return previous
