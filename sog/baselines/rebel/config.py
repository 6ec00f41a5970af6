"""ReBeL's settings (Brown et al. 2020, sections 4-6; defaults as its Liar's Dice runs, table 2)."""

from __future__ import annotations

import dataclasses

from sog.search import cfr

PLAYS = ("random_iteration", "average")


@dataclasses.dataclass(frozen=True)
class ReBeLConfig:
  """How ReBeL solves and plays a depth-limited subgame.

  Attributes:
    depth: levels of public states below a subgame's root before its depth-limit leaves (ReBeL: 2).
      The leaves are the next subgames' roots, so the game is cut into slabs of ``depth`` levels.
    iterations: T, CFR-D iterations per subgame, each updating both players: CFR+ with linear
      averaging (iteration t's policy weighs t in the average), the leaves valued by the leaf model
      at the ranges of each iteration's current policy. ReBeL's 1,024 alternating half-steps (512
      updates per player, linear CFR; its code's ``num_iters``) are T = 512 here, the default.
    updates: "alternating" (ReBeL's, as OpenSpiel's CFR+) or "simultaneous".
    play: "random_iteration" (ReBeL's safe play, section 6): draw t with P(t) = t / sum(1..T), play
      the current policy pi^t of iteration t in the whole subgame and root the next subgames at its
      leaves with the beliefs pi^t reaches them with; over draws this plays the linear average
      policy. "average": play the average policy and pass down its beliefs (unsafe: ReBeL's
      training-time monitor; for comparison only).
  """

  depth: int = 2
  iterations: int = 512
  updates: str = "alternating"
  play: str = "random_iteration"

  def __post_init__(self):
    checks = [
      (isinstance(self.depth, int) and self.depth >= 1, "depth must be an int >= 1"),
      (isinstance(self.iterations, int) and self.iterations >= 1, "iterations must be an int >= 1"),
      (self.updates in cfr.UPDATES, f"updates must be one of {cfr.UPDATES}"),
      (self.play in PLAYS, f"play must be one of {PLAYS}"),
    ]
    for ok, message in checks:
      if not ok:
        raise ValueError(f"ReBeL config: {message}; got {self}")
