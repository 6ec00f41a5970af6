"""Scotland Yard on small maps loaded from data files (``sog/games/maps/NAME.json`` or any
``*.json``).

Player 0 is Mr X, player 1 the team of detectives (one infostate: all they know is public). Each
round Mr X moves, then each detective in turn. Rules fixed by the foundation issue where SoG's fig.
S3 leaves them open:
  * Mr X's start is public (``"mr_x_start": 6``) or private, drawn uniformly from a set of stations
    (``"mr_x_start": [4, 9, 14]``, a chance event only he observes); his station is revealed after
    his move in the map's reveal rounds; the transport type of every move is public.
  * A move uses a ticket of its transport type; tickets are public.
  * Mr X may not move onto a detective; with no legal move he is caught (he plays the action PASS,
    which ends the game). Detectives may not share a station; a detective with no legal move plays
    PASS.
  * A detective moving onto Mr X's station catches him: detectives +1, Mr X -1. Mr X wins (+1) if he
    is not caught by the end of the last round.
Mr X's infostate within a public state is his current station (0-based). Actions are
``transport * stations + destination`` plus the final action PASS.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import NoReturn

import numpy as np

from sog.games import rules as rules_lib

MAPS_DIR = pathlib.Path(__file__).parent / "maps"
MAP_FIELDS = (
  "name",
  "source",
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
_OPTIONAL_FIELDS = ("name", "source")
_PLAYING, _CAUGHT, _ESCAPED = "playing", "caught", "escaped"


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
  detective_starts: tuple[int, ...]
  mr_x_tickets: tuple[int, ...]
  detective_tickets: tuple[int, ...]
  rounds: int
  reveal_rounds: frozenset[int]  # 1-based rounds after whose Mr X move his station is revealed

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
    missing = [f for f in MAP_FIELDS if f not in data and f not in _OPTIONAL_FIELDS]
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

    start = data["mr_x_start"]
    mr_x_starts = integers("mr_x_start", start if isinstance(start, list) else [start], 1, n)
    detective_starts = integers("detective_starts", data["detective_starts"], 1, n)
    if not mr_x_starts or not detective_starts:
      fail("mr_x_start" if not mr_x_starts else "detective_starts", "names no station")
    if set(mr_x_starts) & set(detective_starts):
      fail("detective_starts", f"shares stations with Mr X's starts {list(mr_x_starts)}")
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
    )

  @property
  def private_start(self) -> bool:
    return len(self.mr_x_starts) > 1

  @property
  def num_detectives(self) -> int:
    return len(self.detective_starts)

  @property
  def pass_action(self) -> int:
    return len(self.transports) * self.num_stations

  def action(self, transport: int, destination: int) -> int:
    return transport * self.num_stations + destination

  def moves(self, station: int, tickets: tuple[int, ...], blocked: set[int]) -> list[int]:
    """Legal move actions from ``station`` with ``tickets``, avoiding ``blocked`` stations."""
    return [
      self.action(t, d) for t, d in self.neighbours[station] if tickets[t] > 0 and d not in blocked
    ]


@dataclasses.dataclass(frozen=True)
class SYState:
  """A public state: whose turn it is and everything everyone sees."""

  round: int  # 0-based
  mover: int  # 0: Mr X, k >= 1: detective k
  detectives: tuple[int, ...]
  detective_tickets: tuple[tuple[int, ...], ...]
  mr_x_tickets: tuple[int, ...]
  last_reveal: int  # Mr X's last publicly known station (-1: not yet known)
  status: str = _PLAYING


class ScotlandYard(rules_lib.GameRules):
  """Scotland Yard rules for :class:`ScotlandYardMap` maps; see the module docstring."""

  def __init__(self, map: str = "glasses"):
    self.map = ScotlandYardMap.load(map)
    self.name = f"scotland_yard(map={map})"
    self.num_infostates = (self.map.num_stations, 1)
    self.num_actions = self.map.pass_action + 1

  def initial_state(self) -> SYState:
    m = self.map
    return SYState(
      0,
      0,
      m.detective_starts,
      (m.detective_tickets,) * m.num_detectives,
      m.mr_x_tickets,
      -1 if m.private_start else m.mr_x_starts[0],
    )

  def deal_probabilities(self) -> np.ndarray:
    deal = np.zeros((self.map.num_stations, 1))
    deal[list(self.map.mr_x_starts), 0] = 1.0 / len(self.map.mr_x_starts)
    return deal

  def kind(self, state: SYState) -> int:
    if state.status != _PLAYING:
      return rules_lib.TERMINAL
    return rules_lib.PLAYER_0 if state.mover == 0 else rules_lib.PLAYER_1

  def legal_actions(self, state: SYState, infostate: int):
    m = self.map
    if state.mover == 0:
      legal = m.moves(infostate, state.mr_x_tickets, set(state.detectives))
    else:
      k = state.mover - 1
      others = set(state.detectives[:k] + state.detectives[k + 1 :])
      legal = m.moves(state.detectives[k], state.detective_tickets[k], others)
    return legal or [m.pass_action]

  def _after_detective(self, state: SYState, **changes) -> SYState:
    """The state after detective ``state.mover`` moved without a catch."""
    state = dataclasses.replace(state, **changes)
    if state.mover < self.map.num_detectives:
      return dataclasses.replace(state, mover=state.mover + 1)
    if state.round + 1 == self.map.rounds:
      return dataclasses.replace(state, status=_ESCAPED)
    return dataclasses.replace(state, round=state.round + 1, mover=0)

  def outcomes(self, state: SYState, infostate: int, action: int):
    m = self.map
    if state.mover == 0:
      if action == m.pass_action:
        return (
          rules_lib.ActionOutcome(
            ("x", "stuck"), dataclasses.replace(state, status=_CAUGHT), infostate
          ),
        )
      transport, destination = divmod(action, m.num_stations)
      reveal = destination if state.round + 1 in m.reveal_rounds else -1
      tickets = list(state.mr_x_tickets)
      tickets[transport] -= 1
      child = dataclasses.replace(
        state,
        mover=1,
        mr_x_tickets=tuple(tickets),
        last_reveal=reveal if reveal >= 0 else state.last_reveal,
      )
      return (rules_lib.ActionOutcome(("x", transport, reveal), child, destination),)
    k = state.mover - 1
    if action == m.pass_action:
      return (rules_lib.ActionOutcome(("d", k, "pass"), self._after_detective(state), infostate),)
    transport, destination = divmod(action, m.num_stations)
    detectives = list(state.detectives)
    detectives[k] = destination
    tickets = [list(t) for t in state.detective_tickets]
    tickets[k][transport] -= 1
    moved = dict(detectives=tuple(detectives), detective_tickets=tuple(map(tuple, tickets)))
    everywhere_else = frozenset(range(m.num_stations)) - {destination}
    return (
      rules_lib.ActionOutcome(
        ("d", k, transport, destination, True),
        dataclasses.replace(state, status=_CAUGHT, **moved),
        infostate,
        frozenset({destination}),
      ),
      rules_lib.ActionOutcome(
        ("d", k, transport, destination, False),
        self._after_detective(state, **moved),
        infostate,
        everywhere_else,
      ),
    )

  def utility(self, state: SYState, infostate_0: int, infostate_1: int) -> float:
    return 1.0 if state.status == _ESCAPED else -1.0

  def encoding_size(self) -> int:
    m = self.map
    T = len(m.transports)
    return (
      m.num_detectives * (m.num_stations + T)
      + T
      + (m.num_detectives + 1)
      + (m.rounds + 1)
      + m.num_stations
      + m.private_start
    )

  def encode(self, state: SYState) -> np.ndarray:
    m = self.map
    positions = np.zeros((m.num_detectives, m.num_stations), np.float32)
    positions[np.arange(m.num_detectives), list(state.detectives)] = 1.0
    scale = np.maximum(1.0, np.asarray(m.detective_tickets, np.float32))
    detective_tickets = np.asarray(state.detective_tickets, np.float32) / scale
    mr_x_tickets = np.asarray(state.mr_x_tickets, np.float32) / np.maximum(
      1.0, np.asarray(m.mr_x_tickets, np.float32)
    )
    mover = np.eye(m.num_detectives + 1, dtype=np.float32)[state.mover]
    round_code = np.eye(m.rounds + 1, dtype=np.float32)[state.round]
    reveal = np.eye(m.num_stations + m.private_start, dtype=np.float32)[state.last_reveal]
    return np.concatenate(
      [positions.ravel(), detective_tickets.ravel(), mr_x_tickets, mover, round_code, reveal]
    )

  def action_name(self, action: int) -> str:
    if action == self.map.pass_action:
      return "pass"
    transport, destination = divmod(action, self.map.num_stations)
    return f"{self.map.transports[transport]}->{destination + 1}"
