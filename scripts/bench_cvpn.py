"""CVPN forward throughput (PBSs per second) at several batch sizes; ends with one JSON line.

python scripts/bench_cvpn.py --games=leduc_poker,scotland_yard --batch_sizes=1,64,1024
"""

import json
import time

from absl import app
from absl import flags
import jax
import numpy as np

import sog.games
from sog.nets import config as config_lib
from sog.nets import cvpn as cvpn_lib

_GAMES = flags.DEFINE_list("games", ["leduc_poker", "scotland_yard(map=glasses)"], "Games.")
_BATCHES = flags.DEFINE_list("batch_sizes", ["1", "64", "1024"], "Batch sizes.")
_WIDTH = flags.DEFINE_integer("width", 256, "MLP width.")
_DEPTH = flags.DEFINE_integer("depth", 4, "MLP depth.")
_SECONDS = flags.DEFINE_float("seconds", 2.0, "Time spent per measurement.")


def main(argv):
  del argv
  results = {}
  config = config_lib.NetworkConfig(width=_WIDTH.value, depth=_DEPTH.value)
  print(f"CVPN {config.depth} x {config.width} {config.activation}, {jax.devices()[0].platform}")
  print("| game | batch | PBS/s | ms/call |\n|---|---|---|---|")
  for name in _GAMES.value:
    game = sog.games.load(name)
    network = cvpn_lib.make_network(game.public_game, config)
    params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(0))
    forward = jax.jit(lambda p, pbs, network=network: network.apply({"params": p}, pbs).values)
    rng = np.random.default_rng(0)
    results[game.name] = {}
    for batch in map(int, _BATCHES.value):
      nodes = rng.integers(0, game.tree.num_nodes, size=batch)
      pbs = cvpn_lib.pbs_at(
        game.tree,
        nodes,
        np.broadcast_to(game.tree.root_ranges, (batch, *game.tree.root_ranges.shape)),
      )
      forward(params, pbs).block_until_ready()
      calls, start = 0, time.perf_counter()
      while time.perf_counter() - start < _SECONDS.value:
        forward(params, pbs).block_until_ready()
        calls += 1
      seconds = (time.perf_counter() - start) / calls
      results[game.name][batch] = batch / seconds
      print(f"| {game.name} | {batch} | {batch / seconds:,.0f} | {1000 * seconds:.3f} |")
  print(json.dumps({"width": config.width, "depth": config.depth, "pbs_per_second": results}))


if __name__ == "__main__":
  app.run(main)
