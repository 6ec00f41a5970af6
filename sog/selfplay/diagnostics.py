"""Where self-play's value error is lost: the solver's targets or the network's fit, against exact
solves.

Self-play trains the CVPN on the query solver's answers, which are themselves searches with the CVPN
at their frontier. A network can then be limited by its *targets* (the solver's root values are off
the exact ones: too few simulations, slow convergence, a poor network at the frontier) or by its
*fit* (it does not learn the targets it gets, or not where the evaluation asks). Three numbers, all
mean absolute errors of conditional values (counterfactual value per unit of opponent range mass,
the scale the network predicts; chips in poker) over valid infostates, against an exact CFR+ solve
of the same PBS:

  * ``target_error``: the solver's root values at a sample of the PBSs it just answered;
  * ``network_error_queries``: the network's values at those same PBSs (the query distribution);
  * ``network_error_held_out``: the network's values at a fixed held-out set of PBSs drawn once at
    the start (random public states, ranges of random policies and Dirichlet noise, as
    ``scripts/fit_cvpn.py``), the same set for the whole run.

Exact solves run as one vmapped CFR+ run per PBS over the game's whole tables (one compilation), so
this is for games whose whole tree is small (Leduc: a few seconds for a few dozen PBSs).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from sog.games import registry
from sog.nets import cvpn as cvpn_lib
from sog.nets import dataset
from sog.search import leaf_models
from sog.search import tables as tables_lib

ERRORS = ("target_error", "network_error_queries", "network_error_held_out")


def conditional_values(values: np.ndarray, ranges: np.ndarray) -> np.ndarray:
  """Counterfactual values [B, 2, S] per unit of the opponent's range mass (the network's scale)."""
  return values / np.maximum(np.asarray(cvpn_lib.opponent_mass(ranges)), 1e-12)


def mean_abs_error(
  values: np.ndarray, exact: np.ndarray, ranges: np.ndarray, valid: np.ndarray
) -> float:
  """Mean |conditional value - exact conditional value| over the ``valid`` [B, 2, S] entries."""
  error = np.abs(conditional_values(values, ranges) - conditional_values(exact, ranges))
  return float(error[valid].mean()) if valid.any() else float("nan")


class ValueDiagnostics:
  """Exact values of ``game``'s PBSs and the errors above; ``held_out`` PBSs fixed when built."""

  def __init__(
    self,
    game: registry.Game,
    network: cvpn_lib.CVPN,
    held_out: int = 256,
    iterations: int = 300,
    seed: int = 0,
  ):
    if held_out < 1 or iterations < 1:
      raise ValueError(f"held_out and iterations must be >= 1, got {held_out}, {iterations}")
    self.tree, self.network, self.iterations = game.tree, network, iterations
    self.tables = tables_lib.make_tables(game.tree)
    rng = np.random.default_rng(seed)
    self.held_nodes, held_ranges = dataset.random_pbs(game, held_out, rng)
    self.held_ranges = held_ranges.astype(np.float32)
    self.held_exact = self.exact_values(self.held_nodes, self.held_ranges)

  def exact_values(self, nodes: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """[B, 2, S] root counterfactual values of a CFR+ solve of each PBS's subgame."""
    return exact_values(self.tables, nodes, ranges, self.iterations)

  def network_values(self, params, nodes: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    pbs = cvpn_lib.pbs_at(self.tree, nodes, ranges)
    return np.asarray(_apply(self.network, params, pbs).values)

  def measure(
    self, params, solved_nodes: np.ndarray, solved_ranges: np.ndarray, solved_values: np.ndarray
  ) -> dict[str, float]:
    """The three errors, for the network ``params`` and a sample of the solver's answers."""
    exact = self.exact_values(solved_nodes, solved_ranges)
    valid = self.tree.valid[solved_nodes]
    held_valid = self.tree.valid[self.held_nodes]
    return {
      "target_error": mean_abs_error(solved_values, exact, solved_ranges, valid),
      "network_error_queries": mean_abs_error(
        self.network_values(params, solved_nodes, solved_ranges), exact, solved_ranges, valid
      ),
      "network_error_held_out": mean_abs_error(
        self.network_values(params, self.held_nodes, self.held_ranges),
        self.held_exact,
        self.held_ranges,
        held_valid,
      ),
    }


def exact_values(
  tables: tables_lib.SearchTables,
  nodes: np.ndarray,
  ranges: np.ndarray,
  iterations: int,
  batch: int | None = None,
  tremble: float = 0.0,
) -> np.ndarray:
  """[B, 2, S] root counterfactual values of a CFR+ solve (``iterations``) of the subgame of each
  PBS (``nodes`` of ``tables``' game with ``ranges`` [B, 2, S]), solved at ranges trembled by
  ``tremble`` and valued at the true ones (as the exact oracle,
  :func:`~sog.search.leaf_models.exact_leaf_model`); with ``batch``, in vmapped chunks of that many
  PBSs (the last one padded: one compilation, bounded memory)."""
  nodes, ranges = np.asarray(nodes, np.int32), np.asarray(ranges, np.float32)
  size = nodes.shape[0] if batch is None else batch
  out = []
  for lo in range(0, nodes.shape[0], max(size, 1)):
    chunk = np.arange(lo, lo + size).clip(max=nodes.shape[0] - 1)
    solved = _solve(
      tables, jnp.asarray(nodes[chunk]), jnp.asarray(ranges[chunk]), iterations, tremble
    )
    out.append(np.asarray(solved)[: min(size, nodes.shape[0] - lo)])
  return np.concatenate(out) if out else np.zeros((0, *ranges.shape[1:]), np.float32)


def network_prediction(network: cvpn_lib.CVPN, params, tree, nodes: np.ndarray, ranges: np.ndarray):
  """The CVPN's prediction (values [B, 2, S], logits [B, 2, S, A]) at PBSs of ``tree``."""
  return _apply(network, params, cvpn_lib.pbs_at(tree, nodes, ranges))


def policy_entropy(tree, nodes: np.ndarray, logits: np.ndarray) -> float:
  """Mean entropy (nats) of the policy the logits give the acting player at each valid infostate
  of the PBSs at ``nodes`` (its legal actions only; chance nodes and terminals have none)."""
  kind = tree.kind[nodes]
  rows = np.flatnonzero(kind < 2)
  if not rows.size:
    return float("nan")
  actor = kind[rows].astype(np.int64)
  logits = np.asarray(logits, np.float64)[rows, actor]  # [R, S, A]
  legal = tree.legal[nodes[rows]]
  valid = tree.valid[nodes[rows], actor] & legal.any(-1)
  logits = np.where(legal, logits, -np.inf)
  logits = logits - logits.max(-1, keepdims=True)
  p = np.where(legal, np.exp(logits), 0.0)
  p /= np.maximum(p.sum(-1, keepdims=True), 1e-300)
  entropy = -(np.where(p > 0, p * np.log(np.maximum(p, 1e-300)), 0.0)).sum(-1)
  return float(entropy[valid].mean())


@functools.partial(jax.jit, static_argnums=0)
def _apply(network, params, pbs):
  return network.apply({"params": params}, pbs)


@functools.partial(jax.jit, static_argnums=(3, 4))
def _solve(
  tables: tables_lib.SearchTables,
  nodes: jax.Array,
  ranges: jax.Array,
  iterations: int,
  tremble: float = 0.0,
):

  def one(node, pbs_ranges):
    _, _, values = leaf_models.solve_at_nodes(
      tables, node[None], pbs_ranges[None], jnp.ones(1, bool), iterations, tremble
    )
    return jnp.concatenate(values)[node]

  return jax.vmap(one)(nodes, ranges)
