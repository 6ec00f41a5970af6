"""Public-state games: rules, their enumerated public trees and the registry (OpenSpiel's counterparts
are in :mod:`sog.openspiel`)."""

from sog.games.registry import Game
from sog.games.registry import canonical_name
from sog.games.registry import load
from sog.games.registry import registered_games
from sog.games.rules import CHANCE
from sog.games.rules import PLAYER_0
from sog.games.rules import PLAYER_1
from sog.games.rules import TERMINAL
from sog.games.rules import GameRules
from sog.games.tree import PublicTree

__all__ = [
    "CHANCE", "PLAYER_0", "PLAYER_1", "TERMINAL", "Game", "GameRules", "PublicTree",
    "canonical_name", "load", "registered_games",
]
