"""Wall time of SoG's evaluation protocol with a CVPN leaf model, against OpenSpiel's IS-MCTS
composed the same way.

  python scripts/bench_evaluate.py [--game=leduc_poker] [--sims=100] [--seeds=2] [--batches=1,8]

Runs ``sog.protocol.compose`` (every decision public state, breadth-first, re-solving from the
searching player's last search) for --seeds seeds with an untrained CVPN of the default size (timing
does not depend on its weights; --leaf takes a checkpoint directory too), once per vmapped batch
size, compilation excluded (the first seed's time with compilation is printed too: one compilation
per pool size of the re-solves, see ``sog.search.pool.sized``), and extrapolates to the paper's 50
seeds (the protocol's cost is linear in the seeds). The peer is OpenSpiel's C++ IS-MCTS bot (random
rollouts, the same number of simulations) asked once at every decision infostate, the composed
policy of SoG's IS-MCTS baseline: its wall time, exploitability and the time ratio. Ends with one
JSON line.
"""

import json
import time

from absl import app
from absl import flags
import jax
import pyspiel

import common
import sog.games
from sog.openspiel import bridge as openspiel_bridge
from sog.protocol import composed
from sog.search import pool
from sog.search import predecessors
from sog.search import types as search_types
from sog.search.pool import sized

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name (one OpenSpiel has in C++).")
_SIMS = flags.DEFINE_integer(
  "sims", 100, "s of SoG(s, 1) and IS-MCTS's simulations.", lower_bound=1
)
_SEEDS = flags.DEFINE_integer("seeds", 2, "Seeds timed (then extrapolated to 50).", lower_bound=1)
_BATCHES = flags.DEFINE_list("batches", ["1", "8"], "Vmapped batch sizes to time.")
_LEAF = flags.DEFINE_string(
  "leaf",
  "untrained",
  "The leaf model: untrained (a CVPN of the default "
  "size), a CVPN checkpoint directory, zeros or oracle.",
)

_PAPER_SEEDS = 50


def _ismcts_composed(game: sog.games.Game, simulations: int) -> tuple[float, float, int]:
  """IS-MCTS asked once at every decision infostate: (seconds, exploitability, infostates)."""
  os_game = openspiel_bridge.openspiel_game(game)
  bot = pyspiel.ISMCTSBot(
    0,
    pyspiel.RandomRolloutEvaluator(1, 0),
    2.0,
    simulations,
    -1,
    pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT,
    False,
    False,
  )
  policy: dict[str, list[tuple[int, float]]] = {}
  start = time.perf_counter()
  stack = [os_game.new_initial_state()]
  while stack:
    state = stack.pop()
    if state.is_terminal():
      continue
    if state.is_chance_node():
      stack.extend(state.child(a) for a, _ in state.chance_outcomes())
      continue
    key = state.information_state_string()
    if key not in policy:
      policy[key] = list(bot.step_with_policy(state)[0])
    stack.extend(state.child(a) for a in state.legal_actions())
  seconds = time.perf_counter() - start
  return seconds, float(pyspiel.exploitability(os_game, policy)), len(policy)


def main(argv):
  del argv
  game = common.load_game(_GAME.value)
  searcher = sized.SizedPools(  # the pools' compiled searches are kept from compose to compose
    pool.GTCFR(
      game,
      common.leaf_model(_LEAF.value, game),
      search_types.GTCFRConfig(simulations=_SIMS.value),
      branch_depth=predecessors.branch_depth(game.tree, "own"),
    ),
    game.tree.max_moves,
    game.tree,
  )
  seeds = range(_SEEDS.value)
  print(
    f"{game.name}: SoG({_SIMS.value}, 1) protocol, leaf={_LEAF.value}, {_SEEDS.value} seeds timed"
  )
  rows = []
  for batch in (int(b) for b in _BATCHES.value):
    warm_up = composed.compose(searcher, [0], batch_size=batch, tree=game.tree)  # compiles
    result = composed.compose(searcher, seeds, batch_size=batch, tree=game.tree)
    per_seed = result.seconds / _SEEDS.value
    rows.append(
      {
        "batch_size": batch,
        "seconds": result.seconds,
        "seconds_per_seed": per_seed,
        "first_seed_seconds_with_compilation": warm_up.seconds,
        "seconds_per_search": result.seconds / result.searches,
        "seconds_50_seeds": per_seed * _PAPER_SEEDS,
        "exploitability_mean": float(result.exploitability.mean()),
      }
    )
    print(
      f"  batch {batch:>3}: {result.seconds:.1f} s for {result.searches} searches "
      f"({result.seconds / result.searches * 1000:.1f} ms each; the first seed with compilation "
      f"took {warm_up.seconds:.0f} s); 50 seeds: "
      f"{per_seed * _PAPER_SEEDS / 60:.1f} min; exploitability {result.exploitability.mean():.4g}"
    )
  peer_seconds, peer_exploitability, infostates = _ismcts_composed(game, _SIMS.value)
  best = min(rows, key=lambda r: r["seconds_per_seed"])
  ratio = best["seconds_per_seed"] / peer_seconds
  print(
    f"  OpenSpiel IS-MCTS({_SIMS.value}) at all {infostates} infostates: {peer_seconds:.2f} s, "
    f"exploitability {peer_exploitability:.4g}; SoG / IS-MCTS time per composed policy: "
    f"{ratio:.1f}"
  )
  print(
    json.dumps(
      {
        "game": game.name,
        "sims": _SIMS.value,
        "seeds_timed": _SEEDS.value,
        "leaf": _LEAF.value,
        "results": rows,
        "ismcts_seconds": peer_seconds,
        "ismcts_exploitability": peer_exploitability,
        "ratio_to_ismcts": ratio,
        "device": jax.devices()[0].platform,
        "seconds_50_seeds": best["seconds_50_seeds"],
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
