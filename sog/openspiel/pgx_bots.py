"""OpenSpiel bots for pgx games whose actions OpenSpiel numbers the same way (tic-tac-toe's cells,
Connect Four's columns): SoG's search (GT-CFR on the belief pool), mctx's AlphaZero search and,
where the game can be solved here, a perfect (minimax) player, so that ``scripts/play.py`` matches
them against each other and against OpenSpiel's MCTS with ``evaluate_bots``."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pyspiel

from sog.games import pgx_games
from sog.games import registry
from sog.search import alphazero
from sog.search import pool

OPENSPIEL_NAMES = {"pgx/tic_tac_toe": "tic_tac_toe", "pgx/connect_four": "connect_four"}
SOLVABLE = ("pgx/tic_tac_toe",)  # games small enough for the minimax player


def openspiel_game(game: registry.Game | pgx_games.PgxGame) -> pyspiel.Game:
  """OpenSpiel's game with the same actions as ``game``; ``ValueError`` for the other pgx games."""
  if game.name not in OPENSPIEL_NAMES:
    raise ValueError(
      f"{game.name} has no OpenSpiel counterpart with the same actions; pgx games "
      f"playable against OpenSpiel's bots: {', '.join(OPENSPIEL_NAMES)}"
    )
  return pyspiel.load_game(OPENSPIEL_NAMES[game.name])


class _PgxBot(pyspiel.Bot):
  """A bot that finds the pgx state of an OpenSpiel state by replaying its history."""

  def __init__(self, game: pgx_games.PgxGame, player_id: int, seed: int):
    pyspiel.Bot.__init__(self)
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id}")
    self.game, self._player_id = game, player_id
    self._rng = jax.random.PRNGKey(seed)
    self._step = _jitted_step(game)

  def player_id(self) -> int:
    return self._player_id

  def restart_at(self, state: pyspiel.State) -> None:
    del state

  def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
    del state, player_id, action

  def pgx_state(self, state: pyspiel.State):
    current = self.game.root()
    for action in state.history():
      current = self._step(current, jnp.int32(action))
    return current

  def next_key(self) -> jax.Array:
    self._rng, rng = jax.random.split(self._rng)
    return rng


@functools.cache
def _jitted_step(game: pgx_games.PgxGame):
  return jax.jit(game.child)


class SoGBot(_PgxBot):
  """SoG on a pgx game: a GT-CFR search from every state it moves at (perfect information: the
  state is the search's root), playing the most probable action of the search's average policy
  there (as AlphaZero plays its most visited one in evaluation), or with ``sample`` an action drawn
  from that policy (SoG's play in self-play)."""

  def __init__(self, searcher: pool.GTCFR, player_id: int, seed: int = 0, sample: bool = False):
    super().__init__(searcher.game, player_id, seed)
    self.searcher, self.sample = searcher, sample

  def step(self, state: pyspiel.State) -> int:
    result = self.searcher.search_state(self.next_key(), self.pgx_state(state))
    policy = np.asarray(result.focus_policy[0], np.float64)  # the mover's one infostate
    if not self.sample:
      return int(np.argmax(policy))
    rng = np.random.default_rng(np.asarray(self.next_key()))
    return int(rng.choice(policy.size, p=policy / policy.sum()))


class AlphaZeroBot(_PgxBot):
  """mctx's search (:class:`sog.search.alphazero.AlphaZero`) playing its most visited action (its
  improved policy's choice with Gumbel MuZero), as AlphaZero plays in evaluation."""

  def __init__(self, searcher: alphazero.AlphaZero, player_id: int, seed: int = 0):
    super().__init__(searcher.game, player_id, seed)
    self.searcher = searcher

  def step(self, state: pyspiel.State) -> int:
    roots = jax.tree.map(lambda x: x[None], self.pgx_state(state))
    return int(
      np.argmax(np.asarray(self.searcher.search(self.next_key(), roots).action_weights[0]))
    )


class MinimaxBot(pyspiel.Bot):
  """Perfect play by exhaustive minimax over OpenSpiel's game (memoised by state), an optimal action
  drawn at random among the optimal ones."""

  def __init__(self, os_game: pyspiel.Game, player_id: int, seed: int = 0):
    pyspiel.Bot.__init__(self)
    self._player_id, self._rng = player_id, np.random.default_rng(seed)
    self._values: dict[str, float] = {}

  def player_id(self) -> int:
    return self._player_id

  def restart_at(self, state: pyspiel.State) -> None:
    del state

  def value(self, state: pyspiel.State) -> float:
    """Player 0's value of ``state`` under perfect play."""
    key = str(state)
    if key not in self._values:
      if state.is_terminal():
        self._values[key] = state.returns()[0]
      else:
        children = [self.value(state.child(a)) for a in state.legal_actions()]
        self._values[key] = max(children) if state.current_player() == 0 else min(children)
    return self._values[key]

  def step(self, state: pyspiel.State) -> int:
    sign = 1.0 if state.current_player() == 0 else -1.0
    actions = state.legal_actions()
    scores = np.array([sign * self.value(state.child(a)) for a in actions])
    best = [a for a, score in zip(actions, scores, strict=True) if score == scores.max()]
    return int(self._rng.choice(best))
