"""Connect Four on a small board, as OpenSpiel's ``connect_four(rows=R,columns=C,x_in_row=K)``: an
action is a column, and the mark drops to the column's lowest empty row.

Only boards whose public tree can be enumerated are accepted, at most 12 cells: 3 x 3 (K = 3) has
3,278 histories, 3 x 4 has 277,167, while 4 x 4 would have 6.8 million and the standard 6 x 7 about
4.5 trillion.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

from sog.games import boards

MAX_CELLS = 12
VALID_SIDES = (2, 3, 4)


class ConnectFour(boards.KInARow):
  def __init__(self, rows: int = 3, columns: int = 3, x_in_row: int = 3):
    if rows not in VALID_SIDES or columns not in VALID_SIDES or rows * columns > MAX_CELLS:
      raise ValueError(
        f"connect_four: rows and columns must be in {VALID_SIDES} with at most "
        f"{MAX_CELLS} cells (a larger public tree cannot be enumerated), got "
        f"{rows} x {columns}"
      )
    if not 2 <= x_in_row <= max(rows, columns):
      raise ValueError(
        f"connect_four: x_in_row must be in 2..{max(rows, columns)} on a {rows} x "
        f"{columns} board, got {x_in_row}"
      )
    super().__init__(
      f"connect_four(rows={rows},columns={columns},x_in_row={x_in_row})",
      rows,
      columns,
      x_in_row,
      num_actions=columns,
    )

  def cell(self, board: chex.Array, action: chex.Array) -> chex.Array:
    """The lowest empty row of column ``action`` (NO_CELL when the column is full)."""
    column = jnp.arange(self.rows) * self.columns + action
    empty = board[column] == boards.EMPTY
    return jnp.where(empty.any(), column[jnp.argmax(empty)], boards.NO_CELL)

  def action_name(self, action: int) -> str:
    return f"column {action}"
