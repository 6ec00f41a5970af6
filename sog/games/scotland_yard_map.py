"""Scotland Yard map files: a map's stations, transports, edges and game parameters
(``sog/games/maps/NAME.json``, or any ``*.json`` by path), parsed and checked field by field.

Required fields: ``stations`` (N, numbered 1..N), ``transports``, ``edges`` ([a, b, transport],
both ways), ``mr_x_start`` (one station: public; several: drawn uniformly, private),
``detective_starts``, ``mr_x_tickets`` and ``detective_tickets`` (counts by transport), ``rounds``
and ``reveal_rounds``. Optional fields, whose defaults are the small maps' rules:

  * ``detectives``: how many detectives play (default: one per detective start). Fewer than the
    starts listed: the starts are start cards, and each detective's start is drawn from the cards
    left (a public chance event), never Mr X's station.
  * ``mr_x_black_tickets``: Mr X's black tickets (0): a black ticket takes any transport and hides
    which.
  * ``mr_x_double_moves``: Mr X's double-move cards (0): he moves twice, each move a round of
    his own, before the detectives move.
  * ``tickets_to_mr_x``: whether each ticket a detective uses goes to Mr X (false).
  * ``actions``: ``"by_destination"`` (an action names a ticket and a destination station, the
    same at every station) or ``"by_station"`` (an action is an index into the moves from the
    mover's station, so per-infostate arrays stay small on a large board).
  * ``enumerable``: false for a map too large to enumerate (the game is then searched without its
    tree, and exact evaluation refuses it).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import NoReturn

import numpy as np

MAPS_DIR = pathlib.Path(__file__).parent / "maps"
_REQUIRED_FIELDS = (
  "stations",
  "transports",
  "edges",
  "mr_x_start",
  "detective_starts",
  "mr_x_tickets",
  "detective_tickets",
  "rounds",
  "reveal_rounds",
)
_OPTIONAL_FIELDS = (
  "detectives",
  "mr_x_black_tickets",
  "mr_x_double_moves",
  "tickets_to_mr_x",
  "actions",
  "enumerable",
)
MAP_FIELDS = ("name", "source", *_REQUIRED_FIELDS, *_OPTIONAL_FIELDS)
ACTION_LAYOUTS = ("by_destination", "by_station")


def available_maps() -> tuple[str, ...]:
  """The maps shipped with sog (``scotland_yard(map=NAME)``); any ``PATH.json`` loads as well."""
  return tuple(sorted(p.stem for p in MAPS_DIR.glob("*.json")))


def _is_integer_in(value, low: int, high: int | None) -> bool:
  """Whether a JSON value is an integer (not a boolean) in low..high (no upper bound if None)."""
  return (
    isinstance(value, int)
    and not isinstance(value, bool)
    and value >= low
    and (high is None or value <= high)
  )


def is_map_file(name: str) -> bool:
  """Whether a ``map=`` value names a map file by path rather than a shipped map."""
  return name.endswith(".json")


@dataclasses.dataclass(frozen=True)
class ScotlandYardMap:
  """A map and its game parameters; stations are 0-based here and 1-based in the data file."""

  name: str
  num_stations: int
  transports: tuple[str, ...]
  neighbours: tuple[tuple[tuple[int, int], ...], ...]  # per station: (transport, destination)
  mr_x_starts: tuple[int, ...]  # one station: a public start; several: drawn uniformly, private
  detective_starts: tuple[int, ...]  # the detectives' starts, or their start cards when drawn
  mr_x_tickets: tuple[int, ...]
  detective_tickets: tuple[int, ...]
  rounds: int
  reveal_rounds: frozenset[int]  # 1-based rounds after whose Mr X move his station is revealed
  num_detectives: int
  black_tickets: int = 0
  double_moves: int = 0
  tickets_to_mr_x: bool = False
  actions: str = "by_destination"
  enumerable: bool = True

  @classmethod
  def load(cls, name: str) -> ScotlandYardMap:
    """A shipped map by name, or the map file at ``name`` when it ends in ``.json``."""
    if is_map_file(name):
      path = pathlib.Path(name).expanduser()
      if not path.is_file():
        raise ValueError(f"scotland_yard: map file {name!r} does not exist")
    else:
      path = MAPS_DIR / f"{name}.json"
      if not path.is_file():
        raise ValueError(
          f"scotland_yard: unknown map {name!r}; valid maps: "
          f"{', '.join(available_maps())}, or a path to a .json map file"
        )
    try:
      data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
      raise ValueError(
        f"scotland_yard: map file {str(path)!r} is not valid JSON: {error}"
      ) from None
    if not isinstance(data, dict):
      raise ValueError(f"scotland_yard: map file {str(path)!r} must hold a JSON object")
    data.setdefault("name", path.stem)
    return cls.from_dict(data)

  @classmethod
  def from_dict(cls, data: dict) -> ScotlandYardMap:
    """Parses and checks a map's fields; a ``ValueError`` names the first bad field."""
    name = str(data.get("name", "?"))

    def fail(field: str, problem: str) -> NoReturn:
      raise ValueError(f"scotland_yard map {name!r}: field {field!r} {problem}")

    unknown = sorted(set(data) - set(MAP_FIELDS))
    if unknown:
      fail(unknown[0], f"is unknown; valid fields: {', '.join(MAP_FIELDS)}")
    missing = [f for f in _REQUIRED_FIELDS if f not in data]
    if missing:
      fail(missing[0], "is missing")

    def integer(field: str, value, low: int, high: int | None = None) -> int:
      if not _is_integer_in(value, low, high):
        fail(
          field, f"has {value!r}; expected an integer in {low}..{'inf' if high is None else high}"
        )
      return value

    def integers(field: str, value, low: int, high: int) -> tuple[int, ...]:
      if not isinstance(value, list) or len(set(map(repr, value))) != len(value):
        fail(field, f"has {value!r}; expected a list of distinct integers in {low}..{high}")
      return tuple(integer(field, v, low, high) for v in value)

    n = integer("stations", data["stations"], 2)
    transports = data["transports"]
    if (
      not isinstance(transports, list)
      or not transports
      or not all(isinstance(t, str) for t in transports)
      or len(set(transports)) != len(transports)
    ):
      fail("transports", f"has {transports!r}; expected a non-empty list of distinct names")
    neighbours = [set() for _ in range(n)]
    if not isinstance(data["edges"], list):
      fail("edges", "is not a list")
    for edge in data["edges"]:
      if (
        not isinstance(edge, list)
        or len(edge) != 3
        or edge[2] not in transports
        or not all(_is_integer_in(s, 1, n) for s in edge[:2])
        or edge[0] == edge[1]
      ):
        fail(
          "edges",
          f"has a bad edge {edge!r}; expected [a, b, transport] with stations a != b in "
          f"1..{n} and transport in {transports}",
        )
      a, b, transport = edge
      t = transports.index(transport)
      neighbours[a - 1].add((t, b - 1))
      neighbours[b - 1].add((t, a - 1))

    def tickets(field: str) -> tuple[int, ...]:
      value = data[field]
      if not isinstance(value, dict) or set(value) - set(transports):
        fail(field, f"has {value!r}; expected counts for transports among {transports}")
      return tuple(integer(field, value.get(t, 0), 0) for t in transports)

    def flag(field: str, default: bool) -> bool:
      value = data.get(field, default)
      if not isinstance(value, bool):
        fail(field, f"has {value!r}; expected true or false")
      return value

    start = data["mr_x_start"]
    mr_x_starts = integers("mr_x_start", start if isinstance(start, list) else [start], 1, n)
    detective_starts = integers("detective_starts", data["detective_starts"], 1, n)
    if not mr_x_starts or not detective_starts:
      fail("mr_x_start" if not mr_x_starts else "detective_starts", "names no station")
    detectives = integer(
      "detectives", data.get("detectives", len(detective_starts)), 1, len(detective_starts)
    )
    if detectives == len(detective_starts) and set(mr_x_starts) & set(detective_starts):
      fail("detective_starts", f"shares stations with Mr X's starts {list(mr_x_starts)}")
    actions = data.get("actions", ACTION_LAYOUTS[0])
    if actions not in ACTION_LAYOUTS:
      fail("actions", f"has {actions!r}; expected one of {', '.join(ACTION_LAYOUTS)}")
    rounds = integer("rounds", data["rounds"], 1)
    reveal_rounds = integers("reveal_rounds", data["reveal_rounds"], 1, rounds)
    return cls(
      name=name,
      num_stations=n,
      transports=tuple(transports),
      neighbours=tuple(tuple(sorted(x)) for x in neighbours),
      mr_x_starts=tuple(s - 1 for s in mr_x_starts),
      detective_starts=tuple(s - 1 for s in detective_starts),
      mr_x_tickets=tickets("mr_x_tickets"),
      detective_tickets=tickets("detective_tickets"),
      rounds=rounds,
      reveal_rounds=frozenset(reveal_rounds),
      num_detectives=detectives,
      black_tickets=integer("mr_x_black_tickets", data.get("mr_x_black_tickets", 0), 0),
      double_moves=integer("mr_x_double_moves", data.get("mr_x_double_moves", 0), 0),
      tickets_to_mr_x=flag("tickets_to_mr_x", False),
      actions=actions,
      enumerable=flag("enumerable", True),
    )

  @property
  def private_start(self) -> bool:
    return len(self.mr_x_starts) > 1

  @property
  def drawn_starts(self) -> bool:
    """Whether the detectives' starts are drawn from their start cards (public chance)."""
    return self.num_detectives < len(self.detective_starts)

  def adjacency(self) -> np.ndarray:
    """[T, N, N] bool: whether transport t links stations a and b."""
    adjacency = np.zeros((len(self.transports), self.num_stations, self.num_stations), bool)
    for a, links in enumerate(self.neighbours):
      for t, b in links:
        adjacency[t, a, b] = True
    return adjacency
