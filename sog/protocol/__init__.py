"""SoG's exploitability protocol for a search agent: re-solve at every decision public state,
compose the searches' policies, evaluate the composition exactly (above :mod:`sog.search`, which it
runs)."""

from sog.protocol import settings
from sog.protocol.composed import Composition
from sog.protocol.composed import compose
from sog.protocol.settings import SearchSettings

__all__ = ["Composition", "SearchSettings", "compose", "settings"]
