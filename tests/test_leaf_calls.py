"""A search's leaf-model call on its frontier: sized by the frontier (the smallest batch that holds
it), none while it is empty, and what the caller records from it sees the call at that size."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np

from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import types as search_types


def _model(params, view, nodes, ranges, mask, state):
  """Values 2 x ranges + the node index; the state counts the rows it was asked for."""
  values = 2.0 * ranges + nodes[:, None, None].astype(ranges.dtype)
  logits = jnp.zeros((*ranges.shape, 3))
  return leaf_models.LeafOutput(values=values, logits=logits, state=state + nodes.shape[0])


def _call(frontier, batches):
  frontier = jnp.asarray(frontier)
  ranges = jax.random.uniform(jax.random.PRNGKey(0), (frontier.shape[0], 2, 4))
  seen = []

  def record(carry, call):
    seen.append(call.nodes.shape[0])  # traced once per branch: the sizes of the branches
    return carry + jnp.where(call.mask, call.nodes + 1, 0).sum()

  called = jax.jit(
    lambda f, r: leaf_calls.call_frontier(
      SimpleNamespace(), _model, None, f, r, batches, jnp.int32(0), record, jnp.int32(0)
    )
  )(frontier, ranges)
  return ranges, called, seen


def test_the_call_is_sized_by_the_frontier_and_records_at_that_size():
  batches = leaf_calls.LeafBatches((8, 32, 63))
  frontier = np.zeros(64, bool)
  frontier[[3, 10, 11, 40, 50, 51, 52, 60, 61]] = True  # 9 leaves: the batch of 32
  ranges, called, seen = _call(frontier, batches)
  assert seen == [8, 32, 63]  # each branch records at its own size
  assert bool(called.called) and int(called.leaf_state) == 32
  expected = np.where(frontier[:, None, None], 2.0 * np.asarray(ranges), 0.0)
  expected += np.where(frontier, np.arange(64), 0)[:, None, None]
  np.testing.assert_allclose(np.asarray(called.values), expected, rtol=1e-6)
  assert int(called.record) == int((np.flatnonzero(frontier) + 1).sum())


def test_an_empty_frontier_makes_no_call_and_keeps_the_carry():
  _, called, _ = _call(np.zeros(64, bool), leaf_calls.LeafBatches((8, 32, 63)))
  assert not bool(called.called) and int(called.leaf_state) == 0
  assert int(called.record) == 0 and not np.asarray(called.values).any()


def test_the_batch_sizes_grow_geometrically_up_to_the_bound():
  assert leaf_calls.leaf_batches(6006).sizes == (8, 32, 128, 512, 2048, 6006)
  assert leaf_calls.leaf_batches(190).sizes == (8, 32, 128, 190)
  assert leaf_calls.leaf_batches(32).sizes == (8, 32)
  assert leaf_calls.leaf_batches(5).sizes == (5,)
  assert leaf_calls.leaf_batches(33).sizes == (8, 33)  # no branch for one row more than 32
  for capacity in (1, 7, 8, 9, 12, 13, 33, 36, 37, 100, 131, 6006):
    sizes = leaf_calls.leaf_batches(capacity).sizes
    assert sizes[-1] == capacity and list(sizes) == sorted(set(sizes))
    # any frontier of more than the smallest batch pays for fewer than BATCH_RATIO times its rows
    for count in range(leaf_calls.SMALLEST_BATCH + 1, capacity + 1):
      batch = next(size for size in sizes if size >= count)
      assert batch < leaf_calls.BATCH_RATIO * count


def test_every_frontier_size_makes_one_call_at_the_smallest_batch_that_holds_it():
  sizes = (8, 32, 63)
  for count in (0, 1, 7, 8, 9, 31, 32, 33, 62, 63):
    frontier = np.zeros(64, bool)
    frontier[1 : 1 + count] = True
    _, called, _ = _call(frontier, leaf_calls.LeafBatches(sizes))
    asked = next((size for size in sizes if size >= count), None) if count else 0
    assert int(called.leaf_state) == asked, count  # rows asked over all calls: one call, or none
    assert bool(called.called) == (count > 0)


def test_a_vmapped_batch_makes_one_call_sized_by_its_largest_frontier():
  frontiers = np.zeros((3, 64), bool)
  frontiers[0, :3] = True  # 3 leaves, 20 leaves and none: the batch asks 32 rows of each
  frontiers[1, 10:30] = True
  ranges = jax.random.uniform(jax.random.PRNGKey(1), (3, 64, 2, 4))
  batches = leaf_calls.LeafBatches((8, 32, 63), axis_name="searches")

  def call(frontier, ranges):
    return leaf_calls.call_frontier(
      SimpleNamespace(), _model, None, frontier, ranges, batches, jnp.int32(0)
    )

  called = jax.jit(jax.vmap(call, axis_name="searches"))(jnp.asarray(frontiers), ranges)
  np.testing.assert_array_equal(np.asarray(called.leaf_state), [32, 32, 32])
  assert np.asarray(called.called).all()  # the empty frontier rides along with the batch's call
  for search in range(3):
    expected = np.where(frontiers[search][:, None, None], 2.0 * np.asarray(ranges[search]), 0.0)
    expected += np.where(frontiers[search], np.arange(64), 0)[:, None, None]
    np.testing.assert_allclose(np.asarray(called.values[search]), expected, rtol=1e-6)
  empty = jax.jit(jax.vmap(call, axis_name="searches"))(jnp.zeros((2, 64), bool), ranges[:2])
  assert not np.asarray(empty.called).any() and not np.asarray(empty.leaf_state).any()


def test_the_query_sample_keeps_the_offered_queries_with_the_smallest_keys():
  """Over three calls' offers (some rows masked), the sample holds exactly the offered queries whose
  random keys are the smallest so far, each with its own node and ranges."""
  size = 4
  sample = search_types.QuerySample(
    nodes=jnp.zeros(size, jnp.int32),
    ranges=jnp.zeros((size, 2, 3)),
    keys=jnp.full(size, jnp.inf),
  )
  offered = []  # (key, node, ranges) of every unmasked query
  for call in range(3):
    rng, draws_rng = jax.random.split(jax.random.PRNGKey(call))
    nodes = jnp.arange(6, dtype=jnp.int32) + 10 * call
    ranges = jax.random.uniform(draws_rng, (6, 2, 3))
    mask = jnp.arange(6) < 5 - call
    sample = jax.jit(leaf_calls.sample_queries)(sample, rng, nodes, ranges, mask)
    keys = jax.random.uniform(rng, (6,), sample.keys.dtype)
    offered += [(float(keys[i]), int(nodes[i]), np.asarray(ranges[i])) for i in range(5 - call)]
  expected = sorted(offered, key=lambda query: query[0])[:size]
  np.testing.assert_allclose(np.asarray(sample.keys), [key for key, _, _ in expected])
  np.testing.assert_array_equal(np.asarray(sample.nodes), [node for _, node, _ in expected])
  np.testing.assert_array_equal(np.asarray(sample.ranges), np.stack([r for _, _, r in expected]))
