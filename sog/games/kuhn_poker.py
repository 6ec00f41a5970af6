"""Kuhn poker with OpenSpiel's rules: cards J, Q, K (0, 1, 2), ante 1, one bet of 1, player 0 first.

Actions are OpenSpiel's (0 = pass, 1 = bet); a public state is the betting sequence and a player's
infostate is their card.
"""

from __future__ import annotations

import numpy as np

from sog.games import rules as rules_lib

PASS, BET = 0, 1
_NUM_CARDS = 3
_MAX_SEQUENCE = 3


class KuhnPoker(rules_lib.GameRules):
  name = "kuhn_poker"
  num_infostates = (_NUM_CARDS, _NUM_CARDS)
  num_actions = 2

  def initial_state(self) -> tuple[int, ...]:
    return ()

  def deal_probabilities(self) -> np.ndarray:
    deal = np.ones((_NUM_CARDS, _NUM_CARDS)) - np.eye(_NUM_CARDS)
    return deal / deal.sum()

  def kind(self, state: tuple[int, ...]) -> int:
    if state in ((PASS, PASS), (BET, PASS), (BET, BET), (PASS, BET, PASS), (PASS, BET, BET)):
      return rules_lib.TERMINAL
    return len(state) % 2

  def legal_actions(self, state, infostate):
    return (PASS, BET)

  def outcomes(self, state, infostate, action):
    return (rules_lib.ActionOutcome(action, (*state, action), infostate),)

  def utility(self, state, infostate_0, infostate_1) -> float:
    if state[-1] == PASS and BET in state:  # the bet was not called: the bettor takes the ante
      return 1.0 if len(state) % 2 == 0 else -1.0
    stake = 2.0 if BET in state else 1.0
    return stake if infostate_0 > infostate_1 else -stake

  def encoding_size(self) -> int:
    return 2 * _MAX_SEQUENCE

  def encode(self, state) -> np.ndarray:
    code = np.zeros((_MAX_SEQUENCE, 2), np.float32)
    code[np.arange(len(state)), list(state)] = 1.0
    return code.ravel()

  def action_name(self, action: int) -> str:
    return ("pass", "bet")[action]
