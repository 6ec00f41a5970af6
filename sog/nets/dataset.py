"""Exact training examples for the CVPN: PBSs of a game with the root values and root average policy
of converged subgame solves.

Public states are drawn uniformly among non-terminal ones; ranges either come from the reach of a
random policy (the beliefs play produces) or are Dirichlet noise over the valid infostates. Subgames
rooted at the same depth are padded to common shapes and solved together under ``vmap``.
"""

from __future__ import annotations

import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import policy as policy_lib
from sog.games import propagation
from sog.games import public_game
from sog.games import registry
from sog.nets import cvpn as cvpn_lib
from sog.nets import losses
from sog.nets import train
from sog.search import cfr
from sog.search import solver as solver_lib

FIELDS = ("nodes", "ranges", "values", "policy", "has_policy")


def sample_ranges(
  game: registry.Game, nodes: np.ndarray, rng: np.random.Generator, policies: int = 16
) -> np.ndarray:
  """Ranges [B, 2, S] at ``nodes``: half from the reach of one of ``policies`` random policies
  (Dirichlet rows of varied concentration), half Dirichlet noise over the valid infostates."""
  tree = game.tree
  reaches = []
  for _ in range(policies):
    policy = policy_lib.random_policy(tree, rng, concentration=rng.choice([0.3, 1.0, 3.0]))
    per_level = propagation.reach_down(
      tree.levels, propagation.split_levels(tree, policy), tree.root_ranges, np
    )
    reaches.append(np.concatenate(per_level))
  out = np.zeros((len(nodes), 2, tree.max_infostates))
  for i, node in enumerate(nodes):
    valid = tree.valid[node]
    if i % 2 == 0:
      r = reaches[rng.integers(policies)][node]
    else:
      r = rng.dirichlet(np.ones(tree.max_infostates), size=2)
    r = r * valid
    r = np.where(r.sum(-1, keepdims=True) > 0, r, valid)  # a range must weigh something
    out[i] = r / r.sum(-1, keepdims=True)
  return out


def random_pbs(
  game: registry.Game, count: int, rng: np.random.Generator, policies: int = 16
) -> tuple[np.ndarray, np.ndarray]:
  """``count`` public belief states: non-terminal public states drawn uniformly (sorted) and their
  ranges from :func:`sample_ranges`."""
  candidates = np.flatnonzero(game.tree.kind != public_game.TERMINAL)
  nodes = np.sort(rng.choice(candidates, size=count))
  return nodes, sample_ranges(game, nodes, rng, policies)


def _solve_group(
  game: registry.Game, nodes: np.ndarray, ranges: np.ndarray, iterations: int, reference: list
) -> tuple[np.ndarray, np.ndarray]:
  """Root values [B, 2, S] and root average policies [B, S, A] of subgames rooted at ``nodes``,
  padded to the shapes of the ``reference`` subtrees (one compilation per reference)."""
  subtrees = [game.tree.subtree(int(n)) for n in nodes]
  levels = cfr.to_device(solver_lib.stack_levels(subtrees, reference))
  values, policy = _solve_stacked(levels, jnp.asarray(ranges, jnp.float32), iterations)
  return np.asarray(values, np.float64), np.asarray(policy, np.float64)


@functools.partial(jax.jit, static_argnums=2)
def _solve_stacked(levels: cfr.Levels, ranges: jax.Array, iterations: int):

  def solve_one(levels_one, ranges_one):
    state, _ = cfr.run(
      levels_one, cfr.init_state(levels_one), ranges_one, iterations, "alternating"
    )
    root_policy = cfr.average_policy(levels_one, state)[0]
    return cfr.average_root_values(levels_one, state, ranges_one), root_policy

  return jax.vmap(solve_one)(levels, ranges)


def generate(
  game: registry.Game,
  count: int,
  iterations: int,
  rng: np.random.Generator,
  group_size: int = 256,
  max_group_nodes: int = 300_000,
  progress=None,
) -> dict[str, np.ndarray]:
  """``count`` exact examples; ``progress(done, total)`` is called after each solved group.

  Examples are solved by the depth of their public state, in groups of at most ``group_size`` and
  small enough that the group size times the largest subtree at that depth stays under
  ``max_group_nodes`` (padded tables take memory in proportion); a depth with fewer examples than
  that is one group of just those.
  """
  tree = game.tree
  candidates = np.flatnonzero(tree.kind != public_game.TERMINAL)
  nodes, ranges = random_pbs(game, count, rng)
  values = np.zeros((count, 2, tree.max_infostates))
  policy = np.zeros((count, tree.max_infostates, tree.num_actions))
  done = 0
  for depth in np.unique(tree.depth[nodes]):
    # One compilation per root depth: every group is padded to all subtrees rooted at that depth.
    reference = [tree.subtree(int(n)) for n in candidates[tree.depth[candidates] == depth]]
    size = max(t.num_nodes for t in reference)
    members = np.flatnonzero(tree.depth[nodes] == depth)
    per_group = max(1, min(group_size, max_group_nodes // size, len(members)))
    for start in range(0, len(members), per_group):
      index = members[start : start + per_group]
      padded = np.concatenate([index, np.repeat(index[-1:], per_group - len(index))])
      solved_values, solved_policy = _solve_group(
        game, nodes[padded], ranges[padded], iterations, reference
      )
      values[index], policy[index] = solved_values[: len(index)], solved_policy[: len(index)]
      done += len(index)
      if progress:
        progress(done, count)
  _, policy_mask = cvpn_lib.node_masks(tree)
  has_policy = policy_mask[nodes].any(-1)
  actor = np.clip(tree.kind[nodes], 0, 1)
  full_policy = np.zeros((count, 2, tree.max_infostates, tree.num_actions))
  full_policy[np.arange(count), actor] = policy
  full_policy *= has_policy[..., None]
  return {
    "nodes": nodes,
    "ranges": ranges,
    "values": values,
    "policy": full_policy,
    "has_policy": has_policy,
  }


def save(path: str | pathlib.Path, data: dict[str, np.ndarray], **meta) -> None:
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  np.savez_compressed(path, **data, **{f"meta_{k}": np.asarray(v) for k, v in meta.items()})


def load(path: str | pathlib.Path, **meta) -> dict[str, np.ndarray] | None:
  """The cached dataset at ``path`` if it exists and was made with the same ``meta``; else None."""
  path = pathlib.Path(path)
  if not path.is_file():
    return None
  with np.load(path) as f:
    if any(f"meta_{k}" not in f or f[f"meta_{k}"].item() != v for k, v in meta.items()):
      return None
    return {k: f[k] for k in FIELDS}


def batch(game: registry.Game, data: dict[str, np.ndarray], index: np.ndarray) -> train.Batch:
  """A training ``Batch`` of the examples at ``index``, their public states given by ``nodes`` of
  the game's tree (exact examples) or by their facts ``encoding``, ``kind``, ``valid`` and
  ``legal`` (self-play's replay); an optional ``has_value`` field [N, 2, S] marks the entries that
  carry a value target (self-play examples; exact ones carry every valid entry)."""
  if "nodes" in data:
    pbs = cvpn_lib.pbs_at(game.tree, data["nodes"][index], data["ranges"][index])
  else:
    facts = ("encoding", "kind", "valid", "legal", "ranges")
    pbs = cvpn_lib.pbs_of(*(data[name][index] for name in facts))
  has_value = jnp.asarray(data["has_value"][index]) if "has_value" in data else None
  targets = losses.Targets(
    values=jnp.asarray(data["values"][index], jnp.float32),
    policy=jnp.asarray(data["policy"][index], jnp.float32),
    has_policy=jnp.asarray(data["has_policy"][index]),
    has_value=has_value,
  )
  return train.Batch(pbs=pbs, targets=targets)
