"""Public-state games as pure JAX functions: the one definition of a game's rules.

A :class:`PublicGame` is a factored two-player zero-sum game (DESIGN.md, "The game model") seen
from its public states. A world state is (public state, private state of player 0, private state of
player 1); player i's infostate at a public state is its private state s_i in ``range(S_i)``. Every
function below takes a public state (any pytree of fixed-shape arrays) and is pure, so a search can
call it inside ``jit`` and ``vmap``, and enumeration (:mod:`sog.games.walk`) walks the same
functions into tables for exact evaluation of small games. Arrays over infostates are padded to
S = max(S0, S1); over public children to K, the most children a public state has.

  * ``root()``: the public state after the private deal, whose joint probability is ``deal()``;
  * ``kind(state)``: PLAYER_0, PLAYER_1, CHANCE or TERMINAL;
  * ``legal(state)``: [S, A] bool, the actor's legal actions at each of its infostates (none at an
    infostate s >= S_actor, and none at chance or terminal states);
  * ``transitions(state)``: the :class:`Transitions` to the public children (which public child
    each (infostate, action) reaches, and the actor's infostate there; chance outcomes and their
    likelihoods), which ``child(state, k)`` returns one at a time;
  * ``utility(state)``: [S, S], player 0's utility u_0(s0, s1) at a terminal state;
  * ``encode(state)``: [E] float32, the network's input for the public state.

A perfect-information game is the case S0 = S1 = 1.
"""

from __future__ import annotations

import abc

import chex
import flax.struct
import jax.numpy as jnp
import numpy as np

#: A public state's kind: who acts, or chance, or the end.
PLAYER_0, PLAYER_1, CHANCE, TERMINAL = 0, 1, 2, 3
KIND_NAMES = ("player_0", "player_1", "chance", "terminal")


@flax.struct.dataclass
class Transitions:
  """The public children of a public state, in slots k < K.

  Below a player node (actor i, opponent j):
    present: [K] bool, the slots that hold a child.
    child: [S, A, O] int32, the slot of the public child the actor reaches from infostate s with
      action a when the opponent holds o (any value where a is illegal at s). O = 1 (the same child
      for every o) unless the game's ``child_depends_on_opponent``, then O = S: the public
      child can depend on the opponent's private state (a detective landing on Mr X's
      station sees him caught), and the opponent infostates that reach a child are those it admits.
    next_infostate: [S, A] int32, the actor's infostate in the child.
  Below a chance node (infostates are kept), outcome k in slot k < C:
    present: [K] bool, the outcomes.
    probability: [C], the public probability P(k) of each outcome (they sum to 1).
    likelihood: [C, S, S], P(k | s0, s1), the probability of outcome k given both private states
      (card removal: a dealt card no player holds).
  The fields of the other kind are unused (any value of the right shape).
  """

  present: chex.Array
  child: chex.Array
  next_infostate: chex.Array
  probability: chex.Array
  likelihood: chex.Array


@flax.struct.dataclass
class WorldRow:
  """What one world state (s0, s1) at a public state needs of its :class:`Transitions`.

  Attributes:
    child: [A] int32, the slot each action of the actor (at its infostate) reaches, given the
      opponent's infostate.
    next_infostate: [A] int32, the actor's infostate there.
    outcomes: [C] bool, the chance outcomes present.
    likelihood: [C], P(k | s0, s1) of each chance outcome.
  """

  child: chex.Array
  next_infostate: chex.Array
  outcomes: chex.Array
  likelihood: chex.Array


class PublicGame(abc.ABC):
  """A public-state game as pure functions of a public-state pytree (see the module docstring).

  Attributes:
    name: the game's canonical name (``"leduc_poker"``, ``"liars_dice(faces=4)"``).
    num_infostates: (S0, S1), each player's number of private states.
    num_actions: A, the size of the action space both players share.
    max_children: K, the most public children any public state has.
    max_chance_outcomes: C, the most outcomes a chance node has (0 without public chance).
    child_depends_on_opponent: whether a public child can depend on the opponent's private state
      (:class:`Transitions`).
    max_fan_out: F, the most public children one action of the actor at one infostate reaches over
      the opponent's infostates (1 unless ``child_depends_on_opponent``; 2 where a detective's
      move lands on Mr X or not): the width of a node pool's map from (s, a) to its children.
    encoding_size: E, the length of :meth:`encode`'s output.
    utility_scale: max |u_0| over the terminal world states (the unit of PUCT's values on a node
      pool; :mod:`sog.games.conformance` holds an enumerable game to it).
    max_moves: the most public moves (player actions and chance outcomes after the deal) from the
      root to any public state, the game's length: how long a path of child slots self-play's
      buffers and a re-solve's summaries hold, and a bound on a re-solve's branch. None: counted
      by enumerating the game (required where ``enumerable`` is False).
    max_moves_between_decisions: the most public moves from the root to a player's first
      decision, or from one of a player's decisions to its next: a bound on the branch a re-solve
      plans when each player searches every decision it makes (:func:`decision_gap`). None:
      ``max_moves``. A game too large to enumerate declares it to keep its re-solves' pools small
      (:mod:`sog.games.conformance` holds an enumerable game to it).
    enumerable: whether the whole public tree may be enumerated (exact exploitability, SoG's
      protocol, the OpenSpiel bridge, searches in pools sized to their subgames). A game too large
      for that sets False: it is then searched on the belief pool and self-played from its
      functions alone, and everything that needs its tree refuses it with a ``ValueError``.
  """

  name: str
  num_infostates: tuple[int, int]
  num_actions: int
  max_children: int
  encoding_size: int
  max_chance_outcomes: int = 0
  child_depends_on_opponent: bool = False
  max_fan_out: int = 1
  utility_scale: float = 1.0
  max_moves: int | None = None
  max_moves_between_decisions: int | None = None
  enumerable: bool = True

  @property
  def max_infostates(self) -> int:
    """S = max(S0, S1), the padded size of every array over infostates."""
    return max(self.num_infostates)

  @abc.abstractmethod
  def deal(self) -> np.ndarray:
    """[S0, S1] float64: the joint probability of the private states at the root (static)."""

  @abc.abstractmethod
  def root(self) -> chex.ArrayTree:
    """The public state after the private deal."""

  @abc.abstractmethod
  def kind(self, state: chex.ArrayTree) -> chex.Array:
    """int32 scalar: PLAYER_0, PLAYER_1, CHANCE or TERMINAL."""

  @abc.abstractmethod
  def legal(self, state: chex.ArrayTree) -> chex.Array:
    """[S, A] bool: the actor's legal actions at each of its infostates."""

  @abc.abstractmethod
  def transitions(self, state: chex.ArrayTree) -> Transitions:
    """The public children's slots, edges and probabilities (see :class:`Transitions`)."""

  @abc.abstractmethod
  def child(self, state: chex.ArrayTree, k: chex.Array) -> chex.ArrayTree:
    """The public state in slot ``k`` of :meth:`transitions` (any state for an empty slot)."""

  @abc.abstractmethod
  def utility(self, state: chex.ArrayTree) -> chex.Array:
    """[S, S]: player 0's utility u_0(s0, s1) at a terminal state (player 1 gets its negation)."""

  @abc.abstractmethod
  def encode(self, state: chex.ArrayTree) -> chex.Array:
    """[E] float32: the network's input for the public state."""

  def world_row(self, state: chex.ArrayTree, infostates: chex.Array) -> WorldRow:
    """The :class:`WorldRow` of the world with private states ``infostates`` [2] (s0, s1): its
    rows of :meth:`transitions`. A game whose transitions are large may override this with a
    cheaper computation of the same row (a batch of worlds then never builds [S, A, O] arrays);
    :mod:`sog.games.conformance` checks that the two agree."""
    t = self.transitions(state)
    actor = jnp.clip(self.kind(state), 0, 1)
    own, opponent = infostates[actor], infostates[1 - actor]
    admits = opponent if self.child_depends_on_opponent else 0
    C = self.max_chance_outcomes
    return WorldRow(
      child=t.child[own, :, admits],
      next_infostate=t.next_infostate[own],
      outcomes=t.present[:C],
      likelihood=t.likelihood[:, infostates[0], infostates[1]],
    )

  def action_name(self, action: int) -> str:
    return str(action)


def padded_deal(game: PublicGame) -> np.ndarray:
  """[S, S] float64: the deal's joint probabilities padded to S = max(S0, S1) (``ValueError``
  unless they are non-negative and sum to 1)."""
  S = game.max_infostates
  s0, s1 = game.num_infostates
  deal = np.zeros((S, S))
  deal[:s0, :s1] = np.asarray(game.deal(), np.float64)
  if deal.min() < 0 or not np.isclose(deal.sum(), 1.0, atol=1e-12):
    raise ValueError(f"{game.name}: deal probabilities must be non-negative and sum to 1")
  return deal


def prior_ranges(game: PublicGame) -> np.ndarray:
  """[2, S] float64: each player's marginal p_i(s) of the private deal (the root's ranges)."""
  deal = padded_deal(game)
  return np.stack([deal.sum(1), deal.sum(0)])


def root_weight(game: PublicGame) -> np.ndarray:
  """[S, S] float64: the pair weight W at the root, the deal over the product of its marginals."""
  deal = padded_deal(game)
  denominator = np.outer(deal.sum(1), deal.sum(0))
  return np.divide(deal, denominator, out=np.zeros_like(deal), where=denominator > 0)


def decision_gap(game: PublicGame) -> int | None:
  """The most public moves a re-solve's branch spans when each player searches every decision it
  makes: the game's ``max_moves_between_decisions``, else its ``max_moves``."""
  gap = game.max_moves_between_decisions
  return game.max_moves if gap is None else gap


def is_perfect_information(game: PublicGame) -> bool:
  """One infostate per player: the public state is the game state."""
  return tuple(game.num_infostates) == (1, 1)


def action_children(game: PublicGame, legal: chex.Array) -> Transitions:
  """The :class:`Transitions` of a player node whose child k is action k, the same for every
  infostate and the actor's infostate kept (poker, dice, perfect information); ``legal`` is the
  actor's [S, A] mask."""
  S, A = legal.shape
  C = game.max_chance_outcomes
  return Transitions(
    present=jnp.zeros(game.max_children, bool).at[:A].set(legal.any(0)),
    child=jnp.broadcast_to(jnp.arange(A, dtype=jnp.int32)[None, :, None], (S, A, 1)),
    next_infostate=jnp.broadcast_to(jnp.arange(S, dtype=jnp.int32)[:, None], (S, A)),
    probability=jnp.zeros(C),
    likelihood=jnp.zeros((C, S, S)),
  )
