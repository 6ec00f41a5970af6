"""Scotland Yard on maps read from files (:mod:`sog.games.scotland_yard_map`).

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
``transport * stations + destination`` plus the final action PASS. Public children: below Mr X,
slot a for a move a in a reveal round (everyone sees where he went), slot ``transport * stations``
for every move by that transport otherwise (only the ticket is seen), slot PASS when he is stuck;
below a detective, slot a when move a lands on Mr X (which depends on his station: the game's
``child_depends_on_opponent``) and slot A + a when it does not, or when a is PASS.
"""

from __future__ import annotations

import chex
import flax.struct
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import scotland_yard_map

_PLAYING, _CAUGHT, _ESCAPED = 0, 1, 2


@flax.struct.dataclass
class ScotlandYardState:
  """A public state: whose turn it is and everything everyone sees (int32 leaves).

  Attributes:
    round: the round, 0-based.
    mover: 0 while Mr X moves, k >= 1 while detective k does.
    detectives: [D], each detective's station.
    detective_tickets: [D, T], each detective's tickets by transport.
    mr_x_tickets: [T], Mr X's tickets by transport.
    last_reveal: Mr X's last publicly known station, -1 before any.
    status: playing, caught or escaped.
  """

  round: chex.Array
  mover: chex.Array
  detectives: chex.Array
  detective_tickets: chex.Array
  mr_x_tickets: chex.Array
  last_reveal: chex.Array
  status: chex.Array


def _select(
  condition: chex.Array, if_true: ScotlandYardState, if_false: ScotlandYardState
) -> ScotlandYardState:
  """``if_true`` where ``condition`` (a scalar) holds, else ``if_false``, leaf by leaf."""
  return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), if_true, if_false)


class ScotlandYard(public_game.PublicGame):
  """Scotland Yard as a PublicGame on a map file (see the module docstring).

  Attributes:
    map: the map and its game parameters.
    pass_action: the action PASS, T * N for T transports and N stations.
  """

  child_depends_on_opponent = True

  def __init__(self, map: str = "glasses"):
    self.map = scotland_yard_map.ScotlandYardMap.load(map)
    m = self.map
    self.name = f"scotland_yard(map={map})"
    N, T, D = m.num_stations, len(m.transports), m.num_detectives
    self.num_infostates = (N, 1)
    self.pass_action = T * N
    self.num_actions = T * N + 1
    self.max_children = 2 * self.num_actions
    self.max_moves = m.rounds * (1 + D)  # Mr X and each detective, every round
    self.encoding_size = D * (N + T) + T + (D + 1) + (m.rounds + 1) + N + m.private_start
    self._adjacency = m.adjacency()  # [T, N, N]
    # Indexed by the round a move is made in, 1-based: whether Mr X is seen after it.
    self._reveals = np.array([r in m.reveal_rounds for r in range(m.rounds + 1)])

  def deal(self) -> np.ndarray:
    deal = np.zeros((self.map.num_stations, 1))
    deal[list(self.map.mr_x_starts), 0] = 1.0 / len(self.map.mr_x_starts)
    return deal

  def root(self) -> ScotlandYardState:
    m = self.map
    return ScotlandYardState(
      round=jnp.int32(0),
      mover=jnp.int32(0),
      detectives=jnp.asarray(m.detective_starts, jnp.int32),
      detective_tickets=jnp.tile(
        jnp.asarray(m.detective_tickets, jnp.int32), (m.num_detectives, 1)
      ),
      mr_x_tickets=jnp.asarray(m.mr_x_tickets, jnp.int32),
      last_reveal=jnp.int32(-1 if m.private_start else m.mr_x_starts[0]),
      status=jnp.int32(_PLAYING),
    )

  def kind(self, state: ScotlandYardState) -> chex.Array:
    player = jnp.where(state.mover == 0, public_game.PLAYER_0, public_game.PLAYER_1)
    return jnp.where(state.status == _PLAYING, player, public_game.TERMINAL).astype(jnp.int32)

  def _detective(self, state: ScotlandYardState) -> chex.Array:
    """The moving detective's index in ``state.detectives`` (0 while Mr X moves)."""
    return jnp.clip(state.mover - 1, 0, self.map.num_detectives - 1)

  def legal(self, state: ScotlandYardState) -> chex.Array:
    N = self.map.num_stations
    adjacency = jnp.asarray(self._adjacency)
    occupied = jnp.zeros(N, bool).at[state.detectives].set(True)
    # Mr X at each station s, [N, T, N]: an edge, a ticket, no detective at the destination.
    mr_x = (
      adjacency.transpose(1, 0, 2)
      & (state.mr_x_tickets > 0)[None, :, None]
      & ~occupied[None, None, :]
    ).reshape(N, self.pass_action)
    k = self._detective(state)
    others = occupied.at[state.detectives[k]].set(False)
    detective = (
      adjacency[:, state.detectives[k], :]
      & (state.detective_tickets[k] > 0)[:, None]
      & ~others[None, :]
    ).reshape(self.pass_action)
    is_mr_x = state.mover == 0
    moves = jnp.where(is_mr_x, mr_x, jnp.zeros_like(mr_x).at[0].set(detective))
    # PASS where nothing else is legal, at the actor's infostates (the detectives have one).
    actor_infostates = jnp.arange(N) < jnp.where(is_mr_x, N, 1)
    legal = jnp.concatenate([moves, ~moves.any(-1, keepdims=True)], -1)
    playing = state.status == _PLAYING
    return legal & actor_infostates[:, None] & playing

  def transitions(self, state: ScotlandYardState) -> public_game.Transitions:
    N, A = self.map.num_stations, self.num_actions
    actions = jnp.arange(A, dtype=jnp.int32)
    is_move = actions < self.pass_action
    transport, destination = actions // N, actions % N
    revealed = jnp.asarray(self._reveals)[state.round + 1]
    mr_x_slot = jnp.where(is_move & ~revealed, transport * N, actions)  # [A]
    catches = is_move[:, None] & (destination[:, None] == jnp.arange(N)[None, :])  # [A, O]
    detective_slot = jnp.where(catches, actions[:, None], A + actions[:, None])
    is_mr_x = state.mover == 0
    slot = jnp.where(is_mr_x, mr_x_slot[:, None], detective_slot)  # [A, O]
    child = jnp.broadcast_to(slot[None], (N, A, N))
    legal = self.legal(state)
    reached = jnp.broadcast_to(legal[:, :, None], child.shape)
    present = jnp.zeros(self.max_children, jnp.int32).at[child.ravel()].add(reached.ravel()) > 0
    stay = jnp.arange(N, dtype=jnp.int32)[:, None]
    next_infostate = jnp.where(is_mr_x, jnp.where(is_move, destination, stay), 0)
    return public_game.Transitions(
      present=present,
      child=child,
      next_infostate=next_infostate.astype(jnp.int32),
      probability=jnp.zeros(0),
      likelihood=jnp.zeros((0, N, N)),
    )

  def _after_detective(self, state: ScotlandYardState) -> ScotlandYardState:
    """The state after the moving detective moved without a catch."""
    last_detective = state.mover == self.map.num_detectives
    last_round = state.round + 1 == self.map.rounds
    next_detective = state.replace(mover=state.mover + 1)
    escaped = state.replace(status=jnp.int32(_ESCAPED))
    next_round = state.replace(round=state.round + 1, mover=jnp.int32(0))
    return _select(~last_detective, next_detective, _select(last_round, escaped, next_round))

  def child(self, state: ScotlandYardState, k: chex.Array) -> ScotlandYardState:
    N, A = self.map.num_stations, self.num_actions
    k = jnp.asarray(k, jnp.int32)  # the state's leaves stay int32 whatever k's dtype
    caught = jnp.int32(_CAUGHT)
    is_mr_x = state.mover == 0
    action = jnp.where(is_mr_x | (k < A), k, k - A)
    is_move = action < self.pass_action
    transport, destination = action // N, action % N
    revealed = jnp.asarray(self._reveals)[state.round + 1]
    mr_x_moved = state.replace(
      mover=jnp.int32(1),
      mr_x_tickets=state.mr_x_tickets.at[transport].add(-1),
      last_reveal=jnp.where(revealed, destination, state.last_reveal),
    )
    mr_x_child = _select(is_move, mr_x_moved, state.replace(status=caught))
    j = self._detective(state)
    detective_moved = _select(
      is_move,
      state.replace(
        detectives=state.detectives.at[j].set(destination),
        detective_tickets=state.detective_tickets.at[j, transport].add(-1),
      ),
      state,
    )
    detective_child = _select(
      k < A, detective_moved.replace(status=caught), self._after_detective(detective_moved)
    )
    return _select(is_mr_x, mr_x_child, detective_child)

  def utility(self, state: ScotlandYardState) -> chex.Array:
    S = self.max_infostates
    return jnp.full((S, S), jnp.where(state.status == _ESCAPED, 1.0, -1.0))

  def encode(self, state: ScotlandYardState) -> chex.Array:
    m = self.map
    N, D = m.num_stations, m.num_detectives
    f32 = jnp.float32
    positions = jax.nn.one_hot(state.detectives, N, dtype=f32)
    detective_scale = np.maximum(1.0, np.asarray(m.detective_tickets, np.float32))
    mr_x_scale = np.maximum(1.0, np.asarray(m.mr_x_tickets, np.float32))
    detective_tickets = state.detective_tickets.astype(f32) / detective_scale
    mr_x_tickets = state.mr_x_tickets.astype(f32) / mr_x_scale
    mover = jax.nn.one_hot(state.mover, D + 1, dtype=f32)
    round_code = jax.nn.one_hot(state.round, m.rounds + 1, dtype=f32)
    # With a private start, a last slot marks Mr X's station as not yet seen.
    reveal_size = N + m.private_start
    reveal = jax.nn.one_hot(
      jnp.where(state.last_reveal < 0, reveal_size - 1, state.last_reveal), reveal_size, dtype=f32
    )
    return jnp.concatenate(
      [positions.ravel(), detective_tickets.ravel(), mr_x_tickets, mover, round_code, reveal]
    )

  def action_name(self, action: int) -> str:
    if action == self.pass_action:
      return "pass"
    transport, destination = divmod(action, self.map.num_stations)
    return f"{self.map.transports[transport]}->{destination + 1}"
