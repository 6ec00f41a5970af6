"""The node pool a search grows (:class:`Tree`, a fixed-capacity pytree of node arrays, as mctx's
``Tree``), what a pool search carries and returns, and the leaf models it calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import chex
import jax.numpy as jnp


class Slots:
  """What a pool of P node slots answers from its ``parent`` [P] and ``num_nodes`` (the slots in
  use are the first ``num_nodes``)."""

  parent: chex.Array
  num_nodes: chex.Array

  @property
  def capacity(self) -> int:
    return int(self.parent.shape[-1])

  @property
  def used(self) -> chex.Array:
    """[P] bool: the slots holding nodes."""
    return jnp.arange(self.parent.shape[-1]) < self.num_nodes


@chex.dataclass(frozen=True)
class Tree(Slots):
  """A search tree in a pool of P node slots (slots 0..num_nodes-1 hold nodes; the root is slot 0).

  A node's children are added after it, so slot order is a topological order. Per-node statistics
  are those of the mover's one infostate (perfect information): for player 1's node they are player
  1's. Values are conditional (per unit of the opponent's reach): ``utility`` and ``leaf_values``
  are a player's expected utility at the node.

  Attributes:
    states: the game states [P, ...] (a pytree; a free slot holds the root's state).
    parent: [P] int32 parent slot (-1 at the root and in free slots).
    action: [P] int32 the action from the parent (-1 at the root).
    children: [P, A] int32 child slot of each action (-1 while the child is not in the tree).
    depth: [P] int32 plies below the root.
    kind: [P] int32 the mover (0 or 1) or TERMINAL.
    legal: [P, A] bool the mover's legal actions.
    utility: [P] player 0's utility at a terminal node.
    leaf_values: [P, 2] the leaf model's values for both players (valued once, when added).
    prior: [P, A] PUCT's prior: softmax(logits / T_prior) over the legal actions.
    expanded: [P] bool an interior node (its added actions' children are in the tree).
    added: [P, A] bool actions whose children are in the tree.
    regrets, policy_sums: [P, A] CFR+'s cumulative regrets and linearly weighted policy sums.
    visits: [P, A] expansion walks through (node, action).
    action_values: [P, A] PUCT's Q, the mover's values of the latest pass over the utility scale.
    reach: [P, 2] both players' reach probabilities in the latest pass.
    interior_since: [P] int32 the CFR iteration a node became interior at.
    num_nodes: int32 scalar, slots in use.
    height: int32 scalar, the deepest node's depth.
  """

  states: chex.ArrayTree
  parent: chex.Array
  action: chex.Array
  children: chex.Array
  depth: chex.Array
  kind: chex.Array
  legal: chex.Array
  utility: chex.Array
  leaf_values: chex.Array
  prior: chex.Array
  expanded: chex.Array
  added: chex.Array
  regrets: chex.Array
  policy_sums: chex.Array
  visits: chex.Array
  action_values: chex.Array
  reach: chex.Array
  interior_since: chex.Array
  num_nodes: chex.Array
  height: chex.Array


@chex.dataclass(frozen=True)
class PoolQueries:
  """A uniform sample (without replacement) of the frontier leaves of a search's CFR passes: the Q
  with the smallest random keys (``keys`` inf in unused rows); slots and reaches at their pass."""

  nodes: chex.Array  # [Q] int32 slots
  reach: chex.Array  # [Q, 2]
  keys: chex.Array  # [Q]


@chex.dataclass(frozen=True)
class PoolState:
  """What a pool search carries from one phase to the next."""

  tree: Tree
  iteration: chex.Array  # CFR iterations completed
  queries: PoolQueries
  leaf_evaluations: chex.Array  # states the leaf model valued
  walks: chex.Array  # expansion walks made (redraws included)
  growing_walks: chex.Array  # walks that added at least one node
  rng: chex.Array


@chex.dataclass(frozen=True)
class PoolResult:
  """A pool search's answer.

  Attributes:
    root_policy: [A] the average policy at the root (the mover's).
    root_values: [2] both players' values of the average policy at the root.
    average_policy: [P, A] at every node (over its added actions).
    values: [P, 2] conditional values of the average policy; reach: [P, 2] its reaches.
    tree: the final tree (statistics included).
    query_states: the sampled leaf queries' states [Q, ...]; query_reach [Q, 2]; query_valid [Q].
    leaf_evaluations, walks, growing_walks: counts as in :class:`PoolState`.
    complete: scalar bool, whether the tree holds the root's whole game.
  """

  root_policy: chex.Array
  root_values: chex.Array
  average_policy: chex.Array
  values: chex.Array
  reach: chex.Array
  tree: Tree
  query_states: chex.ArrayTree
  query_reach: chex.Array
  query_valid: chex.Array
  leaf_evaluations: chex.Array
  walks: chex.Array
  growing_walks: chex.Array
  complete: chex.Array

  @property
  def nodes(self) -> chex.Array:
    return self.tree.num_nodes


class PoolLeafOutput(NamedTuple):
  values: chex.Array  # [B, 2] both players' expected utilities at the states
  logits: chex.Array  # [B, A] the mover's policy logits (any value where illegal)


class PoolLeafModel(NamedTuple):
  """``apply(params, game, states [B, ...], mask [B]) -> PoolLeafOutput``; rows where ``mask`` is
  False are padding. ``game`` is the canonical name of the game the model values (None: any
  game)."""

  apply: Callable[..., PoolLeafOutput]
  params: Any = None
  game: str | None = None


def zero_pool_leaf_model() -> PoolLeafModel:
  """Every leaf is worth 0 to both players; the prior is uniform."""

  def apply(params, game, states, mask):
    del params, states
    return PoolLeafOutput(
      jnp.zeros((mask.shape[0], 2)), jnp.zeros((mask.shape[0], game.num_actions))
    )

  return PoolLeafModel(apply)
