"""Leduc hold'em with OpenSpiel's rules.

Six cards, J J Q Q K K (ids 0..5, rank = id // 2); ante 1; a raise is 2 in round 1 and 4 in round 2;
at most 2 raises a round; player 0 acts first in both rounds; one public card is dealt between the
rounds. A pair with the public card wins, otherwise the higher rank; equal ranks split. Actions are
OpenSpiel's (0 = fold, 1 = call/check, 2 = raise). A public state is both rounds' actions and the
public card (:class:`LeducState`); a player's infostate is their private card. Public child k is
action k below a player node and card k below the chance node.
"""

from __future__ import annotations

import chex
import flax.struct
import jax.numpy as jnp
import numpy as np

from sog.games import public_game

FOLD, CALL, RAISE = 0, 1, 2
_NUM_CARDS = 6
_RAISE_SIZES = (2, 4)
_MAX_RAISES = 2
_MAX_ROUND_ACTIONS = 4
_NO_CARD = -1


@flax.struct.dataclass
class LeducState:
  """A Leduc public state.

  Attributes:
    history: [2, 4] int32, each round's actions (-1 after its end).
    board: int32, the public card, or -1 before it is dealt.
  """

  history: chex.Array
  board: chex.Array

  @property
  def round(self) -> chex.Array:
    """0 before the public card, 1 after."""
    return (self.board != _NO_CARD).astype(jnp.int32)

  @property
  def lengths(self) -> chex.Array:
    """[2]: the number of actions in each round."""
    return (self.history >= 0).sum(-1)


def _contributions(state: LeducState) -> chex.Array:
  """[2]: the chips each player has put in so far."""
  chips = jnp.ones(2)
  for round_index, raise_size in enumerate(_RAISE_SIZES):
    for i in range(_MAX_ROUND_ACTIONS):
      action = state.history[round_index, i]
      called = chips.at[i % 2].set(chips.max())
      raised = chips.at[i % 2].set(chips.max() + raise_size)
      chips = jnp.where(action == CALL, called, jnp.where(action == RAISE, raised, chips))
  return chips


class LeducPoker(public_game.PublicGame):
  name = "leduc_poker"
  num_infostates = (_NUM_CARDS, _NUM_CARDS)
  num_actions = 3
  max_children = max_chance_outcomes = _NUM_CARDS
  encoding_size = (_NUM_CARDS + 1) + 2 + 2 + 2 * _MAX_ROUND_ACTIONS * 3
  utility_scale = 13.0  # the ante and two raises a round, called: 1 + 2 * 2 + 2 * 4
  max_moves = 2 * 4 + 1  # check, raise, raise, call in both rounds, and the public card

  def deal(self) -> np.ndarray:
    deal = np.ones((_NUM_CARDS, _NUM_CARDS)) - np.eye(_NUM_CARDS)
    return deal / deal.sum()

  def root(self) -> LeducState:
    return LeducState(
      history=jnp.full((2, _MAX_ROUND_ACTIONS), -1, jnp.int32), board=jnp.int32(_NO_CARD)
    )

  def kind(self, state: LeducState) -> chex.Array:
    actions = state.history[state.round]
    length = state.lengths[state.round]
    round_over = (length >= 2) & (actions[jnp.maximum(length - 1, 0)] == CALL)
    over_kind = jnp.where(state.round == 0, public_game.CHANCE, public_game.TERMINAL)
    kind = jnp.where(round_over, over_kind, length % 2)
    return jnp.where((state.history == FOLD).any(), public_game.TERMINAL, kind).astype(jnp.int32)

  def legal(self, state: LeducState) -> chex.Array:
    chips = _contributions(state)
    raises = (state.history[state.round] == RAISE).sum()
    legal = jnp.stack([chips[0] != chips[1], jnp.bool_(True), raises < _MAX_RAISES])
    acting = self.kind(state) < public_game.CHANCE
    return jnp.broadcast_to(legal & acting, (_NUM_CARDS, self.num_actions))

  def transitions(self, state: LeducState) -> public_game.Transitions:
    chance = self.kind(state) == public_game.CHANCE
    cards = jnp.arange(_NUM_CARDS)
    # P(card k | s0, s1): uniform over the 4 cards neither player holds.
    held = (cards[:, None, None] == cards[None, :, None]) | (
      cards[:, None, None] == cards[None, None, :]
    )
    by_action = public_game.action_children(self, self.legal(state))
    return by_action.replace(
      present=by_action.present | chance,
      probability=jnp.full(_NUM_CARDS, 1.0 / _NUM_CARDS),
      likelihood=jnp.where(held, 0.0, 1.0 / (_NUM_CARDS - 2)),
    )

  def child(self, state: LeducState, k: chex.Array) -> LeducState:
    chance = self.kind(state) == public_game.CHANCE
    played = state.history.at[state.round, state.lengths[state.round]].set(k, mode="drop")
    return LeducState(
      history=jnp.where(chance, state.history, played),
      board=jnp.where(chance, k, state.board).astype(jnp.int32),
    )

  def utility(self, state: LeducState) -> chex.Array:
    chips = _contributions(state)
    folder = (state.lengths[state.round] - 1) % 2
    folded = jnp.where(folder == 0, -chips[0], chips[1])
    rank = jnp.arange(_NUM_CARDS) // 2
    board_rank = state.board // 2
    # Strength: a pair with the public card beats any rank; otherwise the rank.
    strength = jnp.where(rank == board_rank, _NUM_CARDS, rank)
    s0, s1 = strength[:, None], strength[None, :]
    showdown = jnp.where(s0 > s1, chips[1], jnp.where(s0 < s1, -chips[0], 0.0))
    return jnp.where((state.history == FOLD).any(), folded, showdown)

  def encode(self, state: LeducState) -> chex.Array:
    board_code = jnp.zeros(_NUM_CARDS + 1, jnp.float32).at[state.board].set(1.0)
    round_code = jnp.eye(2, dtype=jnp.float32)[state.round]
    chips = (_contributions(state) / 13.0).astype(jnp.float32)
    history = (state.history[..., None] == jnp.arange(3)).astype(jnp.float32)
    return jnp.concatenate([board_code, round_code, chips, history.ravel()])

  def action_name(self, action: int) -> str:
    return ("fold", "call", "raise")[action]
