"""OpenSpiel interop, the only part of sog that imports pyspiel: the matching OpenSpiel game of a
sog game (Scotland Yard maps registered as ``sog_scotland_yard``), world-state and policy
conversions, OpenSpiel's exploitability of a sog policy (the cross-check), and the SoG agent as a
``pyspiel.Bot``.
"""

from sog.openspiel.bot import PIMCBot
from sog.openspiel.bot import SoGBot
from sog.openspiel.bridge import exploitability_in_openspiel
from sog.openspiel.bridge import from_openspiel_policy
from sog.openspiel.bridge import locate
from sog.openspiel.bridge import openspiel_game
from sog.openspiel.bridge import to_openspiel_policy
from sog.openspiel.peers import run_peer

__all__ = [
  "PIMCBot",
  "SoGBot",
  "exploitability_in_openspiel",
  "from_openspiel_policy",
  "locate",
  "openspiel_game",
  "run_peer",
  "to_openspiel_policy",
]
