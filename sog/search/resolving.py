"""Continual re-solving (SoG, "Modified continual re-solving"): how a re-solving search starts.

After a search, a player keeps a summary: the tree's public states, and there both players' ranges
and counterfactual values under the search's average policy. At the player's next decision, at
public state s_pub, the next search starts at s_prev, the public state of the summary's tree
closest to s_pub, and grows only below s_pub (the branch s_prev -> s_pub with its other children
as frontier leaves). Safe re-solving keeps the player's own range and puts the gadget
(:mod:`sog.search.gadget`) on the opponent's: at each opponent infostate, Terminate pays the
summary's counterfactual value there, Follow enters the subgame, and the opponent's range is
alpha * (Follow probability) * p_o + (1 - alpha) * (its range in the summary), p_o the chance
weight of the infostate at s_prev. Unsafe re-solving keeps both ranges of the summary and no gadget.

:class:`ResolvingConfig` chooses among these; the belief pool keeps the summaries and plans the
starts (:mod:`sog.search.pool.belief_resolving`).
"""

from __future__ import annotations

import dataclasses

TERMINATE_VALUES = ("average", "best_response")


@dataclasses.dataclass(frozen=True)
class ResolvingConfig:
  """How a re-solving search starts.

  Attributes:
    safe: put the gadget on the opponent's range (SoG); False: unsafe re-solving, the opponent's
      range of the earlier search taken as given.
    alpha: the gadget's weight in the opponent's range, alpha * f * p_o + (1 - alpha) * r_prev (SoG
      and DeepStack use 0.5; 1 is the plain gadget with its safety guarantee).
    terminate_values: which of the earlier search's opponent values Terminate pays: "best_response"
      (the default: the opponent's counterfactual best-response values against the searcher's
      average policy, as in Burch et al.'s re-solving and DeepStack, the values the gadget's safety
      bound is stated in) or "average" (its values under both players' average policies, which
      undervalue opponent infostates the search barely reached). The frontier is valued by the
      leaf model either way; docs/results/leduc_protocol.md compares the two.
  """

  safe: bool = True
  alpha: float = 0.5
  terminate_values: str = "best_response"

  def __post_init__(self):
    if not isinstance(self.safe, bool):
      raise ValueError(f"re-solving: safe must be a bool, got {self.safe!r}")
    if not 0.0 <= self.alpha <= 1.0:
      raise ValueError(f"re-solving: alpha must be in [0, 1], got {self.alpha}")
    if self.terminate_values not in TERMINATE_VALUES:
      raise ValueError(
        f"re-solving: terminate_values must be one of {TERMINATE_VALUES}, got "
        f"{self.terminate_values!r}"
      )
