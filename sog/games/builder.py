"""Enumerates a game's whole public tree into a :class:`~sog.games.tree.PublicTree`, walking its
:class:`~sog.games.public_game.PublicGame` definition (:mod:`sog.games.walk`).

Breadth-first over public states. For every node the builder keeps the pair weight W[s0, s1] (the
chance weight of the world state relative to the product of the prior marginals; zero for impossible
pairs), from which validity, terminal payoffs and history counts follow. It checks the factored
model's assumptions as it goes (opponent masks that partition, a product form of every public child,
a W that does not depend on which source reached a merged infostate) and raises ``ValueError`` if a
game breaks them.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.games import walk as walk_lib


@dataclasses.dataclass
class _Node:
  state: walk_lib.PublicStateKey
  parent: int
  depth: int
  path: tuple
  weight: np.ndarray  # W [S, S], indexed [s0, s1]
  # Down edges: for each player, {infostate: [(parent infostate, action)]}.
  sources: tuple[dict, dict]
  path_counts: np.ndarray  # [2, S]: each player's own action sequences reaching the infostate
  # Up edges, filled when the node is expanded: {(player, s, a): [(child, child infostate,
  # weight)]}.
  targets: dict = dataclasses.field(default_factory=lambda: collections.defaultdict(list))
  kind: int = -1
  chance_probability: float = 1.0  # of the chance outcome that led here (1 below player nodes)


def _orient(weight: np.ndarray, actor: int) -> np.ndarray:
  """W viewed as [actor infostate, opponent infostate]."""
  return weight if actor == 0 else weight.T


def build_public_tree(game: public_game.PublicGame) -> tree_lib.PublicTree:
  """Enumerates every public state of ``game`` and returns its public tree; ``ValueError`` naming
  the rule a game's functions break (:mod:`sog.games.walk`) or an assumption of the factored model
  it breaks."""
  walk = walk_lib.PublicGameWalk(game)
  S, A = game.max_infostates, walk.num_actions
  priors = public_game.prior_ranges(game)
  root_weight = public_game.root_weight(game)
  identity_sources = ({s: [(s, 0)] for s in range(S)}, {s: [(s, 0)] for s in range(S)})
  nodes = [_Node(walk.root(), -1, 0, (), root_weight, identity_sources, np.ones((2, S)))]

  index = 0
  while index < len(nodes):
    _expand(walk, nodes, index, S)
    index += 1
  # OpenSpiel also counts the chance histories of the private deal: the root chance node, and when
  # both players are dealt (poker, dice) one more per player 0's outcome, where player 1's deal
  # follows.
  outcomes = [int((p > 0).sum()) for p in priors]
  deal_histories = 0 if max(outcomes) == 1 else 1 + (outcomes[0] if min(outcomes) > 1 else 0)
  return _to_tree(walk, nodes, priors, S, A, deal_histories)


def _expand(walk: walk_lib.PublicGameWalk, nodes: list[_Node], index: int, S: int) -> None:
  node = nodes[index]
  node.kind = kind = walk.kind(node.state)
  if kind == public_game.TERMINAL:
    return
  if kind == public_game.CHANCE:
    _expand_chance(walk, nodes, index, S)
    return
  actor, opponent = kind, 1 - kind
  weight = _orient(node.weight, actor)
  actor_valid = np.flatnonzero(weight.sum(1) > 0).tolist()
  opponent_valid = weight.sum(0) > 0
  # An outcome's opponent mask -> the valid opponent infostates in it.
  masks = {None: opponent_valid}
  # slot -> [state, {child infostate: [(s, a)]}, opponent mask, {child infostate: W row}]
  children: dict = {}
  for s in actor_valid:
    legal = walk.legal_actions(node.state, s)
    if len(legal) == 0:
      raise ValueError(f"{walk.name}: no legal action at {node.path} for infostate {s}")
    for a in legal:
      for outcome in walk.outcomes(node.state, s, int(a)):
        key = outcome.opponent_mask
        mask = masks.get(key)
        if mask is None:
          mask = np.zeros(S, bool)
          mask[list(key)] = True
          mask = masks[key] = mask & opponent_valid
        if mask is not opponent_valid and not mask.any():
          continue
        entry = children.get(outcome.slot)
        if entry is None:
          entry = children[outcome.slot] = [
            outcome.next_state,
            collections.defaultdict(list),
            mask,
            {},
          ]
        elif entry[0] != outcome.next_state or not (
          entry[2] is mask or np.array_equal(entry[2], mask)
        ):
          raise ValueError(
            f"{walk.name}: slot {outcome.slot} at {node.path} does not hold a unique "
            "public child with one opponent mask"
          )
        entry[1][outcome.next_infostate].append((s, int(a)))
        # Where W[s] > 0 the opponent's infostate is valid, so the full mask leaves the row as it
        # is.
        row = weight[s] if mask is opponent_valid else np.where(mask, weight[s], 0.0)
        previous = entry[3].get(outcome.next_infostate)
        if previous is not None and previous.any() and not np.allclose(previous, row):
          raise ValueError(
            f"{walk.name}: merged infostate {outcome.next_infostate} at "
            f"{(*node.path, outcome.slot)} has inconsistent chance weights"
          )
        entry[3][outcome.next_infostate] = row
  actor_counts = node.path_counts[actor].tolist()
  infostates_in = {id(mask): np.flatnonzero(mask).tolist() for mask in masks.values()}
  for slot, (state, actor_sources, mask, rows) in children.items():
    child_weight = np.zeros((S, S))
    for child_s, row in rows.items():
      child_weight[child_s] = row
    opponent_infostates = infostates_in[id(mask)]
    sources = [None, None]
    sources[actor] = dict(actor_sources)
    sources[opponent] = {s: [(s, 0)] for s in opponent_infostates}
    child = len(nodes)
    counts = np.zeros((2, S))
    counts[opponent] = node.path_counts[opponent] * mask
    for child_s, pairs in actor_sources.items():
      counts[actor, child_s] = sum(actor_counts[s] for s, _ in pairs)
    nodes.append(
      _Node(
        state,
        index,
        node.depth + 1,
        (*node.path, slot),
        _orient(child_weight, actor),
        tuple(sources),
        counts,
      )
    )
    for child_s, pairs in actor_sources.items():
      for s, a in pairs:
        node.targets[(actor, s, a)].append((child, child_s, 1.0))
    for s in opponent_infostates:
      node.targets[(opponent, s, None)].append((child, s, 1.0))


def _expand_chance(walk: walk_lib.PublicGameWalk, nodes: list[_Node], index: int, S: int) -> None:
  node = nodes[index]
  outcomes = walk.chance_outcomes(node.state)
  total = sum(o.probability for o in outcomes)
  if not np.isclose(total, 1.0, atol=1e-12):
    raise ValueError(f"{walk.name}: chance probabilities at {node.path} sum to {total}, not 1")
  for outcome in outcomes:
    likelihood = np.zeros((S, S))
    for s0, s1 in zip(*np.nonzero(node.weight), strict=True):
      likelihood[s0, s1] = walk.chance_likelihood(node.state, outcome.slot, int(s0), int(s1))
    child_weight = node.weight * likelihood / outcome.probability
    if not child_weight.any():
      continue
    valid = [child_weight.sum(1) > 0, child_weight.sum(0) > 0]
    sources = tuple({s: [(s, 0)] for s in np.flatnonzero(v)} for v in valid)
    child = len(nodes)
    nodes.append(
      _Node(
        outcome.next_state,
        index,
        node.depth + 1,
        (*node.path, outcome.slot),
        child_weight,
        sources,
        node.path_counts * np.stack(valid),
        chance_probability=outcome.probability,
      )
    )
    for player in (0, 1):
      for s in np.flatnonzero(valid[player]):
        node.targets[(player, int(s), None)].append((child, int(s), outcome.probability))


def _child_slots(node: _Node, A: int) -> dict[tuple[int, int], int]:
  """The public child in each slot (action, k) of a node.

  Below a player node, slot (a, k) holds the k-th distinct child that action a can lead to (a child
  reached by several actions, such as Mr X's unrevealed move, sits in one slot per action). Below a
  chance node, the children fill the slots in order.
  """
  if node.kind in (public_game.PLAYER_0, public_game.PLAYER_1):
    per_action: dict[int, list[int]] = collections.defaultdict(list)
    for (player, _, a), targets in node.targets.items():
      if player == node.kind:
        per_action[a].extend(c for c, _, _ in targets if c not in per_action[a])
    return {(a, k): child for a, children in per_action.items() for k, child in enumerate(children)}
  children = sorted({c for targets in node.targets.values() for c, _, _ in targets})
  return {(k % A, k // A): child for k, child in enumerate(children)}


def _to_tree(
  walk: walk_lib.PublicGameWalk,
  nodes: list[_Node],
  priors: np.ndarray,
  S: int,
  A: int,
  deal_histories: int,
) -> tree_lib.PublicTree:
  N = len(nodes)
  kind = np.array([n.kind for n in nodes], np.int8)
  weights = np.stack([n.weight for n in nodes])  # [N, S, S]
  path_counts = np.stack([n.path_counts for n in nodes])  # [N, 2, S]
  valid = np.stack([weights.sum(2) > 0, weights.sum(1) > 0], axis=1)
  histories = (
    ((weights > 0) * path_counts[:, 0, :, None] * path_counts[:, 1, None, :])
    .sum((1, 2))
    .astype(np.int64)
  )
  encoding = np.stack([walk.encode(n.state) for n in nodes]).astype(np.float32)
  payoff = np.zeros((N, S, S))
  for i in np.flatnonzero(kind == public_game.TERMINAL).tolist():
    node = nodes[i]
    for s0, s1 in zip(*np.nonzero(node.weight), strict=True):
      payoff[i, s0, s1] = node.weight[s0, s1] * walk.utility(node.state, int(s0), int(s1))
  # Down edges: (node, player, infostate, j) -> (source infostate, action), gathered then written
  # once.
  down = [
    (i, player, s, j, source, action)
    for i, node in enumerate(nodes)
    for player in (0, 1)
    for s, pairs in node.sources[player].items()
    for j, (source, action) in enumerate(pairs)
  ]
  i, player, s, j, source, action = np.array(down, np.int64).T
  J = int(j.max()) + 1
  src_infostate = np.zeros((N, 2, S, J), np.int32)
  src_action = np.zeros((N, 2, S, J), np.int32)
  src_weight = np.zeros((N, 2, S, J))
  src_infostate[i, player, s, j] = source
  src_action[i, player, s, j] = action
  src_weight[i, player, s, j] = 1.0
  # Up edges: a child in each slot (action, k), and each (player, infostate)'s edge into a slot.
  slot_rows, edge_rows = [], []
  for i, node in enumerate(nodes):
    first_slot: dict[int, tuple[int, int]] = {}
    slot_of = {}
    for slot, child in sorted(_child_slots(node, A).items()):
      slot_rows.append((i, *slot, child))
      first_slot.setdefault(child, slot)
      slot_of[(slot[0], child)] = slot
    for (player, s, a), targets in node.targets.items():
      for child, child_s, w in targets:
        # An actor's edge sits in its action's slot; a non-actor's (or chance's) in the child's
        # first.
        slot_a, slot_k = first_slot[child] if a is None else slot_of[(a, child)]
        edge_rows.append((i, slot_a, slot_k, player, s, child_s, w))
  K = 1 + max([0] + [row[2] for row in slot_rows])
  up_child = np.full((N, A, K), -1, np.int32)
  up_infostate = np.zeros((N, A, K, 2, S), np.int32)
  up_weight = np.zeros((N, A, K, 2, S))
  if slot_rows:
    i, slot_a, slot_k, child = np.array(slot_rows, np.int64).T
    up_child[i, slot_a, slot_k] = child
    i, slot_a, slot_k, player, s = np.array([row[:5] for row in edge_rows], np.int64).T
    up_infostate[i, slot_a, slot_k, player, s] = [row[5] for row in edge_rows]
    up_weight[i, slot_a, slot_k, player, s] = [row[6] for row in edge_rows]
  legal = np.zeros((N, S, A), bool)
  legal[kind >= public_game.CHANCE, :, 0] = True
  for i in np.flatnonzero(kind < public_game.CHANCE).tolist():
    node = nodes[i]
    actor_valid = np.flatnonzero(valid[i, node.kind]).tolist()
    for s in actor_valid:
      legal[i, s, list(walk.legal_actions(node.state, s))] = True
    legal[i, ~valid[i, node.kind]] = legal[i, actor_valid[0]]
  tree = tree_lib.PublicTree(
    name=walk.name,
    num_infostates=tuple(walk.num_infostates),
    num_actions=A,
    kind=kind,
    depth=np.array([n.depth for n in nodes], np.int32),
    parent=np.array([n.parent for n in nodes], np.int32),
    valid=valid,
    legal=legal,
    payoff=payoff,
    pair_weight=weights,
    chance_probability=np.array([n.chance_probability for n in nodes]),
    is_leaf=np.zeros(N, bool),
    histories=histories,
    deal_histories=deal_histories,
    encoding=encoding,
    root_ranges=priors,
    paths=tuple(n.path for n in nodes),
    src_infostate=src_infostate,
    src_action=src_action,
    src_weight=src_weight,
    up_child=up_child,
    up_infostate=up_infostate,
    up_weight=up_weight,
    game_node=np.arange(N, dtype=np.int32),
    prior_weight=np.zeros((N, 2, S)),
  )
  # Within each depth, non-terminal nodes first: a level's terminals are then one static slice.
  order = np.lexsort((kind == public_game.TERMINAL, tree.depth))
  tree = dataclasses.replace(tree.select(order), game_node=np.arange(N, dtype=np.int32))
  return dataclasses.replace(tree, prior_weight=tree_lib.prior_weights(tree))
