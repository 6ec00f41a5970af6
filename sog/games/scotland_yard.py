"""Scotland Yard on maps read from files (:mod:`sog.games.scotland_yard_map`).

Player 0 is Mr X, player 1 the team of detectives (one infostate: all they know is public). Each
round Mr X moves, then each detective in turn. The rules, where the map file does not set them
(its options: :mod:`sog.games.scotland_yard_map`):
  * Mr X's start is public (``"mr_x_start": 6``) or private, drawn uniformly from a set of stations
    (``"mr_x_start": [4, 9, 14]``, a chance event only he observes); his station is revealed after
    his move in the map's reveal rounds; the ticket of every move is public (a black ticket hides
    the transport).
  * Drawn detective starts: after Mr X's start, each detective in turn draws a start card from
    those left, never Mr X's station (a public chance event whose likelihood depends on where Mr X
    is).
  * A move uses a ticket of its transport, or one of Mr X's black tickets; tickets are public.
    With ``tickets_to_mr_x`` each ticket a detective uses goes to Mr X.
  * A double move (Mr X's double-move card, only with two rounds left) is two moves of his, each a
    round of its own (revealed if its round is a reveal round), before the detectives move.
  * Mr X may not move onto a detective; with no legal move he is caught (he plays the action PASS,
    which ends the game). Detectives may not share a station; a detective with no legal move plays
    PASS.
  * A detective moving onto Mr X's station catches him: detectives +1, Mr X -1. Mr X wins (+1) if he
    is not caught by the end of the last round.
Mr X's infostate within a public state is his current station (0-based). Actions are numbered by
the map's layout (:mod:`sog.games.scotland_yard_actions`), PASS last. Public children: below Mr X,
slot ``double * K * N + ticket * N + destination`` in a reveal round (everyone sees where he
went), the same with destination 0 otherwise (only the ticket is seen), slot ``(1 + doubles) K N``
for PASS; below a detective, slot a when move a lands on Mr X (which depends on his station: the
game's ``child_depends_on_opponent``) and slot A + a when it does not, or when a is PASS; below a
start draw, slot c for start card c.
"""

from __future__ import annotations

import chex
import flax.struct
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import scotland_yard_actions
from sog.games import scotland_yard_map

_PLAYING, _CAUGHT, _ESCAPED = 0, 1, 2


@flax.struct.dataclass
class ScotlandYardState:
  """A public state: whose turn it is and everything everyone sees (int32 leaves).

  Attributes:
    round: Mr X's moves before the current round's, 0-based (a double move's first move counts).
    mover: 0 while Mr X moves (or a start is drawn), k >= 1 while detective k does.
    detectives: [D], each detective's station (-1 before its start is drawn).
    detective_tickets: [D, T], each detective's tickets by transport.
    mr_x_tickets: [K], Mr X's tickets by transport, then his black tickets if he has any.
    double_moves: Mr X's double-move cards left.
    doubling: 1 between the two moves of a double move.
    last_reveal: Mr X's last publicly known station, -1 before any.
    status: playing, caught or escaped.
  """

  round: chex.Array
  mover: chex.Array
  detectives: chex.Array
  detective_tickets: chex.Array
  mr_x_tickets: chex.Array
  double_moves: chex.Array
  doubling: chex.Array
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
    actions: the map's :class:`~sog.games.scotland_yard_actions.ActionTable`.
    pass_action: the action PASS, A - 1.
  """

  child_depends_on_opponent = True
  max_fan_out = 2  # a detective's move lands on Mr X or not

  def __init__(self, map: str = "glasses"):
    self.map = scotland_yard_map.ScotlandYardMap.load(map)
    m = self.map
    self.name = f"scotland_yard(map={map})"
    N, T, D = m.num_stations, len(m.transports), m.num_detectives
    K = scotland_yard_actions.ticket_kinds(m)
    self.actions = scotland_yard_actions.action_table(m)
    self.num_infostates = (N, 1)
    self.num_actions = self.actions.num_actions
    self.pass_action = self.num_actions - 1
    self._mr_x_block = K * N  # Mr X's child slots of one variant (single or double move)
    self._pass_slot = (2 if m.double_moves else 1) * K * N
    self._cards = np.asarray(m.detective_starts, np.int32)
    self.max_chance_outcomes = len(self._cards) if m.drawn_starts else 0
    self.max_children = max(self._pass_slot + 1, 2 * self.num_actions, self.max_chance_outcomes)
    self.max_moves = m.rounds * (1 + D) + (D if m.drawn_starts else 0)
    # Mr X moves first (a double move is two public moves), then each detective: his next
    # decision is 1 + D moves on; the detectives' first follows the start draws (one per detective)
    # and his move, and their next the last one's move and his
    mr_x_moves = 2 if m.double_moves else 1
    draws = D if m.drawn_starts else 0
    self.max_moves_between_decisions = max(1 + D, draws + mr_x_moves, 1 + mr_x_moves)
    self.enumerable = m.enumerable
    self.encoding_size = (
      D * (N + T) + K + (D + 1) + (m.rounds + 1) + N + m.private_start + 2 * bool(m.double_moves)
    )
    self._reveals = np.array([r in m.reveal_rounds for r in range(m.rounds + 1)])

  def deal(self) -> np.ndarray:
    deal = np.zeros((self.map.num_stations, 1))
    deal[list(self.map.mr_x_starts), 0] = 1.0 / len(self.map.mr_x_starts)
    return deal

  def root(self) -> ScotlandYardState:
    m = self.map
    starts = [-1] * m.num_detectives if m.drawn_starts else list(m.detective_starts)
    black = [m.black_tickets] if m.black_tickets else []
    return ScotlandYardState(
      round=jnp.int32(0),
      mover=jnp.int32(0),
      detectives=jnp.asarray(starts, jnp.int32),
      detective_tickets=jnp.tile(
        jnp.asarray(m.detective_tickets, jnp.int32), (m.num_detectives, 1)
      ),
      mr_x_tickets=jnp.asarray([*m.mr_x_tickets, *black], jnp.int32),
      double_moves=jnp.int32(m.double_moves),
      doubling=jnp.int32(0),
      last_reveal=jnp.int32(-1 if m.private_start else m.mr_x_starts[0]),
      status=jnp.int32(_PLAYING),
    )

  def _drawing(self, state: ScotlandYardState) -> chex.Array:
    """Whether a detective's start is still to be drawn."""
    return state.detectives[-1] < 0

  def kind(self, state: ScotlandYardState) -> chex.Array:
    player = jnp.where(state.mover == 0, public_game.PLAYER_0, public_game.PLAYER_1)
    player = jnp.where(self._drawing(state), public_game.CHANCE, player)
    return jnp.where(state.status == _PLAYING, player, public_game.TERMINAL).astype(jnp.int32)

  def _detective(self, state: ScotlandYardState) -> chex.Array:
    """The moving detective's index in ``state.detectives`` (0 while Mr X moves)."""
    return jnp.clip(state.mover - 1, 0, self.map.num_detectives - 1)

  def _occupied(self, state: ScotlandYardState) -> chex.Array:
    """[N] bool: the stations a detective stands on."""
    N = self.map.num_stations
    stations = jnp.where(state.detectives >= 0, state.detectives, N)
    return jnp.zeros(N + 1, bool).at[stations].set(True)[:N]

  def legal(self, state: ScotlandYardState) -> chex.Array:
    N, table = self.map.num_stations, self.actions
    ticket, destination = jnp.asarray(table.ticket), jnp.asarray(table.destination)
    occupied = self._occupied(state)
    can_double = (
      (state.double_moves > 0) & (state.doubling == 0) & (state.round + 2 <= self.map.rounds)
    )
    # Mr X at each station s, [N, A]: a move, its ticket, no detective at the destination.
    mr_x = (
      jnp.asarray(table.exists)
      & (state.mr_x_tickets[ticket] > 0)
      & ~occupied[destination]
      & (can_double | ~jnp.asarray(table.double))
    )[:, : self.pass_action]
    k = self._detective(state)
    here = state.detectives[k]
    others = occupied.at[here].set(False)
    tickets = state.detective_tickets[k]
    detective = (
      jnp.asarray(table.detective)[here]
      & (tickets[jnp.minimum(ticket[here], tickets.shape[0] - 1)] > 0)
      & ~others[destination[here]]
    )[: self.pass_action]
    is_mr_x = state.mover == 0
    moves = jnp.where(is_mr_x, mr_x, jnp.zeros_like(mr_x).at[0].set(detective))
    # PASS where nothing else is legal, at the actor's infostates (the detectives have one).
    actor_infostates = jnp.arange(N) < jnp.where(is_mr_x, N, 1)
    legal = jnp.concatenate([moves, ~moves.any(-1, keepdims=True)], -1)
    playing = (state.status == _PLAYING) & ~self._drawing(state)
    return legal & actor_infostates[:, None] & playing

  def _mr_x_slots(self, state: ScotlandYardState, stations: chex.Array) -> chex.Array:
    """[..., A]: the public child Mr X's action reaches from each of ``stations`` [...]."""
    N, table = self.map.num_stations, self.actions
    revealed = jnp.asarray(self._reveals)[state.round + 1]
    seen = jnp.where(revealed, jnp.asarray(table.destination)[stations], 0)
    ticket, double = jnp.asarray(table.ticket)[stations], jnp.asarray(table.double)[stations]
    slot = double * self._mr_x_block + ticket * N + seen
    return slot.at[..., self.pass_action].set(self._pass_slot)

  def _detective_slots(self, state: ScotlandYardState, mr_x: chex.Array) -> chex.Array:
    """[..., A]: the public child the moving detective's action reaches with Mr X at each of
    ``mr_x`` [...]: slot a when it lands on him, A + a otherwise."""
    A = self.num_actions
    actions = jnp.arange(A, dtype=jnp.int32)
    destination = jnp.asarray(self.actions.destination)[state.detectives[self._detective(state)]]
    catches = (actions < self.pass_action) & (destination == jnp.asarray(mr_x)[..., None])
    return jnp.where(catches, actions, A + actions)

  def _draws(self, state: ScotlandYardState) -> tuple[chex.Array, chex.Array, chex.Array]:
    """The next start draw's cards left [C], P(card | Mr X's station) [C, N] and the public
    probability of each card [C], Mr X's station weighed by the deal and the cards drawn so far."""
    cards = jnp.asarray(self._cards)
    C = cards.shape[0]
    left = ~(cards[:, None] == state.detectives[None, :]).any(-1)
    allowed = left[:, None] & (cards[:, None] != jnp.arange(self.map.num_stations)[None, :])
    likelihood = allowed / jnp.maximum(allowed.sum(0, keepdims=True), 1)
    # Each earlier draw had C - i cards, one fewer where Mr X's station was among them.
    drawn = (state.detectives >= 0).sum()
    on_a_card = (cards[:, None] == jnp.arange(self.map.num_stations)[None, :]).any(0)
    earlier = jnp.arange(C)
    per_draw = jnp.where(earlier[:, None] < drawn, C - earlier[:, None] - on_a_card[None, :], 1)
    taken = ~left[:, None] & (cards[:, None] == jnp.arange(self.map.num_stations)[None, :])
    weight = jnp.asarray(self.deal()[:, 0]) / jnp.prod(per_draw, 0) * ~taken.any(0)
    total = weight.sum()  # 0 only after the draws, where the probabilities are not read
    probability = likelihood @ (weight / jnp.where(total > 0, total, 1.0))
    return left, likelihood, probability

  def transitions(self, state: ScotlandYardState) -> public_game.Transitions:
    N, table = self.map.num_stations, self.actions
    stations = jnp.arange(N)
    detective_slot = self._detective_slots(state, stations).T  # [A, O]
    mr_x_slot = self._mr_x_slots(state, stations)  # [S, A]
    is_mr_x = state.mover == 0
    child = jnp.where(is_mr_x, mr_x_slot[:, :, None], detective_slot[None])
    legal = self.legal(state)
    # the slots present, from each mover's own [S, A] or [A, O] table rather than the [S, A, O]
    # child (the detectives' one infostate is row 0)
    by_detective = jnp.broadcast_to(legal[0][:, None], detective_slot.shape)
    present = jnp.zeros(self.max_children, jnp.int32)
    present = (
      jnp.where(
        is_mr_x,
        present.at[mr_x_slot.ravel()].add(legal.ravel()),
        present.at[detective_slot.ravel()].add(by_detective.ravel()),
      )
      > 0
    )
    next_infostate = jnp.where(is_mr_x, jnp.asarray(table.destination), 0)
    if not self.max_chance_outcomes:
      probability, likelihood = jnp.zeros(0), jnp.zeros((0, N, N))
    else:
      left, draw_likelihood, probability = self._draws(state)
      drawing = self._drawing(state) & (state.status == _PLAYING)
      outcomes = jnp.zeros_like(present).at[: left.shape[0]].set(left & (probability > 0))
      present = jnp.where(drawing, outcomes, present)
      likelihood = jnp.broadcast_to(draw_likelihood[:, :, None], (left.shape[0], N, N))
    return public_game.Transitions(
      present=present,
      child=child,
      next_infostate=next_infostate.astype(jnp.int32),
      probability=probability,
      likelihood=likelihood,
    )

  def world_row(self, state: ScotlandYardState, infostates: chex.Array) -> public_game.WorldRow:
    """:meth:`transitions`' row for Mr X at ``infostates[0]``, computed for his station alone."""
    mr_x = infostates[0]
    is_mr_x = state.mover == 0
    destination = jnp.asarray(self.actions.destination)[mr_x]
    child = jnp.where(is_mr_x, self._mr_x_slots(state, mr_x), self._detective_slots(state, mr_x))
    if self.max_chance_outcomes:
      left, likelihood, probability = self._draws(state)
      outcomes, likelihood = left & (probability > 0), likelihood[:, mr_x]
    else:
      outcomes, likelihood = jnp.zeros(0, bool), jnp.zeros(0)
    return public_game.WorldRow(
      child=child,
      next_infostate=jnp.where(is_mr_x, destination, 0).astype(jnp.int32),
      outcomes=outcomes,
      likelihood=likelihood,
    )

  def _after_detective(self, state: ScotlandYardState) -> ScotlandYardState:
    """The state after the moving detective moved without a catch."""
    last_detective = state.mover == self.map.num_detectives
    last_round = state.round + 1 == self.map.rounds
    next_detective = state.replace(mover=state.mover + 1)
    escaped = state.replace(status=jnp.int32(_ESCAPED))
    next_round = state.replace(round=state.round + 1, mover=jnp.int32(0))
    return _select(~last_detective, next_detective, _select(last_round, escaped, next_round))

  def _mr_x_child(self, state: ScotlandYardState, k: chex.Array) -> ScotlandYardState:
    N = self.map.num_stations
    double = k >= self._mr_x_block
    ticket, destination = (k % self._mr_x_block) // N, k % N
    revealed = jnp.asarray(self._reveals)[state.round + 1]
    moved = state.replace(
      mover=jnp.where(double, 0, 1).astype(jnp.int32),
      round=state.round + double,
      mr_x_tickets=state.mr_x_tickets.at[ticket].add(-1),
      double_moves=state.double_moves - double,
      doubling=double.astype(jnp.int32),
      last_reveal=jnp.where(revealed, destination, state.last_reveal),
    )
    return _select(k < self._pass_slot, moved, state.replace(status=jnp.int32(_CAUGHT)))

  def _detective_child(self, state: ScotlandYardState, k: chex.Array) -> ScotlandYardState:
    A, table = self.num_actions, self.actions
    action = jnp.where(k < A, k, k - A)
    j = self._detective(state)
    ticket = jnp.asarray(table.ticket)[state.detectives[j], action]
    destination = jnp.asarray(table.destination)[state.detectives[j], action]
    moved = state.replace(
      detectives=state.detectives.at[j].set(destination),
      detective_tickets=state.detective_tickets.at[j, ticket].add(-1),
      mr_x_tickets=state.mr_x_tickets.at[ticket].add(int(self.map.tickets_to_mr_x)),
    )
    moved = _select(action < self.pass_action, moved, state)
    return _select(k < A, moved.replace(status=jnp.int32(_CAUGHT)), self._after_detective(moved))

  def child(self, state: ScotlandYardState, k: chex.Array) -> ScotlandYardState:
    k = jnp.asarray(k, jnp.int32)  # the state's leaves stay int32 whatever k's dtype
    child = _select(state.mover == 0, self._mr_x_child(state, k), self._detective_child(state, k))
    if self.max_chance_outcomes:
      drawn = state.replace(
        detectives=state.detectives.at[(state.detectives >= 0).sum()].set(
          jnp.asarray(self._cards)[jnp.clip(k, 0, len(self._cards) - 1)]
        )
      )
      child = _select(self._drawing(state), drawn, child)
    return child

  def utility(self, state: ScotlandYardState) -> chex.Array:
    S = self.max_infostates
    return jnp.full((S, S), jnp.where(state.status == _ESCAPED, 1.0, -1.0))

  def encode(self, state: ScotlandYardState) -> chex.Array:
    m = self.map
    N, D = m.num_stations, m.num_detectives
    f32 = jnp.float32
    positions = jax.nn.one_hot(state.detectives, N, dtype=f32)
    detective_scale = np.maximum(1.0, np.asarray(m.detective_tickets, np.float32))
    black = [m.black_tickets] if m.black_tickets else []
    mr_x_scale = np.maximum(1.0, np.asarray([*m.mr_x_tickets, *black], np.float32))
    detective_tickets = state.detective_tickets.astype(f32) / detective_scale
    mr_x_tickets = state.mr_x_tickets.astype(f32) / mr_x_scale
    mover = jax.nn.one_hot(state.mover, D + 1, dtype=f32)
    round_code = jax.nn.one_hot(state.round, m.rounds + 1, dtype=f32)
    # With a private start, a last slot marks Mr X's station as not yet seen.
    reveal_size = N + m.private_start
    reveal = jax.nn.one_hot(
      jnp.where(state.last_reveal < 0, reveal_size - 1, state.last_reveal), reveal_size, dtype=f32
    )
    doubles = (
      [jnp.stack([state.double_moves / m.double_moves, state.doubling]).astype(f32)]
      if m.double_moves
      else []
    )
    return jnp.concatenate(
      [
        positions.ravel(),
        detective_tickets.ravel(),
        mr_x_tickets,
        mover,
        round_code,
        reveal,
        *doubles,
      ]
    )

  def action_name(self, action: int) -> str:
    """The move's name where it is the same at every station; see :meth:`describe`."""
    if action == self.pass_action:
      return "pass"
    if self.map.actions == "by_station":
      return f"move {action}"
    return scotland_yard_actions.describe(self.map, self.actions, action, 0)

  def describe(self, action: int, station: int) -> str:
    """The move's name at ``station`` (0-based), the mover's (Mr X's or the moving detective's)."""
    return scotland_yard_actions.describe(self.map, self.actions, action, station)
