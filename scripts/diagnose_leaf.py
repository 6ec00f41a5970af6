"""A network's value error where SoG's protocol asks it: the leaf queries a protocol run recorded
(``scripts/evaluate.py --record_queries=DIR``), valued exactly and by the network, the error split
by where the query sits and whom it is for.

  python scripts/evaluate.py --game=leduc_poker --leaf=checkpoints/leduc_poker --sims=100 \\
      --seeds=10 --record_queries=out/diag/shipped
  python scripts/diagnose_leaf.py --game=leduc_poker --leaf=checkpoints/leduc_poker \\
      --queries=out/diag/shipped/queries_s100.npz

A query is a public belief state (a public state and both players' ranges) at a frontier leaf of a
search's CFR pass (:mod:`sog.protocol.queries`). Up to --max_queries of them (a uniform subsample)
are solved exactly (CFR+ on the leaf's subgame, --iterations), and the network is evaluated at the
same PBSs. Errors are over the valid (player, infostate) entries: of conditional values (per unit of
the opponent's range mass, the network's scale; chips in poker) and of counterfactual values (what
the search adds up: conditional times the opponent's mass), with the mean signed conditional error
(a bias), in groups: all queries; below s_pub (the grown frontier) and off the re-solving branch;
the searches without a predecessor (first_search); by player; by the opponent's range mass (below /
from --reach_threshold); the infostates the player's own range reaches at the leaf and those it does
not (whose values are a deviation's). Also the held-out error (random PBSs, as in self-play's
diagnostics) and the entropy of the network's policy at the acting player's infostates (PUCT's
prior). Prints a table and ends with one JSON line.
"""

import dataclasses
import json
import pathlib

from absl import app
from absl import flags
from absl import logging
import numpy as np

import common
from sog.nets import checkpoint
from sog.nets import cvpn as cvpn_lib
from sog.protocol import queries as queries_lib
from sog.search import tables as tables_lib
from sog.selfplay import diagnostics

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_LEAF = flags.DEFINE_string("leaf", None, "The network's checkpoint directory.", required=True)
_QUERIES = flags.DEFINE_list("queries", [], "Files of recorded protocol queries (.npz).")
_MAX_QUERIES = flags.DEFINE_integer(
  "max_queries", 2000, "Queries solved exactly (a uniform subsample).", lower_bound=1
)
_ITERATIONS = flags.DEFINE_integer(
  "iterations", 300, "CFR+ iterations of each exact solve.", lower_bound=1
)
_TREMBLE = flags.DEFINE_float(
  "tremble",
  1e-3,
  "Each exact solve runs at the ranges plus this times a uniform range and is valued at the true "
  "ones, as the exact oracle (a value at an infostate the PBS does not reach is then a best "
  "response to a strategy that answers every infostate).",
  lower_bound=0.0,
)
_REACH_THRESHOLD = flags.DEFINE_float(
  "reach_threshold", 0.1, "Opponent range mass splitting low from high reach.", lower_bound=0.0
)
_HELD_OUT = flags.DEFINE_integer("held_out", 256, "Random held-out PBSs.", lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the subsample and the held-out PBSs.")
_SAVE = flags.DEFINE_string(
  "save", None, "Also write the solved queries with their exact and network values (.npz) here."
)


def error_groups(
  queries: queries_lib.ProtocolQueries, valid: np.ndarray, reach_threshold: float
) -> dict[str, np.ndarray]:
  """{group: [Q, 2, S] bool} of the valid (query, player, infostate) entries each group holds."""
  per_query = lambda mask: valid & mask[:, None, None]  # noqa: E731
  opponent_mass = np.where(valid, queries.ranges, 0.0).sum(-1)[:, ::-1]  # [Q, 2]
  low = (opponent_mass < reach_threshold)[..., None]
  player = np.arange(2)[None, :, None]
  reached = queries.ranges > 0
  return {
    "all": valid,
    "below_focus": per_query(queries.below_focus),
    "off_branch": per_query(~queries.below_focus),
    "first_search": per_query(queries.first_search),
    "later_searches": per_query(~queries.first_search),
    "player_0": valid & (player == 0),
    "player_1": valid & (player == 1),
    "low_reach": valid & low,
    "high_reach": valid & ~low,
    "reached": valid & reached,
    "unreached": valid & ~reached,
  }


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)
  if not _QUERIES.value:
    raise ValueError("give --queries (files written by scripts/evaluate.py --record_queries)")
  game = common.load_game(_GAME.value)
  tree = game.tree
  queries = queries_lib.ProtocolQueries.concatenate(
    [queries_lib.ProtocolQueries.load(path) for path in _QUERIES.value]
  )
  rng = np.random.default_rng(_SEED.value)
  if queries.size > _MAX_QUERIES.value:
    keep = np.zeros(queries.size, bool)
    keep[rng.choice(queries.size, _MAX_QUERIES.value, replace=False)] = True
    queries = queries.subset(keep)
  leaf_model = checkpoint.restore_leaf_model(_LEAF.value, game.name)  # checks the game
  config = checkpoint.read_config(checkpoint.locate(_LEAF.value))
  network = cvpn_lib.make_network(game.public_game, config.network)
  tables = tables_lib.make_tables(tree)
  print(
    f"{game.name}: {queries.size} protocol queries of {_QUERIES.value}, solved exactly "
    f"({_ITERATIONS.value} CFR+ iterations), against {_LEAF.value}",
    flush=True,
  )
  exact = diagnostics.exact_values(
    tables, queries.nodes, queries.ranges, _ITERATIONS.value, 256, _TREMBLE.value
  )
  prediction = diagnostics.network_prediction(
    network, leaf_model.params, tree, queries.nodes, queries.ranges
  )
  values = np.asarray(prediction.values, np.float64)
  valid = tree.valid[queries.nodes]
  conditional = diagnostics.conditional_values(values, queries.ranges)
  exact_conditional = diagnostics.conditional_values(exact, queries.ranges)
  if _SAVE.value:
    path = pathlib.Path(_SAVE.value).with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = {f.name: getattr(queries, f.name) for f in dataclasses.fields(queries)}
    np.savez(path, **fields, exact=exact, network=values)
  rows = {}
  for name, mask in error_groups(queries, valid, _REACH_THRESHOLD.value).items():
    signed = (conditional - exact_conditional)[mask]
    rows[name] = {
      "entries": int(mask.sum()),
      "conditional_error": float(np.abs(signed).mean()) if mask.any() else float("nan"),
      "counterfactual_error": float(np.abs(values - exact)[mask].mean())
      if mask.any()
      else float("nan"),
      "bias": float(signed.mean()) if mask.any() else float("nan"),
    }
  held = diagnostics.ValueDiagnostics(
    game, network, _HELD_OUT.value, _ITERATIONS.value, _SEED.value
  )
  held_error = diagnostics.mean_abs_error(
    held.network_values(leaf_model.params, held.held_nodes, held.held_ranges),
    held.held_exact,
    held.held_ranges,
    tree.valid[held.held_nodes],
  )
  entropy = diagnostics.policy_entropy(tree, queries.nodes, np.asarray(prediction.logits))
  print(f"{'group':<16} {'entries':>8} {'|cond. err|':>12} {'|cf. err|':>10} {'bias':>8}")
  for name, row in rows.items():
    print(
      f"{name:<16} {row['entries']:>8} {row['conditional_error']:>12.4f} "
      f"{row['counterfactual_error']:>10.4f} {row['bias']:>+8.4f}"
    )
  print(f"held-out error {held_error:.4f}; policy prior entropy {entropy:.4f} nats")
  print(
    json.dumps(
      {
        "game": game.name,
        "leaf": _LEAF.value,
        "queries": queries.size,
        "off_branch_share": float((~queries.below_focus).mean()),
        "first_search_share": float(queries.first_search.mean()),
        "groups": rows,
        "held_out_error": held_error,
        "prior_entropy": entropy,
        "iterations": _ITERATIONS.value,
        "tremble": _TREMBLE.value,
        "reach_threshold": _REACH_THRESHOLD.value,
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
