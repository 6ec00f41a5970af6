"""The k-in-a-row board games (tic-tac-toe, Connect Four) as perfect-information games in the
factored
model: one private state per player (infostate 0), the board as the public state, the action as the
observation keying a public child (so the public tree is OpenSpiel's game tree, one node per
history).

A board is a tuple of marks, cell = row * columns + column (row 0 at the bottom). Player 0 (x) moves
first; k marks in a row (horizontally, vertically or diagonally) win, +1 for the winner and -1 for
the loser; a full board draws. A game says only which cell an action marks (:meth:`KInARow.cell`).
"""

from __future__ import annotations

import abc

import numpy as np

from sog.games import rules as rules_lib

EMPTY, CROSS, NOUGHT = 0, 1, 2  # player 0 marks a cross (X), player 1 a nought (O)
_ONE_HOT = np.eye(3, dtype=np.float32)

Board = tuple[int, ...]


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


class KInARow(rules_lib.GameRules):
  """A k-in-a-row game on a rows x columns board with ``num_actions`` actions."""

  num_infostates = (1, 1)

  def __init__(self, name: str, rows: int, columns: int, k: int, num_actions: int):
    self.name, self.rows, self.columns, self.k = name, rows, columns, k
    self.num_actions = num_actions
    self.cells = rows * columns
    self.runs = lines(rows, columns, k)

  @abc.abstractmethod
  def cell(self, board: Board, action: int) -> int | None:
    """The cell ``action`` marks on ``board``, or None if the action is illegal there."""

  def to_move(self, board: Board) -> int:
    """The player to move: marks alternate, x first."""
    return (self.cells - board.count(EMPTY)) % 2

  def winner(self, board: Board) -> int:
    """CROSS or NOUGHT if that mark fills a run, else EMPTY."""
    for run in self.runs:
      mark = board[run[0]]
      if mark != EMPTY and all(board[c] == mark for c in run[1:]):
        return mark
    return EMPTY

  def initial_state(self) -> Board:
    return (EMPTY,) * self.cells

  def deal_probabilities(self) -> np.ndarray:
    return np.ones((1, 1))

  def kind(self, state: Board) -> int:
    if self.winner(state) != EMPTY or EMPTY not in state:
      return rules_lib.TERMINAL
    return self.to_move(state)

  def legal_actions(self, state, infostate):
    return tuple(a for a in range(self.num_actions) if self.cell(state, a) is not None)

  def outcomes(self, state, infostate, action):
    cell = self.cell(state, action)
    mark = NOUGHT if self.to_move(state) else CROSS
    return (rules_lib.ActionOutcome(action, (*state[:cell], mark, *state[cell + 1 :]), 0),)

  def utility(self, state, infostate_0, infostate_1) -> float:
    return {CROSS: 1.0, NOUGHT: -1.0, EMPTY: 0.0}[self.winner(state)]

  def encoding_size(self) -> int:
    return 3 * self.cells + 1

  def encode(self, state) -> np.ndarray:
    """One-hot (empty, x, o) per cell, then the player to move."""
    return np.concatenate([_ONE_HOT[list(state)].ravel(), [self.to_move(state)]]).astype(np.float32)
