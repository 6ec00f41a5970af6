"""The search settings a checkpoint's reported numbers were measured with (``search.json`` beside it).

A network's exploitability depends on the search that uses it (T_prior, the update schedule, ...), and
the library's defaults move as the search improves. A checkpoint that ships with numbers therefore
carries the settings they were measured with, each written out (not only those that differ from
today's defaults), so the numbers stay reproducible when the defaults change. The settings kept are
those the scripts have flags for; GT-CFR's ``expansion_k`` (derived from the game: 1 with perfect
information), ``virtual_loss``, ``leaf_capacity`` and ``query_samples`` (a batch size and a sample
size for self-play) are not. ``scripts/evaluate.py`` and ``scripts/play.py`` use them for every flag
not given on the command line and say so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any

from sog.protocol import composed
from sog.search import gtcfr
from sog.search import resolving

FILE = "search.json"
#: The fields kept per section: GT-CFR's that the scripts' flags set (s aside: every setting SoG(s, c)
#: names it), re-solving's, and the protocol's choice of predecessor.
FIELDS = {
    "search": ("simulations_per_phase", "updates", "prior_temperature", "puct_constant", "redraws",
               "tie_break", "open_chance", "averaging"),
    "resolving": tuple(f.name for f in dataclasses.fields(resolving.ResolvingConfig)),
    "protocol": ("predecessor",),
}


@dataclasses.dataclass(frozen=True)
class SearchSettings:
  """Search, re-solving and protocol settings, each section a dict of the fields in :data:`FIELDS`."""

  search: dict[str, Any]
  resolving: dict[str, Any]
  protocol: dict[str, Any]

  def __post_init__(self):
    for section, allowed in FIELDS.items():
      unknown = sorted(set(getattr(self, section)) - set(allowed))
      if unknown:
        raise ValueError(f"search settings: unknown {section} keys {unknown}; valid keys: "
                         f"{list(allowed)}")
    predecessor = self.protocol.get("predecessor", "own")
    if predecessor not in composed.PREDECESSORS:
      raise ValueError(f"search settings: predecessor must be one of {composed.PREDECESSORS}, got "
                       f"{predecessor!r}")
    self.search_config(1)  # ValueError naming a bad value, as the configs do
    self.resolving_config()

  def search_config(self, simulations: int) -> gtcfr.GTCFRConfig:
    """GT-CFR's config with these settings and s = ``simulations`` (the library's defaults elsewhere)."""
    return gtcfr.GTCFRConfig(simulations=simulations, **self.search)

  def resolving_config(self) -> resolving.ResolvingConfig:
    return resolving.ResolvingConfig(**self.resolving)

  @property
  def predecessor(self) -> str:
    return self.protocol.get("predecessor", "own")

  def items(self) -> list[tuple[str, Any]]:
    """(field, value) pairs of every section, in :data:`FIELDS` order."""
    return [(key, getattr(self, section)[key]) for section, keys in FIELDS.items() for key in keys
            if key in getattr(self, section)]


def of(search: gtcfr.GTCFRConfig,
       resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
       predecessor: str = "own") -> SearchSettings:
  """Every field of :data:`FIELDS` as ``search``, ``resolving_config`` and ``predecessor`` set it."""
  return SearchSettings(search={key: getattr(search, key) for key in FIELDS["search"]},
                        resolving={key: getattr(resolving_config, key) for key in FIELDS["resolving"]},
                        protocol={"predecessor": predecessor})


def write(directory: str | pathlib.Path, settings: SearchSettings) -> None:
  """Writes ``settings`` to ``directory/search.json`` (infinities as the string "inf")."""
  encode = lambda value: "inf" if isinstance(value, float) and math.isinf(value) else value  # noqa: E731
  data = {section: {key: encode(value) for key, value in getattr(settings, section).items()}
          for section in FIELDS}
  (pathlib.Path(directory) / FILE).write_text(json.dumps(data, indent=2) + "\n")


def read(directory: str | pathlib.Path) -> SearchSettings | None:
  """The settings in ``directory/search.json``; None where there is none; ``ValueError`` for a file
  that is not valid JSON or holds unknown keys or bad values."""
  path = pathlib.Path(directory) / FILE
  if not path.is_file():
    return None
  try:
    data = json.loads(path.read_text())
  except json.JSONDecodeError as error:
    raise ValueError(f"{path} is not valid JSON: {error}") from None
  if not isinstance(data, dict) or set(data) - set(FIELDS):
    raise ValueError(f"{path}: expected an object with sections {list(FIELDS)}, got "
                     f"{sorted(data) if isinstance(data, dict) else type(data).__name__}")
  decode = lambda value: float("inf") if value == "inf" else value  # noqa: E731
  try:
    return SearchSettings(**{section: {key: decode(value) for key, value in
                                       dict(data.get(section) or {}).items()}
                             for section in FIELDS})
  except (ValueError, TypeError) as error:  # a bad value, or a value or section of the wrong type
    raise ValueError(f"{path}: {error}") from None
