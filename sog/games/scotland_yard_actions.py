"""Scotland Yard's action layouts: what each action index means at each station.

A move is (ticket, destination, double): the ticket is a transport t < T or, for Mr X with black
tickets, the black ticket T (any transport, which stays hidden); ``double`` marks the first move of
Mr X's double move. A map's ``actions`` field picks how moves are numbered:

  * ``"by_destination"``: a = double * K * N + ticket * N + destination for K ticket kinds and N
    stations, the same move at every station (A = K N (1 + doubles) + 1);
  * ``"by_station"``: a = double * B + j, where j < M indexes the (transport, destination) pairs at
    the mover's station in the order (transport, destination), and M <= j < M + M_black its
    neighbours reached with a black ticket (A = B (1 + doubles) + 1 with B = M + M_black, M and
    M_black the most at any station), so arrays over actions stay small on a large board.

The last action, A - 1, is PASS in both. Both number the moves at a station in the same order, so
the two layouts give the same game with its actions relabelled.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sog.games import scotland_yard_map


@dataclasses.dataclass(frozen=True)
class ActionTable:
  """The moves behind each action at each station, [N, A] arrays (PASS included, as no move).

  Attributes:
    ticket: the ticket kind an action uses (0 for PASS and a by-station layout's padding; by
      destination, every action keeps its ticket, an edge or not).
    destination: the station it reaches (the station itself for PASS and padding; by destination,
      every action keeps its destination, an edge or not).
    double: whether it is the first move of a double move.
    exists: whether it is a move from that station at all (an edge of its transport, or any edge
      for a black ticket), before tickets and occupied stations are checked.
    detective: whether a detective may make it (no black ticket, no double move).
  """

  ticket: np.ndarray
  destination: np.ndarray
  double: np.ndarray
  exists: np.ndarray
  detective: np.ndarray

  @property
  def num_actions(self) -> int:
    return self.ticket.shape[1]


def ticket_kinds(m: scotland_yard_map.ScotlandYardMap) -> int:
  """K: the transports, and the black ticket when Mr X has any."""
  return len(m.transports) + (m.black_tickets > 0)


def action_table(m: scotland_yard_map.ScotlandYardMap) -> ActionTable:
  """The map's :class:`ActionTable` in its layout (``m.actions``)."""
  N, T, K = m.num_stations, len(m.transports), ticket_kinds(m)
  variants = 2 if m.double_moves else 1
  # Per station, its moves in the order of the layout's block: (ticket, destination).
  if m.actions == "by_destination":
    block = [[(k, d) for k in range(K) for d in range(N)] for _ in range(N)]
  else:
    own = [list(links) for links in m.neighbours]  # sorted (transport, destination)
    black = [sorted({d for _, d in links}) for links in m.neighbours] if K > T else [[]] * N
    width, black_width = max(map(len, own)), max(map(len, black))
    block = [
      own[s]
      + [None] * (width - len(own[s]))
      + [(T, d) for d in black[s]]
      + [None] * (black_width - len(black[s]))
      for s in range(N)
    ]
  B = len(block[0])
  A = variants * B + 1
  ticket = np.zeros((N, A), np.int32)
  destination = np.tile(np.arange(N, dtype=np.int32)[:, None], (1, A))
  exists = np.zeros((N, A), bool)
  adjacency = m.adjacency()  # [T, N, N]
  linked = adjacency.any(0)
  for s in range(N):
    for j, move in enumerate(block[s]):
      if move is None:
        continue
      k, d = move
      for v in range(variants):
        a = v * B + j
        ticket[s, a], destination[s, a] = k, d
        exists[s, a] = linked[s, d] if k == T else adjacency[k, s, d]
  double = np.zeros((N, A), bool)
  double[:, B : 2 * B] = variants == 2
  return ActionTable(
    ticket=ticket,
    destination=destination,
    double=double,
    exists=exists,
    detective=exists & (ticket < T) & ~double,
  )


def describe(m: scotland_yard_map.ScotlandYardMap, table: ActionTable, action: int, station: int):
  """A move's name at ``station`` (0-based), such as ``"bus->46"`` or ``"black->46, double"``."""
  if action == table.num_actions - 1:
    return "pass"
  if m.actions == "by_station" and not table.exists[station, action]:
    return f"no move {action} at {station + 1}"
  k = int(table.ticket[station, action])
  name = m.transports[k] if k < len(m.transports) else "black"
  double = ", double" if table.double[station, action] else ""
  return f"{name}->{int(table.destination[station, action]) + 1}{double}"
