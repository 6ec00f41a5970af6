"""Exact best responses and exploitability on the public tree, vectorised, in float64 (NumPy).

Units are OpenSpiel's: ``exploitability = (BR_0 + BR_1) / 2`` for a zero-sum game (NashConv / 2),
where BR_i is player i's expected utility when best responding to the other's policy.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sog.eval import policy as policy_lib
from sog.games import propagation
from sog.games import registry
from sog.games import tree as tree_lib


@dataclasses.dataclass(frozen=True)
class Evaluation:
  """A policy evaluated against best responses at the root of a (sub)tree.

  ``values[i]`` is player i's expected utility under the policy, ``best_response[i]`` its
  best-response utility; ``root_values`` and ``best_response_root_values`` are the [2, S]
  counterfactual values.
  """

  values: np.ndarray
  best_response: np.ndarray
  root_values: np.ndarray
  best_response_root_values: np.ndarray

  @property
  def nash_conv(self) -> float:
    return float(self.best_response.sum())

  @property
  def exploitability(self) -> float:
    return self.nash_conv / 2.0

  @property
  def gains(self) -> np.ndarray:
    """How much each player gains by deviating to a best response (>= 0 up to rounding)."""
    return self.best_response - self.values


def _tree(game_or_tree: registry.Game | tree_lib.PublicTree) -> tree_lib.PublicTree:
  return game_or_tree.tree if isinstance(game_or_tree, registry.Game) else game_or_tree


def evaluate(
  game_or_tree: registry.Game | tree_lib.PublicTree,
  policy: np.ndarray,
  root_ranges: np.ndarray | None = None,
) -> Evaluation:
  """Values of ``policy`` and of both best responses to it, from ``root_ranges`` (default: priors).

  Depth-limit leaves are not allowed: evaluate on a tree that reaches terminals.
  """
  tree = _tree(game_or_tree)
  if tree.is_leaf.any():
    raise ValueError("exact evaluation needs a tree without depth-limit leaves")
  policy = policy_lib.check_policy(tree, policy)
  ranges0 = tree.root_ranges if root_ranges is None else check_ranges(tree, root_ranges)
  levels = tree.levels  # float64 tables
  per_level = propagation.split_levels(tree, policy)
  ranges = propagation.reach_down(levels, per_level, ranges0, np)
  values, _ = propagation.values_up(levels, per_level, ranges, np)
  best, _ = propagation.values_up(levels, per_level, ranges, np, best_response=(True, True))
  root_ranges_ = ranges[0][0]
  return Evaluation(
    values=(root_ranges_ * values[0][0]).sum(-1),
    best_response=(root_ranges_ * best[0][0]).sum(-1),
    root_values=values[0][0],
    best_response_root_values=best[0][0],
  )


def best_response_policy(
  game_or_tree: registry.Game | tree_lib.PublicTree, policy: np.ndarray, player: int
) -> np.ndarray:
  """``policy`` [N, S, A] with ``player``'s rows replaced by a pure best response to the other
  player's rows (at every infostate of the player, reached or not; ties go to the lowest action)."""
  if player not in (0, 1):
    raise ValueError(f"player must be 0 or 1, got {player!r}")
  tree = _tree(game_or_tree)
  if tree.is_leaf.any():
    raise ValueError("a best response needs a tree without depth-limit leaves")
  policy = policy_lib.check_policy(tree, policy)
  levels = tree.levels
  per_level = propagation.split_levels(tree, policy)
  ranges = propagation.reach_down(levels, per_level, tree.root_ranges, np)
  _, q_values = propagation.values_up(
    levels, per_level, ranges, np, best_response=(player == 0, player == 1)
  )
  response = policy.copy()
  for d, (level, q) in enumerate(zip(levels, q_values, strict=True)):
    if q is None:
      continue
    nodes = tree.level_starts[d] + np.arange(level.inner)
    own = tree.kind[nodes] == player
    best = np.where(tree.legal[nodes], q[:, player], -np.inf).argmax(-1)  # [inner, S]
    one_hot = np.eye(tree.num_actions)[best]
    response[nodes[own]] = one_hot[own]
  return response


def exploitability(game_or_tree: registry.Game | tree_lib.PublicTree, policy: np.ndarray) -> float:
  """OpenSpiel-compatible exploitability (NashConv / 2) of a full-game policy."""
  return evaluate(game_or_tree, policy).exploitability


def check_ranges(tree: tree_lib.PublicTree, ranges: np.ndarray) -> np.ndarray:
  """Returns root ranges [2, S] as float64; raises ``ValueError`` for a bad shape or value."""
  ranges = np.asarray(ranges, dtype=np.float64)
  expected = (2, tree.max_infostates)
  if ranges.shape != expected:
    raise ValueError(
      f"ranges must have shape [2, infostates] = {list(expected)}, got {list(ranges.shape)}"
    )
  if not np.all(np.isfinite(ranges)) or ranges.min() < 0:
    raise ValueError("ranges must be finite and non-negative")
  valid = tree.valid[0]
  if (ranges * ~valid).max() > 0:
    raise ValueError("ranges put weight on infostates that cannot occur at this public state")
  if not np.all((ranges * valid).sum(-1) > 0):
    raise ValueError("each player's range must put positive weight on some valid infostate")
  return ranges
