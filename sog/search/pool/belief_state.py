"""What a GT-CFR search on the belief pool carries from phase to phase, and what it returns: the
grown :class:`~sog.search.pool.beliefs.BeliefTree` with per-slot statistics beside it."""

from __future__ import annotations

from typing import Any

import chex
import jax.numpy as jnp

from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import beliefs


@chex.dataclass(frozen=True)
class BeliefSearchState:
  """A search's state (per-slot arrays over the pool's P slots).

  Attributes:
    tree: the grown public tree.
    cfr: regrets and linearly weighted policy sums [P, S, A], and the iteration t.
    root_ranges: [2, S] both players' ranges at the root.
    visits: [P, S, A] N(s, a), the walks through each infostate and action.
    prior: [P, S, A] the actor's prior policy (the leaf model's, from the node's latest pass as a
      frontier leaf; uniform over the legal actions before).
    action_values: [P, S, A] PUCT's Q: the actor's normalised action values of the latest pass.
    ranges: [P, 2, S] both players' ranges in the latest pass.
    leaf_state: a stateful leaf model's state (() for the others).
    queries: a uniform sample of the leaf queries (``nodes`` are slots).
    leaf_evaluations, leaf_calls: public belief states the leaf model was asked for, and calls.
    interior_since: [P] int32 the CFR iteration each node became interior at.
    walks, growing_walks: expansion walks made, and those that added a public state.
    rng: the search's key.
  """

  tree: beliefs.BeliefTree
  cfr: belief_cfr.CFRState
  root_ranges: chex.Array
  visits: chex.Array
  prior: chex.Array
  action_values: chex.Array
  ranges: chex.Array
  leaf_state: Any
  queries: search_types.QuerySample
  leaf_evaluations: chex.Array
  leaf_calls: chex.Array
  interior_since: chex.Array
  walks: chex.Array
  growing_walks: chex.Array
  rng: chex.Array


@chex.dataclass(frozen=True)
class BeliefSearchResult:
  """What a search on the belief pool returns (per-slot arrays over the pool's slots).

  Attributes:
    focus_policy: [S, A] the average policy at the root, for every infostate of its actor.
    focus_values: [2, S] counterfactual values of the average policy there.
    tree: the final tree (its interior nodes are ``tree.expanded``; the others it holds are
      terminals or frontier leaves).
    average_policy: [P, S, A] (meaningful at interior nodes).
    policy_sums: [P, S, A] the linearly weighted realisation weights behind it.
    ranges, values: [P, 2, S] of the average policy in the final tree.
    best_response_values: [P, 2, S] each player's best-response counterfactual values against the
      other's average policy in the final tree (frontier leaves valued as in ``values``).
    queries: a uniform sample of the leaf queries made across the search (``nodes`` are slots).
    leaf_evaluations, leaf_calls: public belief states the leaf model was asked for, and calls.
    walks, growing_walks: expansion walks made (redraws included), and those that added to the tree.
    complete: scalar bool, whether the final tree holds the root's whole game.
  """

  focus_policy: chex.Array
  focus_values: chex.Array
  tree: beliefs.BeliefTree
  average_policy: chex.Array
  policy_sums: chex.Array
  ranges: chex.Array
  values: chex.Array
  best_response_values: chex.Array
  queries: search_types.QuerySample
  leaf_evaluations: chex.Array
  leaf_calls: chex.Array
  walks: chex.Array
  growing_walks: chex.Array
  complete: chex.Array

  @property
  def nodes(self) -> chex.Array:
    """The public states in the final tree."""
    return jnp.minimum(self.tree.num_nodes, self.tree.capacity)
