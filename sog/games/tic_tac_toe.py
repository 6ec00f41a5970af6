"""Tic-tac-toe with OpenSpiel's rules (``tic_tac_toe``): actions are the cells 0..8, row-major;
three in a row wins. Its public tree is OpenSpiel's game tree: 549,946 histories over 5,478 distinct
boards.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

from sog.games import boards


class TicTacToe(boards.KInARow):
  def __init__(self):
    super().__init__("tic_tac_toe", rows=3, columns=3, k=3, num_actions=9)

  def cell(self, board: chex.Array, action: chex.Array) -> chex.Array:
    return jnp.where(board[action] == boards.EMPTY, action, boards.NO_CELL)

  def action_name(self, action: int) -> str:
    return f"({action // 3},{action % 3})"
