"""What SoG's protocol asks its leaf model: the recorded queries and their labels, the routed leaf
model that hands one class of them to the exact oracle, and the diagnostics script on them."""

import dataclasses
import json
import subprocess
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog import protocol
from sog.games import public_game
from sog.protocol import queries as queries_lib
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import types as search_types
from sog.search.pool import GTCFR
from sog.search.pool import belief_oracle
from sog.search.pool import belief_paths
from sog.search.pool import beliefs
from tests.conftest import ROOT
from tests.conftest import load


def _constant_model(value: float) -> leaf_models.LeafModel:
  def apply(params, tables, nodes, ranges, mask):
    del params, mask
    logits = jnp.zeros((nodes.shape[0], 2, *tables.legal.shape[1:]), ranges.dtype)
    return leaf_models.LeafOutput(jnp.full_like(ranges, value), logits)

  return leaf_models.stateless(apply)


def _pool(game, config, dtype=jnp.float32):
  depth = predecessors.branch_depth(game.tree, "own")
  return GTCFR(game, leaf_models.zero_leaf_model(), config, dtype=dtype, branch_depth=depth)


def test_recorded_queries_are_labelled_by_where_they_sit(tmp_path):
  """Each query the belief pool's searches record is a leaf below s_pub or off the re-solving
  branch, as the game's tree says, and from a first search exactly where the search had no
  predecessor; recording changes nothing."""
  game = load("kuhn_poker")
  tree = game.tree
  config = search_types.GTCFRConfig(simulations=2)
  recorder = queries_lib.QueryRecorder(tree)
  searcher = _pool(game, dataclasses.replace(config, query_samples=16))
  recorded = protocol.compose(searcher, range(3), batch_size=2, on_resolved=recorder, tree=tree)
  plain = protocol.compose(_pool(game, config), range(3), batch_size=2, tree=tree)
  np.testing.assert_array_equal(recorded.exploitability, plain.exploitability)
  found = recorder.queries
  assert found.size > 0 and set(found.seeds.tolist()) == {0, 1, 2}

  def first_decision(node):  # no decision of the same player above it
    player, parent = tree.kind[node], tree.parent[node]
    while parent >= 0 and tree.kind[parent] != player:
      parent = tree.parent[parent]
    return parent < 0

  for searched, node, below, first in zip(
    found.searched, found.nodes, found.below_focus, found.first_search, strict=True
  ):
    assert tree.kind[node] != 3  # a frontier leaf is never terminal
    assert below == (node != searched and node in tree.descendants(searched))
    assert first == first_decision(searched)
  assert found.below_focus.any() and (~found.below_focus).any()
  assert found.first_search.any()  # Kuhn's later searches have only terminal leaves
  found.save(tmp_path / "q.npz")
  again = queries_lib.ProtocolQueries.load(tmp_path / "q.npz")
  np.testing.assert_array_equal(again.ranges, found.ranges)
  np.savez(tmp_path / "other.npz", x=np.zeros(2))
  with pytest.raises(ValueError, match="not a file of protocol queries"):
    queries_lib.ProtocolQueries.load(tmp_path / "other.npz")


def _rows(queries: queries_lib.ProtocolQueries) -> list[tuple]:
  """The queries as sorted rows (seed, searched, node, labels, ranges to 1e-12)."""
  ranges = [tuple(np.round(r.ravel(), 12)) for r in queries.ranges]
  labels = (
    queries.seeds,
    queries.searched,
    queries.nodes,
    queries.below_focus,
    queries.first_search,
  )
  return sorted(zip(*[x.tolist() for x in labels], ranges, strict=True))


def test_the_pool_records_the_table_searchs_queries():
  """Kuhn, the zero leaf, s = 10, seeds 0-1, float64, a sample that holds every query a search
  asks: the belief pool's searches ask exactly the queries the table search asked (nodes, labels,
  ranges), recorded from it in tests/fixtures/table_queries_kuhn.npz (``scripts/evaluate.py
  --game=kuhn_poker --leaf=zeros --sims=10 --seeds=2 --float64 --record_queries=DIR
  --query_samples=4096 --engine=tables`` at a commit before the table search left the
  library)."""
  game = load("kuhn_poker")
  recorded = queries_lib.ProtocolQueries.load(ROOT / "tests/fixtures/table_queries_kuhn.npz")
  recorder = queries_lib.QueryRecorder(game.tree)
  config = search_types.GTCFRConfig(simulations=10, query_samples=4096)
  with jax.enable_x64(True):
    searcher = _pool(game, config, jnp.float64)
    protocol.compose(searcher, range(2), batch_size=4, on_resolved=recorder, tree=game.tree)
  assert recorder.queries.size == recorded.size > 50
  assert _rows(recorder.queries) == _rows(recorded)


def _rooted_pool(public, state, weight, size: int) -> beliefs.BeliefTree:
  """The whole subgame below ``state`` (pair weight ``weight``) grown on a pool."""
  return beliefs.grow_all(public, beliefs.empty(public, size, jnp.float32, state, weight))


@pytest.mark.parametrize("route", leaf_models.QUERY_CLASSES)
def test_the_routed_model_gives_the_oracle_exactly_its_class(route):
  """On the frontier a re-solve keeps (the off-branch children of the branch s_prev -> s_pub, and
  s_pub's children), of a first search (the pool rooted at the game's root, the branch the whole
  path to s_pub) and of a later one (rooted at s_pub's parent s_prev, a one-move branch): the
  oracle's values replace the model's exactly at the (leaf, player, infostate) entries of the
  class, as the game's tree labels them, and nowhere else. Both frontiers are padded to one row
  count and share one reach threshold, so one compiled call serves both."""
  game = load("leduc_poker")
  tree, public = game.tree, game.public_game
  focus = int(np.flatnonzero((tree.depth == 2) & (tree.kind < 2))[0])
  depth = len(tree.paths[focus])
  whole = _rooted_pool(public, public.root(), public_game.root_weight(public), tree.num_nodes)
  slot_of = {tree.node_of_path(p): k for k, p in enumerate(beliefs.paths(whole))}
  s_prev = slot_of[int(tree.parent[focus])]
  later = _rooted_pool(
    public,
    jax.tree.map(lambda x: x[s_prev], whole.states),
    whole.pair_weight(s_prev),
    tree.num_nodes,
  )
  draws = np.random.default_rng(0)
  below_focus = set(tree.descendants(focus).tolist())
  frontiers = []
  for pool, root_path, first in ((whole, (), True), (later, tree.paths[tree.parent[focus]], False)):
    # the frontier a re-solve from this root keeps: the children of the branch's states off the
    # branch, and the states it grows below s_pub (here its children)
    branch_nodes = {tree.node_of_path(tree.paths[focus][:m]) for m in range(len(root_path), depth)}
    nodes, slots = [], []
    for k, p in enumerate(beliefs.paths(pool)):
      node = tree.node_of_path((*root_path, *p))
      parent = int(tree.parent[node])
      off_branch = parent in branch_nodes and node not in branch_nodes and node != focus
      if tree.kind[node] != 3 and (off_branch or parent == focus):
        nodes.append(node)
        slots.append(k)
    frontiers.append((pool, root_path, first, np.array(nodes), np.array(slots)))
  rows = max(nodes.size for *_, nodes, _ in frontiers)
  checked, calls, kept_masses = 0, [], []
  for pool, root_path, first, nodes, slots in frontiers:
    # padded to the longer frontier with masked rows (slot 0, which no row of it is); the last
    # row is masked too: a padding row is never the oracle's
    mask = np.arange(rows) < nodes.size - 1
    nodes, slots = (
      np.pad(nodes, (0, rows - nodes.size), "edge"),
      np.pad(slots, (0, rows - slots.size)),
    )
    valid = tree.valid[nodes]
    ranges = np.where(valid & (draws.random(valid.shape) > 0.3), 0.3, 0.0).astype(np.float32)
    ranges *= draws.random(valid.shape).astype(np.float32)
    opponent_mass = np.where(valid, ranges, 0.0).sum(-1)[:, ::-1]
    calls.append((pool, root_path, first, nodes, slots, mask, valid, ranges, opponent_mass))
    kept_masses.append(opponent_mass[mask])
  threshold = float(np.median(np.concatenate(kept_masses)))  # over both frontiers' kept rows
  model = leaf_models.routed_leaf_model(
    _constant_model(7.0),
    belief_oracle.exact_leaf_model(game, 2),
    route,
    reach_threshold=threshold,
    game=game,
  )
  apply = jax.jit(model.apply)
  for pool, root_path, first, nodes, slots, mask, valid, ranges, opponent_mass in calls:
    branch = belief_paths.padded_path(tree.paths[focus][len(root_path) :], tree.max_moves)
    start = types.SimpleNamespace(
      state=jax.tree.map(lambda x: x[0], pool.states), weight=pool.pair_weight(0), branch=branch
    )
    state = model.init(pool, start)
    out = apply(
      model.params, pool, jnp.asarray(slots), jnp.asarray(ranges), jnp.asarray(mask), state
    )
    oracle_entries = np.asarray(out.values != 7.0)  # [L, 2, S]
    below = np.array([n in below_focus for n in nodes])
    by_row = {
      "off_branch": np.repeat(~below[:, None], 2, 1),
      "below_focus": np.repeat(below[:, None], 2, 1),
      "first_search": np.full((nodes.size, 2), first),
      "player_0": np.repeat([[True, False]], nodes.size, 0),
      "player_1": np.repeat([[False, True]], nodes.size, 0),
      "low_reach": opponent_mass < threshold,
      "high_reach": opponent_mass >= threshold,
    }
    if route in by_row:
      expected = np.repeat(by_row[route][..., None], tree.max_infostates, -1)
    else:
      expected = valid & ((ranges > 0) == (route == "reached"))
    expected &= mask[:, None, None]
    np.testing.assert_array_equal(oracle_entries, expected)
    assert below[mask].any() and (~below[mask]).any()
    if route.endswith("_reach"):  # the shared threshold splits this frontier's rows too
      assert expected[mask].any() and not expected[mask].all()
    checked += int(expected.any())
  assert checked >= 1
  with pytest.raises(ValueError, match="valid classes"):
    leaf_models.routed_leaf_model(_constant_model(0.0), leaf_models.zero_leaf_model(), "river")
  with pytest.raises(ValueError, match="depth-limited solves"):
    model.init(whole, None)


def test_evaluate_records_queries_and_diagnose_leaf_splits_the_error(kuhn_checkpoint, tmp_path):
  """evaluate.py --record_queries writes the queries of the belief pool's searches (and --oracle_on
  routes a class to the pool's oracle); diagnose_leaf.py values them and reports every group."""

  def run(*args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)

  evaluated = run(
    "scripts/evaluate.py",
    "--game=kuhn_poker",
    f"--leaf={kuhn_checkpoint}",
    "--sims=2",
    "--seeds=2",
    f"--record_queries={tmp_path}",
    "--oracle_on=off_branch",
    "--oracle_iterations=2",
  )
  assert evaluated.returncode == 0, evaluated.stderr[-3000:]
  record = json.loads(evaluated.stdout.strip().splitlines()[-1])
  assert record["oracle_on"] == "off_branch" and "exact oracle" in evaluated.stdout
  diagnosed = run(
    "scripts/diagnose_leaf.py",
    "--game=kuhn_poker",
    f"--leaf={kuhn_checkpoint}",
    f"--queries={tmp_path / 'queries_s2.npz'}",
    "--iterations=20",
    "--held_out=8",
  )
  assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
  summary = json.loads(diagnosed.stdout.strip().splitlines()[-1])
  groups = summary["groups"]
  assert groups["all"]["entries"] == groups["player_0"]["entries"] + groups["player_1"]["entries"]
  assert groups["all"]["entries"] == (
    groups["below_focus"]["entries"] + groups["off_branch"]["entries"]
  )
  assert summary["queries"] > 0 and np.isfinite(groups["all"]["conditional_error"])
  assert summary["prior_entropy"] > 0


def _network_dir(path, exploitability: float, errors: dict[str, float]):
  """A network's directory as compare_networks.py reads it: evaluate.py's JSON line at s = 100 and
  diagnose_leaf.py's at that s, every group with the given error (0.5 where not given)."""
  path.mkdir()
  row = {"sims": 100, "exploitability": {"mean": exploitability}}
  (path / "eval.txt").write_text("table\n" + json.dumps({**row, "results": [row]}) + "\n")
  groups = {
    g: {
      "conditional_error": errors.get(g, 0.5),
      "counterfactual_error": 0.1,
      "bias": -errors.get(g, 0.5),
    }
    for g in ("all", "off_branch", "first_search", "unreached", "reached", "player_0", "player_1")
  }
  diag = {"groups": groups, "held_out_error": errors.get("held_out", 1.0), "prior_entropy": 0.3}
  (path / "diag_s100.txt").write_text("table\n" + json.dumps(diag) + "\n")
  return f"{path.name}={path}"


def test_compare_networks_ranks_each_diagnostic_against_the_exploitability(tmp_path):
  # Three networks: the off-branch error follows the exploitability's order, the unreached error
  # runs against it.
  specs = [
    _network_dir(tmp_path / "a", 0.05, {"off_branch": 0.1, "unreached": 3.0}),
    _network_dir(tmp_path / "b", 0.10, {"off_branch": 0.4, "unreached": 2.0}),
    _network_dir(tmp_path / "c", 0.20, {"off_branch": 0.8, "unreached": 1.0}),
  ]
  out = subprocess.run(
    [sys.executable, "scripts/compare_networks.py", f"--networks={','.join(specs)}"],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  summary = json.loads(out.stdout.splitlines()[-1])
  assert summary["networks"]["b"]["100"]["exploitability"] == pytest.approx(100.0)  # mbb/h
  assert summary["networks"]["c"]["100"]["bias, off-branch"] == pytest.approx(-0.8)
  spearman = summary["spearman"]["100"]
  assert spearman["error, off-branch"] == pytest.approx(1.0)
  assert spearman["error, unreached"] == pytest.approx(-1.0)
  assert spearman["bias, off-branch"] == pytest.approx(-1.0)
  assert "| a | 50.0 |" in out.stdout
  twice = subprocess.run(
    [sys.executable, "scripts/compare_networks.py", f"--networks={specs[0]},{specs[0]}"],
    capture_output=True,
    text=True,
    cwd=ROOT,
  )
  assert twice.returncode != 0 and "given twice" in twice.stderr
