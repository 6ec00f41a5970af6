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

import jax.numpy as jnp
import numpy as np

import sog.games

CHECK, BET = 0, 1  # facing a bet the same actions read fold and call
_LONGEST_LINE = 3


class OneCardPoker(sog.games.PublicGame):
  """The game as pure JAX functions of a public state: the betting line ([3] int32, -1 after its
  end). A player's infostate is its card; public child k is action k (everyone sees the bets)."""

  num_actions = 2
  max_children = 2  # the most public children a state has: one per action
  encoding_size = 2 * _LONGEST_LINE
  utility_scale = 2.0  # max |utility|: a called bet
  max_moves = _LONGEST_LINE  # the longest betting line: check, bet, call

  def __init__(self, cards: int = 4):
    self.cards = cards
    self.name = f"one_card_poker(cards={cards})"  # the canonical name `load` gives
    self.num_infostates = (cards, cards)

  def deal(self) -> np.ndarray:
    deal = 1.0 - np.eye(self.cards)  # two distinct cards, every pair equally likely
    return deal / deal.sum()

  def root(self):
    return jnp.full(_LONGEST_LINE, -1, jnp.int32)

  def kind(self, line):
    length = (line >= 0).sum()
    # Over after check-check, bet-check and bet-bet, and always after three actions.
    over = (length == 3) | ((length == 2) & ~((line[0] == CHECK) & (line[1] == BET)))
    return jnp.where(over, sog.games.TERMINAL, length % 2).astype(jnp.int32)

  def legal(self, line):
    # [S, A]: both actions at every card, while a player acts.
    acting = self.kind(line) < sog.games.CHANCE
    return jnp.broadcast_to(acting, (self.cards, self.num_actions))

  def transitions(self, line):
    # The action is public and the actor keeps its card: child k is action k.
    return sog.games.action_children(self, self.legal(line))

  def child(self, line, k):
    return line.at[(line >= 0).sum()].set(k, mode="drop")

  def utility(self, line):
    # [S, S]: player 0's payoff for each pair of cards.
    length = (line >= 0).sum()
    bet = (line == BET).any()
    last = line[jnp.maximum(length - 1, 0)]
    folded = jnp.where(length % 2 == 0, 1.0, -1.0)  # whoever bet last takes the antes
    stake = jnp.where(bet, 2.0, 1.0)
    cards = jnp.arange(self.cards)
    showdown = jnp.where(cards[:, None] > cards[None, :], stake, -stake)
    return jnp.where((last == CHECK) & bet, folded, showdown)

  def encode(self, line):
    # One-hot action per position of the line.
    return (line[:, None] == jnp.arange(2)[None, :]).astype(jnp.float32).ravel()

  def action_name(self, action: int) -> str:
    return ("check", "bet")[action]


sog.games.register(
  "one_card_poker",
  OneCardPoker,
  parameters={"cards": sog.games.GameParameter(int, default=4, choices=tuple(range(3, 14)))},
  replace=True,
)  # importing the module twice (a notebook re-run) registers the same game again
