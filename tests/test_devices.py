"""Search batches split over local devices give the searches one device gives: bitwise for the
searches a device holds, and to float32 rounding against one device's batch of another shape.

The belief pool's searcher splits its batches so. JAX fixes the device count when it starts, so the
check runs in a fresh process with two forced host devices
(``--xla_force_host_platform_device_count=2``), comparing searchers on both devices with searchers
on the first only.
"""

import json
import os
import subprocess
import sys

import numpy as np

from tests.conftest import ROOT

_CHECK = r"""
import json
import jax
import numpy as np
import sog
from sog.protocol import composed
from sog.search import leaf_models, predecessors, types
from sog.search.pool import GTCFR

def leaves(result):
  return [np.asarray(x) for x in jax.tree.leaves(result)]

def bitwise(a, b):
  return all(np.array_equal(x, y) for x, y in zip(leaves(a), leaves(b)))

def close(a, b):  # exact where not floating point, float32 rounding elsewhere
  return all(np.allclose(x, y, rtol=0, atol=1e-6) if x.dtype.kind == "f" else np.array_equal(x, y)
             for x, y in zip(leaves(a), leaves(b)))

game = sog.load("kuhn_poker")
leaf = leaf_models.zero_leaf_model()
config = types.GTCFRConfig(simulations=4)
depth = predecessors.branch_depth(game.tree)
both = GTCFR(game, leaf, config, branch_depth=depth)
one = GTCFR(game, leaf, config, devices=jax.local_devices()[:1], branch_depth=depth)
rngs = jax.random.split(jax.random.PRNGKey(3), 4)
ranges = np.random.default_rng(0).dirichlet(np.ones(game.tree.root_ranges.shape[-1]), size=(4, 2))
# Four searches, two a device: each device computes exactly what one device does for its two.
split = both.search_batch(rngs, ranges)
halves = [one.search_batch(rngs[i:i + 2], ranges[i:i + 2]) for i in (0, 2)]
joined = jax.tree.map(lambda a, b: np.concatenate([a, b]), *halves)
# Three searches (padded to four) against one device's batch of three: XLA rounds float32 values
# by the batch's shape, on one device too (a batch of 2 or 4 against 3 there differs by 2.4e-7).
odd, odd_one = both.search_batch(rngs[:3], ranges[:3]), one.search_batch(rngs[:3], ranges[:3])
# The protocol: re-solving searches in chunks of 4.
protocol = [composed.compose(s, (0, 1), batch_size=4, tree=game.tree) for s in (both, one)]
print(json.dumps({
    "devices": jax.local_device_count(), "mesh": [both.mesh.size, one.mesh.size],
    "spread": len(jax.tree.leaves(split)[0].sharding.device_set),
    "halves_bitwise": bitwise(split, joined), "odd_close": close(odd, odd_one),
    "odd_rows": int(jax.tree.leaves(odd)[0].shape[0]),
    "protocol": [p.exploitability.tolist() for p in protocol],
    "policies_gap": float(np.abs(protocol[0].policies - protocol[1].policies).max())}))
"""


def test_search_batches_over_two_devices_equal_one_device():
  env = {
    **os.environ,
    "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
    "JAX_PLATFORMS": "cpu",
  }
  out = subprocess.run(
    [sys.executable, "-c", _CHECK],
    capture_output=True,
    text=True,
    cwd=ROOT,
    env=env,
    timeout=600,
  )
  assert out.returncode == 0, out.stderr[-3000:]
  result = json.loads(out.stdout.strip().splitlines()[-1])
  assert result["devices"] == 2 and result["mesh"] == [2, 1]
  assert result["spread"] == 2  # the batch really was split
  assert result["halves_bitwise"]
  assert result["odd_close"] and result["odd_rows"] == 3  # the padding row is dropped
  assert result["policies_gap"] < 1e-5, result
  np.testing.assert_allclose(*result["protocol"], rtol=0, atol=1e-6)
