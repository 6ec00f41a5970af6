"""The search settings a checkpoint's reported numbers were measured with (``search.json`` beside
it).

A network's results depend on the search that uses it (T_prior, the update schedule, ...), and the
library's defaults move as the search improves. Every checkpoint therefore carries the settings its
numbers were measured with, each written out (not only those that differ from today's defaults), so
the numbers stay reproducible when the defaults change. Self-play writes its own search's settings
with every checkpoint; a shipped checkpoint's file holds the settings of its results page.

A file holds the sections that apply to its network:

* ``search``: GT-CFR's settings that the scripts have flags for (s aside: every SoG(s, c) names it);
  ``expansion_k`` (derived from the game: 1 with perfect information), ``virtual_loss`` and
  ``query_samples`` (a sample size for self-play) are not kept;
* ``resolving`` and ``protocol``: continual re-solving and the protocol's choice of predecessor
  (SoG's networks of enumerated games);
* ``rebel``: ReBeL's subgame depth, iterations, updates and play (``sog.baselines.rebel``'s
  networks; its values are checked by ``ReBeLConfig`` where the agent is built).

A network of a pgx game has only ``search``. ``scripts/evaluate.py`` and ``scripts/play.py``
use the sections of the agent they run for every flag not given on the command line and say so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any

from sog.games import tree as tree_lib
from sog.search import resolving
from sog.search import types as search_types

FILE = "search.json"
#: The fields kept per section.
FIELDS = {
  "search": (
    "simulations_per_phase",
    "updates",
    "prior_temperature",
    "puct_constant",
    "redraws",
    "tie_break",
    "open_chance",
    "averaging",
  ),
  "resolving": tuple(f.name for f in dataclasses.fields(resolving.ResolvingConfig)),
  "protocol": ("predecessor",),
  "rebel": ("depth", "iterations", "updates", "play"),
}


@dataclasses.dataclass(frozen=True)
class SearchSettings:
  """The settings of one checkpoint: each section a dict of some of its fields in :data:`FIELDS`
  (empty where the section does not apply)."""

  search: dict[str, Any] = dataclasses.field(default_factory=dict)
  resolving: dict[str, Any] = dataclasses.field(default_factory=dict)
  protocol: dict[str, Any] = dataclasses.field(default_factory=dict)
  rebel: dict[str, Any] = dataclasses.field(default_factory=dict)

  def __post_init__(self):
    for section, allowed in FIELDS.items():
      if not isinstance(getattr(self, section), dict):
        raise ValueError(
          f"search settings: section {section} must be an object, got "
          f"{type(getattr(self, section)).__name__}"
        )
      unknown = sorted(set(getattr(self, section)) - set(allowed))
      if unknown:
        raise ValueError(
          f"search settings: unknown {section} keys {unknown}; valid keys: {list(allowed)}"
        )
    predecessor = self.protocol.get("predecessor", "own")
    if predecessor not in tree_lib.PREDECESSORS:
      raise ValueError(
        f"search settings: predecessor must be one of {tree_lib.PREDECESSORS}, got {predecessor!r}"
      )
    self.search_config(1)  # ValueError naming a bad value, as the configs do
    self.resolving_config()

  def search_config(self, simulations: int) -> search_types.GTCFRConfig:
    """GT-CFR's config: these settings, s = ``simulations``, the library's defaults elsewhere."""
    return search_types.GTCFRConfig(simulations=simulations, **self.search)

  def resolving_config(self) -> resolving.ResolvingConfig:
    return resolving.ResolvingConfig(**self.resolving)

  @property
  def predecessor(self) -> str:
    return self.protocol.get("predecessor", "own")

  @property
  def sections(self) -> tuple[str, ...]:
    """The sections that hold settings, in :data:`FIELDS` order."""
    return tuple(section for section in FIELDS if getattr(self, section))

  def items(self, sections: tuple[str, ...] | None = None) -> list[tuple[str, Any]]:
    """(field, value) pairs of ``sections`` (default: all), in :data:`FIELDS` order."""
    return [
      (key, getattr(self, section)[key])
      for section, keys in FIELDS.items()
      if sections is None or section in sections
      for key in keys
      if key in getattr(self, section)
    ]


def of(
  search: search_types.GTCFRConfig | None = None,
  resolving_config: resolving.ResolvingConfig | None = None,
  predecessor: str | None = None,
  rebel: Any = None,
) -> SearchSettings:
  """The settings of the given configs, every field of their sections (``rebel``: a
  ``ReBeLConfig``, or anything with its fields as attributes)."""

  def section(name: str, config: Any) -> dict[str, Any]:
    return {} if config is None else {key: getattr(config, key) for key in FIELDS[name]}

  return SearchSettings(
    search=section("search", search),
    resolving=section("resolving", resolving_config),
    protocol={} if predecessor is None else {"predecessor": predecessor},
    rebel=section("rebel", rebel),
  )


def write(directory: str | pathlib.Path, settings: SearchSettings) -> None:
  """Writes the sections of ``settings`` that hold settings to ``directory/search.json``
  (infinities as the string "inf")."""

  def encode(value: Any) -> Any:
    return "inf" if isinstance(value, float) and math.isinf(value) else value

  data = {
    section: {key: encode(value) for key, value in getattr(settings, section).items()}
    for section in settings.sections
  }
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
    raise ValueError(
      f"{path}: expected an object with sections among {list(FIELDS)}, got "
      f"{sorted(data) if isinstance(data, dict) else type(data).__name__}"
    )

  def decode(value: Any) -> Any:
    return float("inf") if value == "inf" else value

  try:
    return SearchSettings(
      **{
        section: {key: decode(value) for key, value in values.items()}
        if isinstance(values, dict)
        else values
        for section, values in data.items()
      }
    )
  except (ValueError, TypeError) as error:  # a bad value, or a value or section of the wrong type
    raise ValueError(f"{path}: {error}") from None
