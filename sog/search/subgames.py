"""Compact search tables: a solve rooted at a public state runs on that state's subgame alone.

A CFR+ pass over the tables (ReBeL's depth-limited solves, the exact solver's) costs a pass over all
of them, so a solve deep in a game should not run on the whole game's tables. :class:`Subgames`
gives, for any public state n of a game, the tables of n's subgame padded to a shape shared by every
subgame rooted at n's depth (per depth below the root: the most inner nodes and the most terminals
any of them has, filled with dummy nodes, :meth:`sog.games.tree.PublicTree.padded`). One compiled
solve then serves every root at one depth, and solves rooted at one depth run as one vmapped batch
with a leading axis on the tables.

The padded levels share their static fields too (the actors present, whether infostates change), set
to what holds for all subgames of the depth, and the utility scale is the whole game's, as in the
game's tables.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.search import tables as tables_lib


@dataclasses.dataclass(frozen=True)
class Subgame:
  """The padded tables of the subgame below a public state of a game.

  Attributes:
    root: the game's node at the tables' root (local node 0).
    depth: the root's depth in the game: subgames of one depth share shapes (``key``).
    tables: the search tables.
    local: [N_game] int32, the tables' node of each game node (-1 outside the subgame).
  """

  root: int
  depth: int
  tables: tables_lib.SearchTables
  local: np.ndarray

  @property
  def game_nodes(self) -> np.ndarray:
    """[N] the game's node of each of the tables' nodes (-1 at padding)."""
    return np.asarray(self.tables.game_node)


@dataclasses.dataclass(frozen=True)
class _Template:
  """The shared shape of the subgames rooted at one depth (per depth below their roots)."""

  inner: tuple[int, ...]
  terminal: tuple[int, ...]
  dummy_kinds: tuple[int, ...]
  actors: tuple[tuple[int, ...], ...]
  same_infostates: tuple[bool, ...]


class Subgames:
  """The subgame tables of every non-terminal public state of ``tree`` (built on first use, kept).

  Args:
    tree: a game's whole public tree.
    dtype: the tables' floating dtype.
  """

  def __init__(self, tree: tree_lib.PublicTree, dtype: jax.typing.DTypeLike = jnp.float32):
    self.tree = tree
    self.dtype = jnp.dtype(dtype)
    self._utility_scale = tree.largest_utility()
    self._templates = _templates(tree)
    self._built: dict[int, Subgame] = {}

  def __call__(self, node: int) -> Subgame:
    """The subgame below game node ``node``."""
    node = int(node)
    if not 0 <= node < self.tree.num_nodes or self.tree.kind[node] == public_game.TERMINAL:
      raise ValueError(
        f"a subgame's root must be a non-terminal node of {self.tree.name}, got {node}"
      )
    if node not in self._built:
      self._built[node] = self._build(node)
    return self._built[node]

  def _build(self, node: int) -> Subgame:
    depth = int(self.tree.depth[node])
    template = self._templates[depth]
    sub = self.tree.subtree(node).padded(template.inner, template.terminal, template.dummy_kinds)
    tables = tables_lib.make_tables(sub, self.dtype)
    levels = tuple(
      level.replace(actors=actors, same_infostates=same, inner_terminals=False)
      for level, actors, same in zip(
        tables.levels, template.actors, template.same_infostates, strict=True
      )
    )
    tables = tables.replace(
      levels=levels, utility_scale=jnp.asarray(self._utility_scale, tables.utility_scale.dtype)
    )
    local = np.full(self.tree.num_nodes, -1, np.int32)
    real = sub.game_node >= 0
    local[sub.game_node[real]] = np.flatnonzero(real)
    return Subgame(root=node, depth=depth, tables=tables, local=local)


def _templates(tree: tree_lib.PublicTree) -> dict[int, _Template]:
  """Per depth of ``tree``, the shared shape of the subgames rooted at its non-terminal nodes."""
  depths = tree.num_levels
  ancestors = tables_lib.ancestors(tree)
  terminal = tree.kind == public_game.TERMINAL
  S = tree.max_infostates
  same = (
    ((tree.up_infostate == np.arange(S)) | (tree.up_weight == 0))
    .reshape(tree.num_nodes, -1)
    .all(-1)
  )
  # Per (subgame root, depth below it): inner and terminal nodes, kinds present, any changing
  # infostate.
  counts = np.zeros((tree.num_nodes, depths, 2), np.int64)
  kinds = np.zeros((tree.num_nodes, depths, 4), bool)
  changes = np.zeros((tree.num_nodes, depths), bool)
  for d in range(depths):
    below = np.flatnonzero(ancestors[:, d] >= 0)
    roots, relative = ancestors[below, d], tree.depth[below] - d
    np.add.at(counts, (roots, relative, terminal[below].astype(np.int64)), 1)
    kinds[roots, relative, tree.kind[below]] = True
    changes[roots[~same[below]], relative[~same[below]]] = True
  templates = {}
  for d in range(depths):
    at_depth = np.flatnonzero((tree.depth == d) & ~terminal)
    if not at_depth.size:
      continue
    size = counts[at_depth].max(0)  # [depths, 2]
    levels = int(np.flatnonzero(size.sum(-1))[-1]) + 1
    present = kinds[at_depth].any(0)[:levels]  # [levels, 4]
    dummy = [
      next((k for k in (0, 1, public_game.CHANCE) if row[k]), public_game.CHANCE) for row in present
    ]
    templates[d] = _Template(
      inner=tuple(int(x) for x in size[:levels, 0]),
      terminal=tuple(int(x) for x in size[:levels, 1]),
      dummy_kinds=tuple(dummy),
      actors=tuple(tuple(p for p in (0, 1) if row[p]) for row in present),
      same_infostates=tuple(bool(x) for x in ~changes[at_depth].any(0)[:levels]),
    )
  return templates
