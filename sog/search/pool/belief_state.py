"""Where a GT-CFR search on the belief pool starts, what it carries from phase to phase, and what
it returns: the grown :class:`~sog.search.pool.beliefs.BeliefTree` with per-slot statistics beside
it."""

from __future__ import annotations

from typing import Any

import chex
import jax.numpy as jnp

from sog.search import gadget as gadget_lib
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import beliefs


@chex.dataclass(frozen=True)
class BeliefStart:
  """Where a search on the belief pool starts (all arrays, so a batch of starts runs under
  ``vmap``): the pool's root, given as a public state, and the branch down to the public state the
  search decides at.

  A plain search starts at its root: the branch is empty and the focus is the root. A re-solving
  search (SoG's continual re-solving) starts at s_prev, a public state of an earlier search's tree:
  its initial tree is the branch from s_prev down to the current public state s_pub (the focus),
  every child of the branch's nodes added (the off-branch ones frontier leaves), and its simulations
  start at the focus, so the tree only grows below it.

  Attributes:
    state: the root's public state (a pytree of the game's).
    weight: [S, S] the pair weight W(s0, s1) at the root.
    branch: [D] int32 the child slots k from the root down to the focus, -1 past the end (D is
      static: the longest branch the caller plans for; 0 for plain searches).
    ranges: [2, S] both players' ranges at the root (the gadget replaces the opponent's while it is
      enabled).
    gadget: the safe re-solving gadget at the root (disabled for a plain search).
  """

  state: chex.ArrayTree
  weight: chex.Array
  branch: chex.Array
  ranges: chex.Array
  gadget: gadget_lib.Gadget


@chex.dataclass(frozen=True)
class BeliefSearchState:
  """A search's state (per-slot arrays over the pool's P slots).

  Attributes:
    tree: the grown public tree.
    cfr: regrets and linearly weighted policy sums [P, S, A], and the iteration t.
    start: where the search started (its root ranges and gadget).
    gadget: the gadget's regrets and the average of the opponent's root ranges it played.
    focus: int32 scalar, the slot of the public state the search decides at (0 for a plain
      search); its walks start there.
    subgame_from: int32 scalar, the first slot of the focus's subgame below it: every slot from
      there on descends from the focus (the branch's other children come before it).
    visits: [P, S, A] N(s, a), the walks through each infostate and action.
    prior: [P, S, A] the actor's prior policy at expanded nodes, written as a node is expanded
      (:func:`~sog.search.pool.belief_expand.expand`): the leaf model's at the node's ranges in the
      last pass that recorded the prior, where the node was a frontier leaf then, else uniform
      over the legal actions (at the focus, the call ``init`` makes); zeros elsewhere, also at
      the branch's nodes and at chance nodes opened with their parent, where no walk reads it.
    action_values: [P, S, A] PUCT's Q: the actor's normalised action values of the latest pass.
    ranges: [P, 2, S] both players' ranges in the latest pass.
    values: [P, 2, S] the counterfactual values of the latest pass (at frontier leaves its leaf
      call's; :class:`~sog.search.pool.belief_cfr.PassArrays`, which the next pass writes into).
    pushed, passed: [P, 2, S] the sums of the latest passes down and up
      (:class:`~sog.search.pool.belief_cfr.PassArrays`): the ranges the parents' rows pushed into
      each node, the values' parts the children passed up; each pass zeroes its own first.
    leaf_state: the leaf model's state (from ``LeafModel.init``; ``()`` for a model without one).
    recorded_nodes: int32 scalar, the slots in use at the last pass that recorded the prior (the
      phase's last, which its expansions follow; 0 before the first): a node below it was a
      frontier leaf of that pass until it is expanded.
    prior_leaf_state: the leaf model's state that pass's call started from, so that an expansion's
      prior is the logits that call gave its node.
    queries: a uniform sample of the leaf queries (``nodes`` are slots).
    leaf_evaluations, leaf_calls: public belief states the leaf model was asked for, and calls
      (the passes' frontier calls and ``init``'s at the focus).
    prior_calls: the one-row calls expansions made for the prior of a node they made interior
      (with k < all: were to make interior, the call coming before the pool's room is known;
      :func:`~sog.search.pool.belief_expand.node_prior`; not among ``leaf_calls``; a search's
      own calls, in a vmapped batch too).
    interior_since: [P] int32 the CFR iteration each node became interior at.
    walks, growing_walks: expansion walks made, and those that added a public state.
    rng: the search's key.
  """

  tree: beliefs.BeliefTree
  cfr: belief_cfr.CFRState
  start: BeliefStart
  gadget: gadget_lib.GadgetState
  focus: chex.Array
  subgame_from: chex.Array
  visits: chex.Array
  prior: chex.Array
  action_values: chex.Array
  ranges: chex.Array
  values: chex.Array
  pushed: chex.Array
  passed: chex.Array
  leaf_state: Any
  recorded_nodes: chex.Array
  prior_leaf_state: Any
  queries: search_types.QuerySample
  leaf_evaluations: chex.Array
  leaf_calls: chex.Array
  prior_calls: chex.Array
  interior_since: chex.Array
  walks: chex.Array
  growing_walks: chex.Array
  rng: chex.Array


@chex.dataclass(frozen=True)
class BeliefSearchResult:
  """What a search on the belief pool returns (per-slot arrays over the pool's slots).

  Attributes:
    focus_policy: [S, A] the average policy at the focus, for every infostate of its actor.
    focus_values: [2, S] counterfactual values of the average policy there.
    focus: int32 scalar, the focus's slot.
    tree: the final tree (its interior nodes are ``tree.expanded``; the others it holds are
      terminals or frontier leaves).
    average_policy: [P, S, A] (meaningful at interior nodes).
    policy_sums: [P, S, A] the linearly weighted realisation weights behind it.
    ranges, values: [P, 2, S] of the average policy in the final tree.
    best_response_values: [P, 2, S] each player's best-response counterfactual values against the
      other's average policy in the final tree (frontier leaves valued as in ``values``).
    queries: a uniform sample of the leaf queries made across the search (``nodes`` are slots).
    leaf_evaluations, leaf_calls: public belief states the leaf model was asked for, and calls
      (the passes' frontier calls, ``init``'s and ``finish``'s).
    prior_calls: the expansions' one-row calls for the prior of a node they made interior (with
      k < all: were to; one public belief state each; not among ``leaf_calls`` and
      ``leaf_evaluations``; the search's own, in a vmapped batch too).
    walks, growing_walks: expansion walks made (redraws included), and those that added to the tree.
    complete: scalar bool, whether the final tree holds the focus's whole subgame.
  """

  focus_policy: chex.Array
  focus_values: chex.Array
  focus: chex.Array
  tree: beliefs.BeliefTree
  average_policy: chex.Array
  policy_sums: chex.Array
  ranges: chex.Array
  values: chex.Array
  best_response_values: chex.Array
  queries: search_types.QuerySample
  leaf_evaluations: chex.Array
  leaf_calls: chex.Array
  prior_calls: chex.Array
  walks: chex.Array
  growing_walks: chex.Array
  complete: chex.Array

  @property
  def expanded(self) -> chex.Array:
    """[P] bool: the interior public states of the final tree (the branch's included)."""
    return self.tree.expanded

  @property
  def nodes(self) -> chex.Array:
    """The public states in the final tree."""
    return jnp.minimum(self.tree.num_nodes, self.tree.capacity)
