"""Leduc hold'em with OpenSpiel's rules.

Six cards, J J Q Q K K (ids 0..5, rank = id // 2); ante 1; a raise is 2 in round 1 and 4 in round 2;
at most 2 raises a round; player 0 acts first in both rounds; one public card is dealt between the
rounds. A pair with the public card wins, otherwise the higher rank; equal ranks split. Actions are
OpenSpiel's (0 = fold, 1 = call/check, 2 = raise). A public state is (round-1 actions, public card,
round-2 actions); a player's infostate is their private card.
"""

from __future__ import annotations

import numpy as np

from sog.games import rules as rules_lib

FOLD, CALL, RAISE = 0, 1, 2
_NUM_CARDS = 6
_RAISE_SIZES = (2, 4)
_MAX_RAISES = 2
_MAX_ROUND_ACTIONS = 4
_NO_CARD = -1


def _round_over(actions: tuple[int, ...]) -> bool:
  return len(actions) >= 2 and actions[-1] == CALL


def _contributions(state) -> list[int]:
  """Chips each player has put in so far."""
  chips = [1, 1]
  for round_index, actions in enumerate((state[0], state[2])):
    for i, action in enumerate(actions):
      player = i % 2
      if action == CALL:
        chips[player] = max(chips)
      elif action == RAISE:
        chips[player] = max(chips) + _RAISE_SIZES[round_index]
  return chips


class LeducPoker(rules_lib.GameRules):
  name = "leduc_poker"
  num_infostates = (_NUM_CARDS, _NUM_CARDS)
  num_actions = 3

  def initial_state(self):
    return ((), _NO_CARD, ())

  def deal_probabilities(self) -> np.ndarray:
    deal = np.ones((_NUM_CARDS, _NUM_CARDS)) - np.eye(_NUM_CARDS)
    return deal / deal.sum()

  def kind(self, state) -> int:
    round1, board, round2 = state
    if FOLD in round1 + round2:
      return rules_lib.TERMINAL
    if board == _NO_CARD:
      return rules_lib.CHANCE if _round_over(round1) else len(round1) % 2
    return rules_lib.TERMINAL if _round_over(round2) else len(round2) % 2

  def _current_round(self, state) -> tuple[int, ...]:
    return state[0] if state[1] == _NO_CARD else state[2]

  def legal_actions(self, state, infostate):
    actions = self._current_round(state)
    chips = _contributions(state)
    legal = [FOLD] if chips[0] != chips[1] else []
    legal.append(CALL)
    if actions.count(RAISE) < _MAX_RAISES:
      legal.append(RAISE)
    return legal

  def outcomes(self, state, infostate, action):
    round1, board, round2 = state
    child = (
      ((*round1, action), board, round2)
      if board == _NO_CARD
      else (round1, board, (*round2, action))
    )
    return (rules_lib.ActionOutcome(action, child, infostate),)

  def chance_outcomes(self, state):
    return tuple(
      rules_lib.ChanceOutcome(card, (state[0], card, ()), 1.0 / _NUM_CARDS)
      for card in range(_NUM_CARDS)
    )

  def chance_likelihood(self, state, observation, infostate_0, infostate_1) -> float:
    if observation in (infostate_0, infostate_1):
      return 0.0
    return 1.0 / (_NUM_CARDS - 2)

  def utility(self, state, infostate_0, infostate_1) -> float:
    round1, board, round2 = state
    chips = _contributions(state)
    actions = round1 + round2 if board != _NO_CARD else round1
    if actions[-1] == FOLD:
      folder = (len(round2 if board != _NO_CARD else round1) - 1) % 2
      return -chips[0] if folder == 0 else chips[1]
    ranks = (infostate_0 // 2, infostate_1 // 2, board // 2)
    strength = [(ranks[p] == ranks[2], ranks[p]) for p in (0, 1)]
    if strength[0] == strength[1]:
      return 0.0
    return chips[1] if strength[0] > strength[1] else -chips[0]

  def encoding_size(self) -> int:
    return (_NUM_CARDS + 1) + 2 + 2 + 2 * _MAX_ROUND_ACTIONS * 3

  def encode(self, state) -> np.ndarray:
    round1, board, round2 = state
    board_code = np.zeros(_NUM_CARDS + 1, np.float32)
    board_code[board] = 1.0  # index -1 marks "no public card yet"
    round_code = np.eye(2, dtype=np.float32)[0 if board == _NO_CARD else 1]
    chips = np.asarray(_contributions(state), np.float32) / 13.0
    history = np.zeros((2, _MAX_ROUND_ACTIONS, 3), np.float32)
    for r, actions in enumerate((round1, round2)):
      history[r, np.arange(len(actions)), list(actions)] = 1.0
    return np.concatenate([board_code, round_code, chips, history.ravel()])

  def action_name(self, action: int) -> str:
    return ("fold", "call", "raise")[action]
