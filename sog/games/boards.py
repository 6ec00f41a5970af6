"""The k-in-a-row board games (tic-tac-toe, Connect Four) as perfect-information public-state games:
one private state per player (infostate 0), the board as the public state, child k the board after
action k (so the enumerated public tree is OpenSpiel's game tree, one node per history).

A board is [cells] int32 of marks, cell = row * columns + column (row 0 at the bottom). Player 0 (x)
moves first; k marks in a row (horizontally, vertically or diagonally) win, +1 for the winner and
-1 for the loser; a full board draws. A game says only which cell an action marks
(:meth:`KInARow.cell`).
"""

from __future__ import annotations

import abc

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game

EMPTY, CROSS, NOUGHT = 0, 1, 2  # player 0 marks a cross (X), player 1 a nought (O)
NO_CELL = -1  # what :meth:`KInARow.cell` gives for an illegal action


def lines(rows: int, columns: int, k: int) -> tuple[tuple[int, ...], ...]:
  """Every run of k cells in a row: horizontal, vertical and both diagonals."""
  runs = []
  for r in range(rows):
    for c in range(columns):
      for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        cells = [(r + i * dr, c + i * dc) for i in range(k)]
        if all(0 <= rr < rows and 0 <= cc < columns for rr, cc in cells):
          runs.append(tuple(rr * columns + cc for rr, cc in cells))
  return tuple(runs)


class KInARow(public_game.PublicGame):
  """A k-in-a-row game on a rows x columns board with ``num_actions`` actions."""

  num_infostates = (1, 1)

  def __init__(self, name: str, rows: int, columns: int, k: int, num_actions: int):
    self.name, self.rows, self.columns, self.k = name, rows, columns, k
    self.num_actions = self.max_children = num_actions
    self.cells = self.max_moves = rows * columns
    self.encoding_size = 3 * self.cells + 1
    self.runs = np.asarray(lines(rows, columns, k), np.int32)  # [R, k]

  @abc.abstractmethod
  def cell(self, board: chex.Array, action: chex.Array) -> chex.Array:
    """The cell ``action`` marks on ``board``, or NO_CELL if the action is illegal there."""

  def to_move(self, board: chex.Array) -> chex.Array:
    """The player to move: marks alternate, x first."""
    return (board != EMPTY).sum() % 2

  def winner(self, board: chex.Array) -> chex.Array:
    """CROSS or NOUGHT if that mark fills a run, else EMPTY."""
    marks = board[self.runs]
    full = (marks == marks[:, :1]).all(-1)
    wins = [(full & (marks[:, 0] == mark)).any() for mark in (CROSS, NOUGHT)]
    return jnp.where(wins[0], CROSS, jnp.where(wins[1], NOUGHT, EMPTY))

  def deal(self) -> np.ndarray:
    return np.ones((1, 1))

  def root(self) -> chex.Array:
    return jnp.full(self.cells, EMPTY, jnp.int32)

  def kind(self, state: chex.Array) -> chex.Array:
    over = (self.winner(state) != EMPTY) | (state != EMPTY).all()
    return jnp.where(over, public_game.TERMINAL, self.to_move(state)).astype(jnp.int32)

  def _cells(self, state: chex.Array) -> chex.Array:
    """[A]: the cell each action marks (NO_CELL where it is illegal)."""
    return jax.vmap(self.cell, in_axes=(None, 0))(state, jnp.arange(self.num_actions))

  def legal(self, state: chex.Array) -> chex.Array:
    acting = self.kind(state) < public_game.CHANCE
    return ((self._cells(state) != NO_CELL) & acting)[None]

  def transitions(self, state: chex.Array) -> public_game.Transitions:
    return public_game.action_children(self, self.legal(state))

  def child(self, state: chex.Array, k: chex.Array) -> chex.Array:
    cell = self.cell(state, k)
    mark = jnp.where(self.to_move(state) == 1, NOUGHT, CROSS)
    return state.at[jnp.where(cell == NO_CELL, self.cells, cell)].set(mark, mode="drop")

  def utility(self, state: chex.Array) -> chex.Array:
    winner = self.winner(state)
    value = jnp.where(winner == CROSS, 1.0, jnp.where(winner == NOUGHT, -1.0, 0.0))
    return value[None, None]

  def encode(self, state: chex.Array) -> chex.Array:
    """One-hot (empty, x, o) per cell, then the player to move."""
    cells = jax.nn.one_hot(state, 3, dtype=jnp.float32).ravel()
    return jnp.concatenate([cells, self.to_move(state).astype(jnp.float32)[None]])
