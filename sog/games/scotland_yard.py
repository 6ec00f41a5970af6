"""Scotland Yard on small maps loaded from data files (``sog/games/maps/NAME.json``).

Player 0 is Mr X, player 1 the team of detectives (one infostate: all they know is public). Each round
Mr X moves, then each detective in turn. Rules fixed by the foundation issue where SoG's fig. S3 leaves
them open:
  * Mr X's start is public; his station is revealed after his move in the map's reveal rounds; the
    transport type of every move is public.
  * A move uses a ticket of its transport type; tickets are public.
  * Mr X may not move onto a detective; with no legal move he is caught (he plays the action PASS, which
    ends the game). Detectives may not share a station; a detective with no legal move plays PASS.
  * A detective moving onto Mr X's station catches him: detectives +1, Mr X -1. Mr X wins (+1) if he
    is not caught by the end of the last round.
Mr X's infostate within a public state is his current station (0-based). Actions are
``transport * stations + destination`` plus the final action PASS.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np

from sog.games import rules as rules_lib

MAPS_DIR = pathlib.Path(__file__).parent / "maps"
_PLAYING, _CAUGHT, _ESCAPED = "playing", "caught", "escaped"


def available_maps() -> tuple[str, ...]:
  return tuple(sorted(p.stem for p in MAPS_DIR.glob("*.json")))


@dataclasses.dataclass(frozen=True)
class ScotlandYardMap:
  """A map and its game parameters; stations are 0-based here and 1-based in the data file."""

  name: str
  num_stations: int
  transports: tuple[str, ...]
  neighbours: tuple[tuple[tuple[int, int], ...], ...]  # per station: (transport, destination)
  mr_x_start: int
  detective_starts: tuple[int, ...]
  mr_x_tickets: tuple[int, ...]
  detective_tickets: tuple[int, ...]
  rounds: int
  reveal_rounds: frozenset[int]  # 1-based rounds after whose Mr X move his station is revealed

  @classmethod
  def load(cls, name: str) -> ScotlandYardMap:
    path = MAPS_DIR / f"{name}.json"
    if not path.is_file():
      raise ValueError(f"scotland_yard: unknown map {name!r}; valid maps: {', '.join(available_maps())}")
    return cls.from_dict(json.loads(path.read_text()))

  @classmethod
  def from_dict(cls, data: dict) -> ScotlandYardMap:
    name = data.get("name", "?")
    try:
      n, transports = int(data["stations"]), tuple(data["transports"])
      neighbours = [set() for _ in range(n)]
      for a, b, transport in data["edges"]:
        if not (1 <= a <= n and 1 <= b <= n) or transport not in transports:
          raise ValueError(f"scotland_yard map {name!r}: bad edge {[a, b, transport]}")
        t = transports.index(transport)
        neighbours[a - 1].add((t, b - 1))
        neighbours[b - 1].add((t, a - 1))
      tickets = lambda who: tuple(int(data[who].get(t, 0)) for t in transports)  # noqa: E731
      result = cls(name=name, num_stations=n, transports=transports,
                   neighbours=tuple(tuple(sorted(x)) for x in neighbours),
                   mr_x_start=int(data["mr_x_start"]) - 1,
                   detective_starts=tuple(int(s) - 1 for s in data["detective_starts"]),
                   mr_x_tickets=tickets("mr_x_tickets"),
                   detective_tickets=tickets("detective_tickets"), rounds=int(data["rounds"]),
                   reveal_rounds=frozenset(int(r) for r in data["reveal_rounds"]))
    except KeyError as missing:
      raise ValueError(f"scotland_yard map {name!r}: missing field {missing}") from None
    starts = (result.mr_x_start, *result.detective_starts)
    if not all(0 <= s < n for s in starts) or len(set(starts)) != len(starts):
      raise ValueError(f"scotland_yard map {name!r}: starts must be distinct stations in 1..{n}")
    if result.rounds < 1:
      raise ValueError(f"scotland_yard map {name!r}: rounds must be >= 1")
    return result

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
    return [self.action(t, d) for t, d in self.neighbours[station]
            if tickets[t] > 0 and d not in blocked]


@dataclasses.dataclass(frozen=True)
class SYState:
  """A public state: whose turn it is and everything everyone sees."""

  round: int                   # 0-based
  mover: int                   # 0: Mr X, k >= 1: detective k
  detectives: tuple[int, ...]
  detective_tickets: tuple[tuple[int, ...], ...]
  mr_x_tickets: tuple[int, ...]
  last_reveal: int             # Mr X's last publicly known station
  status: str = _PLAYING


class ScotlandYard(rules_lib.GameRules):
  """Scotland Yard rules for :class:`ScotlandYardMap` maps; see the module docstring."""

  def __init__(self, map: str = "glasses"):  # noqa: A002  (the registry parameter is called map)
    self.map = ScotlandYardMap.load(map)
    self.name = f"scotland_yard(map={map})"
    self.num_infostates = (self.map.num_stations, 1)
    self.num_actions = self.map.pass_action + 1

  def initial_state(self) -> SYState:
    m = self.map
    return SYState(0, 0, m.detective_starts, (m.detective_tickets,) * m.num_detectives,
                   m.mr_x_tickets, m.mr_x_start)

  def deal_probabilities(self) -> np.ndarray:
    deal = np.zeros((self.map.num_stations, 1))
    deal[self.map.mr_x_start, 0] = 1.0
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
      others = set(state.detectives[:k] + state.detectives[k + 1:])
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
        return (rules_lib.ActionOutcome(("x", "stuck"), dataclasses.replace(state, status=_CAUGHT),
                                        infostate),)
      transport, destination = divmod(action, m.num_stations)
      reveal = destination if state.round + 1 in m.reveal_rounds else -1
      tickets = list(state.mr_x_tickets)
      tickets[transport] -= 1
      child = dataclasses.replace(state, mover=1, mr_x_tickets=tuple(tickets),
                                  last_reveal=reveal if reveal >= 0 else state.last_reveal)
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
        rules_lib.ActionOutcome(("d", k, transport, destination, True),
                                dataclasses.replace(state, status=_CAUGHT, **moved), infostate,
                                frozenset({destination})),
        rules_lib.ActionOutcome(("d", k, transport, destination, False),
                                self._after_detective(state, **moved), infostate, everywhere_else),
    )

  def utility(self, state: SYState, infostate_0: int, infostate_1: int) -> float:
    return 1.0 if state.status == _ESCAPED else -1.0

  def encoding_size(self) -> int:
    m = self.map
    T = len(m.transports)
    return (m.num_detectives * (m.num_stations + T) + T + (m.num_detectives + 1) + (m.rounds + 1)
            + m.num_stations)

  def encode(self, state: SYState) -> np.ndarray:
    m = self.map
    positions = np.zeros((m.num_detectives, m.num_stations), np.float32)
    positions[np.arange(m.num_detectives), list(state.detectives)] = 1.0
    scale = np.maximum(1.0, np.asarray(m.detective_tickets, np.float32))
    detective_tickets = np.asarray(state.detective_tickets, np.float32) / scale
    mr_x_tickets = np.asarray(state.mr_x_tickets, np.float32) / np.maximum(
        1.0, np.asarray(m.mr_x_tickets, np.float32))
    mover = np.eye(m.num_detectives + 1, dtype=np.float32)[state.mover]
    round_code = np.eye(m.rounds + 1, dtype=np.float32)[state.round]
    reveal = np.eye(m.num_stations, dtype=np.float32)[state.last_reveal]
    return np.concatenate([positions.ravel(), detective_tickets.ravel(), mr_x_tickets, mover,
                           round_code, reveal])

  def action_name(self, action: int) -> str:
    if action == self.map.pass_action:
      return "pass"
    transport, destination = divmod(action, self.map.num_stations)
    return f"{self.map.transports[transport]}->{destination + 1}"
