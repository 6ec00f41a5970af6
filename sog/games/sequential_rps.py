"""Sequential Rock-Paper-Scissors+ (ReBeL, Brown et al. 2020, fig. 1a): the game where unsafe
re-solving fails.

RPS+ is Rock-Paper-Scissors in which a win or loss involving Scissors counts double. Played
sequentially, player 0 picks first in secret and player 1 then picks in public; the unique
equilibrium has both players mix (0.4, 0.4, 0.2) and the game's value is 0. At player 1's node every
player-1 strategy is a best response to player 0's equilibrium range, so re-solving that node from
player 0's range alone (unsafe re-solving) returns whatever the solver drifts to, typically far from
(0.4, 0.4, 0.2), and player 0 exploits it; the safe gadget, holding player 0's counterfactual values
down to those of the earlier search, restores the equilibrium.

To make player 1's decision a *re*-solve (its second search in a game, so that it starts from its
own first search's summary), player 1 first makes a forced public move, ``ready``; SoG's first
search is then at the root, and its tree grows down to player 1's RPS node.

Actions 0, 1, 2 = rock, paper, scissors (``ready`` is action 0 at the root). Player 0's infostate is
its hidden pick once made (0 before); player 1 has one infostate.
"""

from __future__ import annotations

import numpy as np

from sog.games import rules as rules_lib

ROCK, PAPER, SCISSORS = 0, 1, 2
#: Player 0's payoff for (player 0's pick, player 1's pick).
PAYOFF = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -2.0], [-2.0, 2.0, 0.0]])
_READY, _HIDDEN = "ready", "hidden"


class SequentialRPS(rules_lib.GameRules):
  name = "sequential_rps"
  num_infostates = (3, 1)
  num_actions = 3

  def initial_state(self) -> tuple:
    return ()

  def deal_probabilities(self) -> np.ndarray:
    return np.array([[1.0], [0.0], [0.0]])  # player 0 has not picked yet: infostate 0

  def kind(self, state) -> int:
    return (rules_lib.PLAYER_1, rules_lib.PLAYER_0, rules_lib.PLAYER_1, rules_lib.TERMINAL)[
      len(state)
    ]

  def legal_actions(self, state, infostate):
    return (0,) if not state else (ROCK, PAPER, SCISSORS)

  def outcomes(self, state, infostate, action):
    if not state:
      return (rules_lib.ActionOutcome(_READY, (_READY,), infostate),)
    if len(state) == 1:  # player 0's pick is private: one public outcome, the pick its infostate
      return (rules_lib.ActionOutcome(_HIDDEN, (*state, _HIDDEN), action),)
    return (rules_lib.ActionOutcome(action, (*state, action), infostate),)

  def utility(self, state, infostate_0, infostate_1) -> float:
    return float(PAYOFF[infostate_0, state[-1]])

  def encoding_size(self) -> int:
    return 4

  def encode(self, state) -> np.ndarray:
    return np.eye(4, dtype=np.float32)[len(state)]

  def action_name(self, action: int) -> str:
    return ("rock", "paper", "scissors")[action]
