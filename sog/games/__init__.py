"""Public-state games: their JAX definitions (:class:`PublicGame`), their enumerated public trees,
the registry (with :func:`register` for a game of your own) and the conformance checks (OpenSpiel's
counterparts are in :mod:`sog.openspiel`)."""

from sog.games.conformance import check_game
from sog.games.pgx_games import PgxGame
from sog.games.public_game import CHANCE
from sog.games.public_game import PLAYER_0
from sog.games.public_game import PLAYER_1
from sog.games.public_game import TERMINAL
from sog.games.public_game import PublicGame
from sog.games.public_game import Transitions
from sog.games.public_game import action_children
from sog.games.public_game import is_perfect_information
from sog.games.registry import Game
from sog.games.registry import GameParameter
from sog.games.registry import canonical_name
from sog.games.registry import import_game_modules
from sog.games.registry import load
from sog.games.registry import register
from sog.games.registry import registered_games
from sog.games.scotland_yard_map import available_maps
from sog.games.tree import PublicTree

__all__ = [
  "CHANCE",
  "PLAYER_0",
  "PLAYER_1",
  "TERMINAL",
  "Game",
  "GameParameter",
  "PgxGame",
  "PublicGame",
  "PublicTree",
  "Transitions",
  "action_children",
  "available_maps",
  "canonical_name",
  "check_game",
  "import_game_modules",
  "is_perfect_information",
  "load",
  "register",
  "registered_games",
]
