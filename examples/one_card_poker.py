"""One-card poker with N cards: Kuhn poker's betting over a deck of N ranks (a game written outside
sog).

Each player antes 1 and is dealt one of N distinct cards (0 is the lowest). Player 0 checks or bets
1; after a check, player 1 checks (showdown for the antes) or bets 1; facing a bet, a player folds
(the bettor takes the antes) or calls (showdown for 2 each). With N = 3 this is Kuhn poker, action
for action, which is how the tests check it. ``docs/guide/adding_a_game.md`` walks through it.

Importing the module registers ``one_card_poker`` (``cards`` 3 to 13, default 4)::

  import sog.games
  sog.games.import_game_modules(["examples/one_card_poker.py"])   # or: import one_card_poker
  game = sog.games.load("one_card_poker(cards=5)")

and scripts take it with
``--game_module=examples/one_card_poker.py --game="one_card_poker(cards=5)"``.
"""

from __future__ import annotations

import numpy as np

import sog.games

CHECK, BET = 0, 1  # facing a bet the same actions read fold and call
_TERMINAL_LINES = ((CHECK, CHECK), (BET, CHECK), (BET, BET), (CHECK, BET, CHECK), (CHECK, BET, BET))
_LONGEST_LINE = 3


class OneCardPoker(sog.games.GameRules):
  """The rules: a public state is the betting line (a tuple of actions), an infostate a card."""

  num_actions = 2

  def __init__(self, cards: int = 4):
    self.cards = cards
    self.name = f"one_card_poker(cards={cards})"  # the canonical name `load` gives
    self.num_infostates = (cards, cards)

  def initial_state(self) -> tuple[int, ...]:
    return ()

  def deal_probabilities(self) -> np.ndarray:
    deal = 1.0 - np.eye(self.cards)  # two distinct cards, every pair equally likely
    return deal / deal.sum()

  def kind(self, state: tuple[int, ...]) -> int:
    if state in _TERMINAL_LINES:
      return sog.games.TERMINAL
    return sog.games.PLAYER_0 if len(state) % 2 == 0 else sog.games.PLAYER_1

  def legal_actions(self, state, infostate):
    return (CHECK, BET)

  def outcomes(self, state, infostate, action):
    # The action is public and the actor keeps its card: one outcome, the same infostate.
    return (
      sog.games.ActionOutcome(
        observation=action, next_state=(*state, action), next_infostate=infostate
      ),
    )

  def utility(self, state, infostate_0, infostate_1) -> float:
    if state[-1] == CHECK and BET in state:  # a fold: whoever bet last takes the antes
      return 1.0 if len(state) % 2 == 0 else -1.0
    stake = 2.0 if BET in state else 1.0
    return stake if infostate_0 > infostate_1 else -stake

  def encoding_size(self) -> int:
    return 2 * _LONGEST_LINE

  def encode(self, state) -> np.ndarray:
    code = np.zeros((_LONGEST_LINE, 2), np.float32)  # one-hot action per position of the line
    code[np.arange(len(state)), list(state)] = 1.0
    return code.ravel()

  def action_name(self, action: int) -> str:
    return ("check", "bet")[action]


sog.games.register(
  "one_card_poker",
  OneCardPoker,
  parameters={"cards": sog.games.GameParameter(int, default=4, choices=tuple(range(3, 14)))},
  replace=True,
)  # importing the module twice (a notebook re-run) registers the same game again
