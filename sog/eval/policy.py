"""Tabular policies over a public tree: an array [N, S, A] of the acting player's action
probabilities.

Row (n, s) is the policy of the player who acts at public state n when its infostate is s. Rows at
chance and terminal nodes, and at infostates that cannot occur, are ignored by every computation.
"""

from __future__ import annotations

import numpy as np

from sog.games import propagation
from sog.games import public_game
from sog.games import tree as tree_lib


def decision_rows(tree: tree_lib.PublicTree) -> np.ndarray:
  """Boolean [N, S]: the rows a policy must define (a player acts at a valid infostate)."""
  return tree.decision_infostates(public_game.PLAYER_0) | tree.decision_infostates(
    public_game.PLAYER_1
  )


def uniform_policy(tree: tree_lib.PublicTree) -> np.ndarray:
  legal = tree.legal.astype(np.float64)
  return legal / legal.sum(-1, keepdims=True)


def random_policy(
  tree: tree_lib.PublicTree, rng: np.random.Generator, concentration: float = 1.0
) -> np.ndarray:
  """A policy with every legal row drawn from a Dirichlet distribution."""
  weights = rng.gamma(concentration, size=tree.legal.shape) * tree.legal
  weights = np.where(weights.sum(-1, keepdims=True) > 0, weights, tree.legal)
  return weights / weights.sum(-1, keepdims=True)


def check_policy(tree: tree_lib.PublicTree, policy: np.ndarray, atol: float = 1e-6) -> np.ndarray:
  """Returns ``policy`` as float64 after checking it; raises ``ValueError`` naming the problem."""
  policy = np.asarray(policy, dtype=np.float64)
  expected = tree.legal.shape
  if policy.shape != expected:
    raise ValueError(
      f"policy for {tree.name} must have shape [public states, infostates, actions] = "
      f"{list(expected)}, got {list(policy.shape)}"
    )
  rows = decision_rows(tree)
  used = policy[rows]
  if not np.all(np.isfinite(used)) or used.min(initial=0.0) < 0:
    raise ValueError("policy has negative or non-finite probabilities")
  illegal = np.abs(np.where(tree.legal[rows], 0.0, used)).max(initial=0.0)
  if illegal > atol:
    raise ValueError(f"policy puts probability {illegal:.3g} on an illegal action")
  error = np.abs(used.sum(-1) - 1.0)
  if error.max(initial=0.0) > atol:
    n, s = np.argwhere(rows)[int(error.argmax())]
    raise ValueError(
      f"policy rows must be distributions over legal actions; row (public state {n}, "
      f"infostate {s}) sums to {used.sum(-1)[error.argmax()]:.6g}"
    )
  return policy


def normalised(policy: np.ndarray, legal: np.ndarray) -> np.ndarray:
  """``policy`` [..., A] restricted to ``legal`` and renormalised (uniform over legal where it has
  no mass there), float64."""
  policy = np.where(legal, np.asarray(policy, np.float64), 0.0)
  total = policy.sum(-1, keepdims=True)
  uniform = legal / np.maximum(legal.sum(-1, keepdims=True), 1)
  return np.where(total > 0, policy / np.where(total > 0, total, 1.0), uniform)


def mixture(
  tree: tree_lib.PublicTree, policies: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
  """The behavioural policy [N, S, A] of drawing one of ``policies`` [K, N, S, A] (with
  probabilities ``weights`` [K], default uniform) once for the whole game: at each infostate, the
  policies weighted by ``weights`` times the actor's own reach under each (Kuhn's theorem). ReBeL's
  table 2 averages its sampled plays this way; PSRO plays its population's meta-strategy this
  way."""
  policies = np.asarray(policies, np.float64)
  weights = (
    np.full(len(policies), 1.0 / len(policies))
    if weights is None
    else np.asarray(weights, np.float64)
  )
  if weights.shape != (len(policies),) or weights.min() < 0 or not np.isclose(weights.sum(), 1.0):
    raise ValueError(
      f"weights must be a distribution over the {len(policies)} policies, got {weights}"
    )
  reach = np.stack(
    [
      np.concatenate(
        propagation.reach_down(tree.levels, propagation.split_levels(tree, p), tree.root_ranges, np)
      )
      for p in policies
    ]
  )
  actor = np.clip(tree.kind, 0, 1)
  own = np.take_along_axis(reach, actor[None, :, None, None], axis=2)[:, :, 0]  # [K, N, S]
  own = own * weights[:, None, None]
  mixed = (own[..., None] * policies).sum(0)
  total = own.sum(0)[..., None]
  fallback = np.tensordot(weights, policies, axes=1)
  return np.where(total > 0, mixed / np.where(total > 0, total, 1.0), fallback)
