"""The fixed-shape tables a solve runs on: the public subgame below its root, on the device.

The tables hold every public state of the root's whole subgame, enumerated once: what ReBeL's
depth-limited solves (:mod:`sog.baselines.rebel`), the exact solver (:mod:`sog.search.solver`) and
the tables' exact oracle (:func:`sog.search.leaf_models.exact_leaf_model`) run CFR+ on, and the
view a leaf model reads there. Two views of the same nodes are kept:

  * ``levels``: the per-depth :class:`~sog.games.tree.Level` tables that CFR passes walk;
  * node-global arrays (index = node of the subgame tree, breadth-first), which a leaf model and a
    world state walking down the tree (:func:`step_world`) gather from: kinds, children, infostate
    maps, pair weights W.

Per-decision statistics (regrets, policy sums) live on the M inner (non-terminal) nodes, in the CFR
state's order; ``inner_position`` maps a node to its row there.
"""

from __future__ import annotations

import itertools

import flax.struct
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.games import worlds
from sog.search import cfr


@flax.struct.dataclass
class SearchTables:
  """A public subgame as device arrays (a pytree; ``level_starts`` and the sizes are static)."""

  levels: cfr.Levels
  kind: jnp.ndarray  # [N] int8
  parent: jnp.ndarray  # [N] int32 (-1 at the root)
  ancestors: jnp.ndarray  # [N, D] int32: the node's ancestor at each level (itself at its own
  # level, -1 below it)
  valid: jnp.ndarray  # [N, 2, S] bool
  prior_weight: jnp.ndarray  # [N, 2, S]: p_i(s), the chance part of a range (tree.prior_weights)
  legal: jnp.ndarray  # [N, S, A] bool
  can_act: jnp.ndarray  # [N, A] bool: legal at some valid infostate of the node's actor
  # (player 1's rows at chance nodes and terminals)
  up_child: jnp.ndarray  # [N, A, K] int32 node index (-1: empty slot)
  up_infostate: jnp.ndarray  # [N, A, K, 2, S] int32
  up_weight: jnp.ndarray  # [N, A, K, 2, S]
  pair_weight: jnp.ndarray  # [N, S, S]: W(s0, s1), zero for impossible world states
  encoding: jnp.ndarray  # [N, E] float32: the public state's network input
  game_node: jnp.ndarray  # [N] int32: the node in the game's full tree
  inner_nodes: jnp.ndarray  # [M] int32: the node of each inner row
  inner_position: jnp.ndarray  # [N] int32: the inner row of each node (-1 for terminals)
  utility_scale: jnp.ndarray  # scalar: max |u| over terminal world states (the game's value unit)
  level_starts: tuple[int, ...] = flax.struct.field(pytree_node=False, default=())

  @property
  def num_nodes(self) -> int:
    return int(self.kind.shape[0])

  @property
  def num_inner(self) -> int:
    return int(self.inner_nodes.shape[0])

  def split(self, per_node: jnp.ndarray) -> list[jnp.ndarray]:
    """Cuts an array over the nodes into per-level pieces (static slices)."""
    return [per_node[lo:hi] for lo, hi in itertools.pairwise(self.level_starts)]

  def to_inner(self, per_node: jnp.ndarray) -> jnp.ndarray:
    """The rows of a per-node array at the inner nodes, in the CFR state's order."""
    return per_node[self.inner_nodes]


def make_tables(tree: tree_lib.PublicTree, dtype=jnp.float32) -> SearchTables:
  """The tables of ``tree`` (a game's tree or a subgame's, without depth-limit leaves)."""
  if tree.is_leaf.any():
    raise ValueError(
      "a search runs on a complete subgame: the tree must not have depth-limit leaves"
    )
  inner_nodes = np.concatenate(
    [
      start + np.arange(level.inner)
      for start, level in zip(tree.level_starts[:-1], tree.levels, strict=True)
    ]
  )
  inner_position = np.full(tree.num_nodes, -1, np.int32)
  inner_position[inner_nodes] = np.arange(inner_nodes.size, dtype=np.int32)
  actor_valid = tree.valid[np.arange(tree.num_nodes), np.clip(tree.kind, 0, 1)]  # [N, S]
  return SearchTables(
    levels=cfr.device_levels(tree, dtype),
    kind=jnp.asarray(tree.kind),
    parent=jnp.asarray(tree.parent, jnp.int32),
    ancestors=jnp.asarray(ancestors(tree)),
    valid=jnp.asarray(tree.valid),
    prior_weight=jnp.asarray(tree.prior_weight, dtype),
    legal=jnp.asarray(tree.legal),
    can_act=jnp.asarray((tree.legal & actor_valid[..., None]).any(1)),
    up_child=jnp.asarray(tree.up_child),
    up_infostate=jnp.asarray(tree.up_infostate),
    up_weight=jnp.asarray(tree.up_weight, dtype),
    pair_weight=jnp.asarray(tree.pair_weight, dtype),
    encoding=jnp.asarray(tree.encoding),
    game_node=jnp.asarray(tree.game_node),
    inner_nodes=jnp.asarray(inner_nodes, jnp.int32),
    inner_position=jnp.asarray(inner_position),
    utility_scale=jnp.asarray(tree.largest_utility(), dtype),
    level_starts=tuple(int(x) for x in tree.level_starts),
  )


def ancestors(tree: tree_lib.PublicTree) -> np.ndarray:
  """[N, D] int32: row n holds n's ancestor at each level d <= depth(n) (n itself at its own), -1
  below n's level."""
  table = np.full((tree.num_nodes, tree.num_levels), -1, np.int32)
  for d in range(tree.num_levels):
    lo, hi = tree.level_starts[d], tree.level_starts[d + 1]
    if d:  # a padding node (no parent) has no ancestors
      parent = tree.parent[lo:hi]
      table[lo:hi, :d] = np.where((parent >= 0)[:, None], table[parent, :d], -1)
    table[lo:hi, d] = np.arange(lo, hi)
  return table


def step_world(tables: SearchTables, node, s0, s1, action, rng):
  """The public child a world state (s0, s1) reaches from ``node`` by ``action`` (a chance outcome
  sampled given the world state at chance nodes, where ``action`` is ignored), and its infostates.

  Traceable: ReBeL's self-play games advance with it.
  """
  kind = tables.kind[node]
  children = tables.up_child[node]  # [A, K]
  safe = jnp.maximum(children, 0)
  weight_next = lambda t0, t1: jnp.where(children >= 0, tables.pair_weight[safe, t0, t1], 0.0)  # noqa
  # Chance: P(child | s0, s1) is proportional to P(outcome) * W_child(s0, s1). The builder puts
  # the c-th child in slot (c % A, c // A), the children in the order it appends them (the game's
  # outcome order): drawn over c, in that order.
  chance_weight = tables.up_weight[node, :, :, 0, s0] * weight_next(s0, s1)  # [A, K]
  outcome = worlds.draw_index(chance_weight.T.ravel(), rng)
  num_actions, width = children.shape
  chance_slot = (outcome % num_actions) * width + outcome // num_actions
  # A player: the slot of its action that its infostate and the opponent's world state lead to.
  actor = jnp.clip(kind, 0, 1)
  own = jnp.where(actor == 0, s0, s1)
  own_next = tables.up_infostate[node, action, :, actor, own]  # [K]
  t0 = jnp.where(actor == 0, own_next, s0)
  t1 = jnp.where(actor == 1, own_next, s1)
  fits = (tables.up_weight[node, action, :, actor, own] > 0) & (weight_next(t0, t1)[action] > 0)
  player_slot = action * children.shape[1] + jnp.argmax(fits)
  slot = jnp.where(kind == public_game.CHANCE, chance_slot, player_slot)
  k = slot % children.shape[1]
  next0 = jnp.where(actor == 0, own_next[k], s0)
  next1 = jnp.where(actor == 1, own_next[k], s1)
  is_chance = kind == public_game.CHANCE
  return children.ravel()[slot], jnp.where(is_chance, s0, next0), jnp.where(is_chance, s1, next1)


def sample_world(tables: SearchTables, node, ranges, rng):
  """A world state (s0, s1) at ``node`` drawn from both players' ``ranges`` [2, S] and the node's
  pair weights W (any possible world state if the ranges do not reach the node). Traceable."""
  return worlds.draw_world(tables.pair_weight[node], ranges, rng)
