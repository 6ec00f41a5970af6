"""Games behind pure, fixed-shape JAX functions: what a search on a node pool calls to grow a node.

A :class:`JaxGame` is a perfect-information two-player zero-sum game seen as a public-state game
with one infostate per player: the public state is the game state (any pytree of fixed-shape
arrays), and every function below is pure, so a search can call it inside ``jit`` and ``vmap``:

  * ``root()``: the initial state;
  * ``kind(state)``: the player to move (0 or 1, player 0 moves first) or :data:`TERMINAL`;
  * ``legal(state)``: [A] bool, the mover's legal actions;
  * ``step(state, action)``: the state the action leads to (its one public child);
  * ``utility(state)``: player 0's utility at a terminal state (player 1's is its negation);
  * ``encode(state)``: [E] float32, the network's input for the state.

Two implementations: :class:`TableGame`, an enumerated perfect-information game of the registry
(the state is its node index in the public tree, so searches on it can be checked against the table
search node for node), and :mod:`sog.games.pgx_games`, pgx's games, which are never enumerated.
"""

from __future__ import annotations

import abc

import chex
import jax.numpy as jnp
import numpy as np

from sog.games import rules as rules_lib
from sog.games import tree as tree_lib

TERMINAL = rules_lib.TERMINAL


class JaxGame(abc.ABC):
  """A perfect-information game as pure functions of a state pytree (see the module docstring).

  Attributes:
    name: the game's canonical name.
    num_actions: A, the size of the action space.
    encoding_size: E, the length of :meth:`encode`'s output.
    utility_scale: max |utility| over terminal states (PUCT's value unit).
  """

  name: str
  num_actions: int
  encoding_size: int
  utility_scale: float = 1.0

  @abc.abstractmethod
  def root(self) -> chex.ArrayTree:
    """The game's initial state."""

  @abc.abstractmethod
  def kind(self, state: chex.ArrayTree) -> chex.Array:
    """int32 scalar: the player to move (0 or 1), or TERMINAL."""

  @abc.abstractmethod
  def legal(self, state: chex.ArrayTree) -> chex.Array:
    """[A] bool: the mover's legal actions (all False at a terminal state)."""

  @abc.abstractmethod
  def step(self, state: chex.ArrayTree, action: chex.Array) -> chex.ArrayTree:
    """The state after the mover plays ``action`` (a legal one)."""

  @abc.abstractmethod
  def utility(self, state: chex.ArrayTree) -> chex.Array:
    """Player 0's utility at a terminal state (0 elsewhere)."""

  @abc.abstractmethod
  def encode(self, state: chex.ArrayTree) -> chex.Array:
    """[E] float32: the network's input for ``state``."""


class TableGame(JaxGame):
  """An enumerated perfect-information game without chance (a registry game such as
  ``connect_four`` or ``tic_tac_toe``) behind the :class:`JaxGame` functions: a state is a node
  index of its public tree, and every function is a table lookup."""

  def __init__(self, tree: tree_lib.PublicTree):
    if tree.max_infostates != 1:
      raise ValueError(
        f"{tree.name}: a TableGame needs perfect information (one infostate per "
        "player at every public state)"
      )
    if (tree.kind == rules_lib.CHANCE).any():
      raise ValueError(f"{tree.name}: a TableGame cannot have chance nodes")
    if tree.is_leaf.any():
      raise ValueError(f"{tree.name}: a TableGame needs a complete tree (no depth-limit leaves)")
    self.name, self.num_actions = tree.name, tree.num_actions
    self.encoding_size = int(tree.encoding.shape[-1])
    terminal = tree.kind == TERMINAL
    utilities = np.where(
      terminal, tree.payoff[:, 0, 0] / np.where(terminal, tree.pair_weight[:, 0, 0], 1.0), 0.0
    )
    self.utility_scale = float(np.abs(utilities).max()) or 1.0
    self._kind = jnp.asarray(tree.kind, jnp.int32)
    self._legal = jnp.asarray(tree.legal[:, 0] & ~terminal[:, None])
    self._child = jnp.asarray(tree.up_child[:, :, 0], jnp.int32)
    self._utility = jnp.asarray(utilities, jnp.float32)
    self._encoding = jnp.asarray(tree.encoding, jnp.float32)

  def root(self) -> chex.Array:
    return jnp.int32(0)

  def kind(self, state: chex.Array) -> chex.Array:
    return self._kind[state]

  def legal(self, state: chex.Array) -> chex.Array:
    return self._legal[state]

  def step(self, state: chex.Array, action: chex.Array) -> chex.Array:
    return self._child[state, action]

  def utility(self, state: chex.Array) -> chex.Array:
    return self._utility[state]

  def encode(self, state: chex.Array) -> chex.Array:
    return self._encoding[state]
