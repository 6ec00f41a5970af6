"""SoG's protocol on the belief pool: the same seeds give the same composed policies as the table
search did (float64; ``tests/fixtures/table_searches.npz``), and ``scripts/evaluate.py`` reproduces
the exploitability recorded from the table search (``tests/fixtures/table_protocol.json``): the
golden results that stayed when the table engine left the library."""

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import load
from sog.games import tree as tree_lib
from sog.nets import checkpoint
from sog.protocol import composed
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_resolver
from sog.search.pool import belief_search
from sog.search.pool import sized
from tests.conftest import ROOT
from tests.conftest import table_search

FIXTURES = json.loads((ROOT / "tests" / "fixtures" / "table_protocol.json").read_text())


def _fixture(name: str) -> dict:
  [setting] = [s for s in FIXTURES["settings"] if s["name"] == name]
  return setting


def _pool(game, model, config, predecessor="own", dtype=jnp.float64):
  depth = predecessors.branch_depth(game.tree, predecessor)
  return GTCFR(game, model, config, dtype=dtype, branch_depth=depth)


@pytest.mark.parametrize(
  "predecessor",
  [
    "own",
    pytest.param(
      "nearest",
      marks=pytest.mark.slow(
        reason="the same test's [own] case checks the composition against the tables, and "
        "tests/test_growth.py::test_protocol_reports_growth_and_runs_from_the_nearest_predecessor "
        "the protocol from the nearest predecessor"
      ),
    ),
  ],
)
def test_the_protocol_on_the_pool_composes_the_table_searchs_policies(predecessor):
  """Kuhn, the zero leaf, s = 10, three seeds, float64: every search of the protocol (a root search
  or a re-solve from the player's last summary, with the gadget) gives the table search's policy at
  its decision, so the composed policies, their exploitability and the growth statistics are
  equal; batched in chunks of 4 (padded) or one at a time, the same."""
  game = load("kuhn_poker")
  table = table_search(f"compose/{predecessor}")
  growth = dict(zip(table["growth_keys"].tolist(), table["growth_values"].tolist(), strict=True))
  with jax.enable_x64(True):
    pool = _pool(
      game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=10), predecessor
    )
    for batch_size in (4, 1):
      composed_on_pool = composed.compose(
        pool, range(3), batch_size=batch_size, predecessor=predecessor, tree=game.tree
      )
      np.testing.assert_allclose(composed_on_pool.policies, table["policies"], atol=1e-12)
      np.testing.assert_allclose(
        composed_on_pool.exploitability, table["exploitability"], atol=1e-12
      )
      assert composed_on_pool.growth == pytest.approx(growth)


def test_the_protocol_on_the_pool_reproduces_the_recorded_leduc_network_run():
  """Leduc with the shipped CVPN, s = 10, seeds 0-1, float64: the pool's composed exploitability is
  the table search's, recorded in the fixtures by scripts/evaluate.py (to 1e-6, the issue's
  bar; measured equal to 1e-12)."""
  fixture = _fixture("leduc_network")
  game = load("leduc_poker")
  with jax.enable_x64(True):
    model = checkpoint.restore_leaf_model(ROOT / "checkpoints" / game.name, game.name)
    result = composed.compose(
      _pool(game, model, types.GTCFRConfig(simulations=10)),
      range(2),
      batch_size=1,
      tree=game.tree,
    )
  np.testing.assert_allclose(result.exploitability, fixture["per_seed"]["10"], atol=1e-6)


def test_evaluate_on_the_pool_reproduces_the_recorded_kuhn_oracle_run():
  """``scripts/evaluate.py --float64``, the exact oracle on Kuhn: the JSON's per-seed
  exploitability is the table search's recorded one (to 1e-6; measured to 1e-15)."""
  fixture = _fixture("kuhn_oracle")
  out = subprocess.run(
    [
      sys.executable,
      "scripts/evaluate.py",
      *[arg for arg in fixture["argv"] if not arg.startswith("--sims")],
      "--sims=10",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  line = json.loads(out.stdout.splitlines()[-1])
  assert line["float64"] and line["sims"] == 10
  np.testing.assert_allclose(line["per_seed"], fixture["per_seed"]["10"], atol=1e-6)


@pytest.mark.parametrize(
  "name",
  [
    "kuhn_routed_value_error",
    pytest.param(
      "leduc_network_first_search",
      marks=pytest.mark.slow(
        reason="the same test's [kuhn_routed_value_error] case checks the same routing, value "
        "error and fixture path"
      ),
    ),
  ],
)
def test_evaluate_on_the_pool_reproduces_the_recorded_attribution_runs(name):
  """``scripts/evaluate.py`` with ``--leaf_value_error`` and ``--oracle_on``: the per-seed
  exploitability and growth of the table search's runs recorded in the fixtures (to 1e-6; measured
  equal): the error is drawn per public state and the routing finds s_pub and the game's root as
  the table search's did."""
  fixture = _fixture(name)
  out = subprocess.run(
    [sys.executable, "scripts/evaluate.py", *fixture["argv"]],
    capture_output=True,
    text=True,
    cwd=ROOT,
  )
  assert out.returncode == 0, out.stderr[-3000:]
  line = json.loads(out.stdout.splitlines()[-1])
  [sims] = fixture["per_seed"]
  np.testing.assert_allclose(line["per_seed"], fixture["per_seed"][sims], atol=1e-6)
  assert line["per_search"] == pytest.approx(fixture["per_search"][sims])


def test_the_pool_protocol_refuses_what_it_cannot_run():
  """compose needs a belief-pool searcher, an enumerable game and a branch deep enough for the
  protocol's re-solves; the resolver refuses paths longer than it plans."""
  game = load("kuhn_poker")
  model = leaf_models.zero_leaf_model()
  config = types.GTCFRConfig(simulations=2)
  shallow = GTCFR(game, model, config)
  with pytest.raises(ValueError, match="runs a GTCFR or its SizedPools"):
    composed.compose(object(), [0])
  with pytest.raises(ValueError, match="needs the game's enumerated tree"):
    composed.compose(shallow, [0])
  with pytest.raises(ValueError, match="branch_depth >= 1"):
    composed.compose(shallow, [0], tree=game.tree)
  deep = _pool(game, model, config, dtype=jnp.float32)
  with pytest.raises(ValueError, match="path_length"):
    belief_resolver.BeliefResolver(deep, 0)
  resolver = belief_resolver.BeliefResolver(deep, 2)
  with pytest.raises(ValueError, match="longer than the resolver's path_length=2"):
    resolver.path([0, 1, 0])


def test_a_summary_pruned_to_its_followers_paths_plans_as_the_whole_one():
  """Leduc, a root search (s = 30, zero leaf, float64): its summary cut to the public states on the
  paths of the player's next decisions (what the protocol keeps) plans every one of them as the
  whole summary does (start, root path, origins), from fewer public states."""
  game = load("leduc_poker")
  tree = game.tree
  with jax.enable_x64(True):
    searcher = _pool(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=30))
    resolver = belief_resolver.BeliefResolver(searcher, tree.max_moves)
    player = int(tree.kind[0])
    [resolved] = resolver.resolve(
      [(resolver.initial_summary(), (), player)], jax.random.PRNGKey(0)[None]
    )
    [whole] = resolved.summaries()
    previous = tree_lib.previous_decisions(tree, "own")
    followers = [tree.paths[m] for m in np.flatnonzero(previous == 0)]
    pruned = belief_resolver.pruned(whole, followers)
    assert 1 < int(pruned.tree.num_nodes) < int(whole.tree.num_nodes)
    for path in followers:
      planned = [
        jax.device_get(
          next(resolver.resolve([(summary, path, player)], jax.random.PRNGKey(1)[None])).planned
        )
        for summary in (whole, pruned)
      ]
      for ours, theirs in zip(
        jax.tree.leaves(planned[1]), jax.tree.leaves(planned[0]), strict=True
      ):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.slow(
  reason="two Leduc float64 re-solving programs; the sized pools' re-solves are checked against "
  "the largest pool by tests/test_protocol_pool.py::test_a_chunk_holds_fewer_rows_in_a_larger_pool"
)
def test_a_re_solve_in_the_pool_its_subgame_can_fill_is_the_re_solve_in_the_largest_pool():
  """Leduc, zero leaf, s = 20, float64: a re-solve planned from the game's start down to a decision
  whose subgame it grows whole, in ``subgame_capacity`` slots (what the protocol's smaller pools
  hold) and in the searcher's own pool: the same tree, policy and values. The subgame sizes the
  protocol sizes its pools by are those of the enumerated tree."""
  game = load("leduc_poker")
  tree = game.tree
  sizes = tree.subgame_sizes()
  for n in range(0, tree.num_nodes, 7):
    assert sizes[n] == tree.descendants(n).size
  deep = np.flatnonzero((tree.kind < 2) & (tree.depth >= 4) & (sizes >= 10) & (sizes <= 40))
  node = int(deep[0])
  depth = int(tree.depth[node])
  model, config = leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=20)
  with jax.enable_x64(True):
    largest = GTCFR(game, model, config, dtype=jnp.float64, branch_depth=depth)
    capacity = belief_search.subgame_capacity(
      game.public_game, largest.config, int(sizes[node]), depth
    )
    smallest = GTCFR(game, model, config, dtype=jnp.float64, branch_depth=depth, capacity=capacity)
    assert smallest.capacity < largest.capacity
    results = []
    for searcher in (largest, smallest):
      resolver = belief_resolver.BeliefResolver(searcher, tree.max_moves)
      request = (resolver.initial_summary(), tree.paths[node], int(tree.kind[node]))
      [resolved] = resolver.resolve([request], jax.random.PRNGKey(3)[None])
      results.append(jax.tree.map(lambda x: np.asarray(x)[0], resolved.results))
  big, small = results
  assert bool(big.complete) and bool(small.complete)
  used = int(big.tree.num_nodes)
  assert int(small.tree.num_nodes) == used
  np.testing.assert_array_equal(small.tree.parent[:used], big.tree.parent[:used])
  np.testing.assert_allclose(small.focus_policy, big.focus_policy, atol=1e-12)
  np.testing.assert_allclose(small.values[:used], big.values[:used], atol=1e-12)


def test_a_chunk_holds_fewer_rows_in_a_larger_pool(monkeypatch):
  """Liar's Dice 1x4, s = 10: its searches run in pools of 64 and 109 slots; a chunk of 4 rows in
  the smaller pool holds 2 in the larger (``SizedPools.rows``: about as many slots), for the
  actors' and the solver's searches (``chunks``) and for the protocol's re-solves
  (``SizedResolver``). That a vmapped chunk gives each search's result is
  ``test_belief_resolving``'s; nothing here is compiled."""
  game = load("liars_dice(faces=4)")
  tree = game.tree
  config = types.GTCFRConfig(simulations=10)
  searcher = _pool(game, leaf_models.zero_leaf_model(), config, dtype=jnp.float32)
  pools = sized.SizedPools(searcher, tree.max_moves, tree)
  decisions = np.flatnonzero(tree.kind < 2)
  assert sorted(set(pools.capacity[decisions].tolist())) == [64, 109] and pools.smallest == 64
  assert [pools.rows(c, 4) for c in (64, 109)] == [4, 2]
  assert [pools.rows(c, 1) for c in (64, 109)] == [1, 1]
  with pytest.raises(ValueError, match="chunk must be >= 1"):
    pools.rows(64, 0)
  paths = [tree.paths[n] for n in decisions]
  for chunk in (4, 1):
    seen = []
    for jobs, rows, pooled in pools.chunks(paths, chunk):
      assert len(rows) == pools.rows(pooled.capacity, chunk) >= len(jobs)
      assert {int(pools.capacity[decisions[j]]) for j in jobs} == {pooled.capacity}
      seen += jobs
    assert sorted(seen) == list(range(len(paths)))
  asked = []  # (pool size, rows) of each resolver call

  def resolve(self, requests, rngs, chunk=1, params=None):
    asked.append((self.searcher.capacity, chunk))
    return iter(())

  monkeypatch.setattr(belief_resolver.BeliefResolver, "resolve", resolve)
  resolver = sized.SizedResolver(pools)
  summary = resolver.initial_summary()
  requests = [(summary, tree.paths[n], int(tree.kind[n])) for n in decisions]
  list(resolver.resolve(requests, jax.random.split(jax.random.PRNGKey(0), len(requests)), 4))
  assert asked == [(64, 4), (109, 2)]


@pytest.mark.slow(
  reason="4,370 searches, about 2 minutes; the protocol reproduces a recorded run in "
  "tests/test_protocol_pool.py::test_the_protocol_on_the_pool_reproduces_the_recorded_leduc_network_run"
)
def test_the_protocol_on_the_pool_reproduces_the_recorded_glasses_hidden6_run():
  """glasses_hidden6, the zero leaf, s = 10, seed 0, float64 (4,370 searches, about 2 minutes on
  2 cores): the pool's composed exploitability is the table search's recorded one (measured equal
  to 1e-16 since CFR+ counts a regret gain that ties zero to float64 rounding as zero on both
  engines: sog.search.cfr.regret_gains)."""
  fixture = _fixture("glasses_hidden6_zeros")
  game = load("scotland_yard(map=glasses_hidden6)")
  with jax.enable_x64(True):
    result = composed.compose(
      _pool(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=10)),
      range(1),
      batch_size=1,
      tree=game.tree,
    )
  np.testing.assert_allclose(result.exploitability, fixture["per_seed"]["10"], atol=1e-6)
