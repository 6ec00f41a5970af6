"""sog: Student of Games (Schmid et al., Science Advances 2023) as a JAX research library.

The short API below covers a notebook session end to end; each name is the one its subpackage
exports, imported on first use (PEP 562), so ``import sog`` stays cheap and ``import sog.games``
does not pull in the search, the networks or OpenSpiel::

  game = sog.load("leduc_poker")
  sog.exploitability(game, sog.solve(game, 1000).average_policy)
  searcher = sog.GTCFR(game, sog.zero_leaf_model(), sog.GTCFRConfig(simulations=100))
  sog.compose(searcher, seeds=range(3), tree=game.tree).summary()
"""

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
  "sog.games": ("Game", "load", "registered_games"),
  "sog.eval": ("evaluate", "exploitability", "random_policy", "uniform_policy"),
  "sog.search": (
    "GTCFR",
    "GTCFRConfig",
    "LeafModel",
    "ResolvingConfig",
    "SoGAgent",
    "exact_leaf_model",
    "solve",
    "solve_subgame",
    "zero_leaf_model",
  ),
  "sog.nets": ("cvpn_leaf_model", "restore_leaf_model"),
  "sog.protocol": ("compose",),
  "sog.selfplay": ("from_config_dict", "train"),
  "sog.openspiel": ("SoGBot",),
}
_HOME = {name: module for module, names in _API.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
  if name not in _HOME:
    raise AttributeError(f"module 'sog' has no attribute {name!r}")
  value = getattr(importlib.import_module(_HOME[name]), name)
  globals()[name] = value  # later lookups skip this hook
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(__all__))
