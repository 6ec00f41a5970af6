"""pgx's perfect-information games as :class:`~sog.games.public_game.PublicGame` s (one infostate
per player), never enumerated.

``load("pgx/connect_four")`` gives the standard 6 x 7 Connect Four as pgx plays it; the public state
is pgx's ``State`` and child k is ``env.step`` of action k. pgx numbers its players by a
coin flip at ``init``; here player 0 is always the one who moves first (the root's
``current_player``), so players and utilities mean the same as in the table games and OpenSpiel. The
encoding is pgx's observation (from the mover's side) with the mover appended, so a network can tell
whose values it predicts.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pgx

from sog.games import public_game

PREFIX = "pgx/"
# Two-player, deterministic, perfect-information pgx games (the others are refused with a reason).
GAMES = (
  "animal_shogi",
  "chess",
  "connect_four",
  "gardner_chess",
  "go_9x9",
  "go_19x19",
  "hex",
  "othello",
  "shogi",
  "tic_tac_toe",
)
_REFUSED = {
  "2048": "it has chance (random tiles) and one player",
  "backgammon": "it has chance (dice)",
  "kuhn_poker": "it has chance and imperfect information (use the enumerated kuhn_poker)",
  "leduc_holdem": "it has chance and imperfect information (use the enumerated leduc_poker)",
  "sparrow_mahjong": "it has chance, imperfect information and three players",
}
# The most moves a game can last (PublicGame.max_moves), from its rules and pgx's step limits
# (pgx 2.6 ends chess and shogi at 512 steps, animal shogi and Gardner chess at 256, go at twice
# its cells). An upper bound is enough: hex is its 121 cells and the swap; othello's 60
# placements and the passes between them stay under 128.
_MAX_MOVES = {
  "animal_shogi": 256,
  "chess": 512,
  "connect_four": 42,
  "gardner_chess": 256,
  "go_9x9": 2 * 9 * 9,
  "go_19x19": 2 * 19 * 19,
  "hex": 122,
  "othello": 128,
  "shogi": 512,
  "tic_tac_toe": 9,
}


def is_pgx_name(name: str) -> bool:
  return isinstance(name, str) and name.strip().startswith(PREFIX)


def check_name(name: str) -> str:
  """The pgx environment id of ``"pgx/<id>"``; ``ValueError`` naming the valid games otherwise."""
  env_id = name.strip()[len(PREFIX) :]
  if env_id in GAMES:
    return env_id
  valid = ", ".join(PREFIX + g for g in GAMES)
  if env_id in _REFUSED:
    raise ValueError(
      f"{name}: pgx's {env_id} cannot be searched as a perfect-information game: "
      f"{_REFUSED[env_id]}; valid pgx games: {valid}"
    )
  if env_id.startswith("minatar"):
    raise ValueError(f"{name}: pgx's MinAtar games have one player; valid pgx games: {valid}")
  raise ValueError(f"unknown pgx game {name!r}; valid pgx games: {valid}")


class PgxGame(public_game.PublicGame):
  """A pgx environment (one of :data:`GAMES`) as a perfect-information
  :class:`~sog.games.public_game.PublicGame`, never enumerated."""

  num_infostates = (1, 1)
  enumerable = False

  def __init__(self, name: str):
    env_id = check_name(name)
    env = pgx.make(env_id)
    if env.num_players != 2:
      raise ValueError(f"{name}: pgx's {env_id} has {env.num_players} players, not 2")
    self.env, self.name, self.env_id = env, PREFIX + env_id, env_id
    self.num_actions = self.max_children = int(env.num_actions)
    self.initial = env.init(jax.random.PRNGKey(0))
    self.first = self.initial.current_player
    self.encoding_size = int(self.initial.observation.size) + 1
    self.max_moves = _MAX_MOVES[env_id]

  def deal(self) -> np.ndarray:
    return np.ones((1, 1))

  def root(self) -> pgx.State:
    return self.initial

  def kind(self, state: pgx.State) -> chex.Array:
    mover = (state.current_player != self.first).astype(jnp.int32)
    return jnp.where(state.terminated, public_game.TERMINAL, mover)

  def legal(self, state: pgx.State) -> chex.Array:
    return (state.legal_action_mask & ~state.terminated)[None]

  def transitions(self, state: pgx.State) -> public_game.Transitions:
    return public_game.action_children(self, self.legal(state))

  def child(self, state: pgx.State, k: chex.Array) -> pgx.State:
    return self.env.step(state, k)

  def utility(self, state: pgx.State) -> chex.Array:
    return state.rewards[self.first][None, None]

  def encode(self, state: pgx.State) -> chex.Array:
    mover = (state.current_player != self.first).astype(jnp.float32)
    return jnp.concatenate([state.observation.ravel().astype(jnp.float32), mover[None]])


_LOADED: dict[str, PgxGame] = {}


def load(name: str) -> PgxGame:
  """The pgx game ``"pgx/<id>"`` (loaded once per process)."""
  env_id = check_name(name)
  if env_id not in _LOADED:
    _LOADED[env_id] = PgxGame(name)
  return _LOADED[env_id]
