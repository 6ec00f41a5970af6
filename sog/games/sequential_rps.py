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
its hidden pick once made (0 before); player 1 has one infostate. Public child 0 follows ``ready``
and player 0's hidden pick; below player 1's pick, child k is pick k.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp
import numpy as np

from sog.games import public_game

ROCK, PAPER, SCISSORS = 0, 1, 2
#: Player 0's payoff for (player 0's pick, player 1's pick).
PAYOFF = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -2.0], [-2.0, 2.0, 0.0]])
_KINDS = (public_game.PLAYER_1, public_game.PLAYER_0, public_game.PLAYER_1, public_game.TERMINAL)


class SequentialRPS(public_game.PublicGame):
  name = "sequential_rps"
  num_infostates = (3, 1)
  num_actions = max_children = 3
  encoding_size = 4
  utility_scale = float(np.abs(PAYOFF).max())
  max_moves = 3  # player 1 readies, player 0 picks, player 1 picks

  def deal(self) -> np.ndarray:
    return np.array([[1.0], [0.0], [0.0]])  # player 0 has not picked yet: infostate 0

  def root(self) -> chex.Array:
    """The public moves ([3] int32, -1 after their end): ready, player 0's hidden pick (0), then
    player 1's pick."""
    return jnp.full(3, -1, jnp.int32)

  def kind(self, state: chex.Array) -> chex.Array:
    return jnp.asarray(_KINDS, jnp.int32)[(state >= 0).sum()]

  def legal(self, state: chex.Array) -> chex.Array:
    length = (state >= 0).sum()
    # Player 1 (one infostate) readies with action 0, player 0 picks at any of its infostates,
    # player 1 picks at its one.
    rows = jnp.where(length == 1, jnp.ones(3, bool), jnp.arange(3) == 0)
    actions = jnp.where(length == 0, jnp.arange(3) == 0, True)
    return rows[:, None] & actions[None, :] & (length < 3)

  def transitions(self, state: chex.Array) -> public_game.Transitions:
    by_action = public_game.action_children(self, self.legal(state))
    hidden = (state >= 0).sum() == 1  # player 0's pick: one public child, the pick its infostate
    picks = jnp.arange(3, dtype=jnp.int32)
    return by_action.replace(
      present=jnp.where(hidden, picks == 0, by_action.present),
      child=jnp.where(hidden, 0, by_action.child),
      next_infostate=jnp.where(hidden, picks[None, :], by_action.next_infostate),
    )

  def child(self, state: chex.Array, k: chex.Array) -> chex.Array:
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state: chex.Array) -> chex.Array:
    return jnp.broadcast_to(jnp.asarray(PAYOFF)[:, state[2]][:, None], (3, 3))

  def encode(self, state: chex.Array) -> chex.Array:
    return jnp.eye(4, dtype=jnp.float32)[(state >= 0).sum()]

  def action_name(self, action: int) -> str:
    return ("rock", "paper", "scissors")[action]
