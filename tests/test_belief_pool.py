"""The node pool for imperfect information: grown from a game's functions it is the enumerated
public tree, a CFR pass on it is the table pass, and CFR+ on it is the table CFR+."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sog.eval
from sog.games import public_game
from sog.games import worlds as game_worlds
from sog.search import cfr
from sog.search import solver as solver_lib
from sog.search import tables as tables_lib
from sog.search.pool import belief_cfr
from sog.search.pool import belief_paths
from sog.search.pool import belief_rows
from sog.search.pool import beliefs
from sog.search.pool import depth_order
from sog.search.pool import worlds
from tests.conftest import load

GAMES = (
  "kuhn_poker",
  "leduc_poker",
  "sequential_rps",
  "liars_dice(faces=4)",
  "scotland_yard(map=glasses_short)",
  "scotland_yard(map=glasses_hidden_short)",
  "connect_four(rows=2,columns=4,x_in_row=2)",
)


def _grown(name: str):
  game = load(name)
  pool = beliefs.grow(game.public_game, game.tree.num_nodes)
  return game, pool, beliefs.tree_nodes(pool, game.tree)


@pytest.mark.parametrize("name", GAMES)
def test_a_fully_grown_pool_is_the_enumerated_tree(name):
  game, pool, nodes = _grown(name)
  tree = game.tree
  assert int(pool.num_nodes) == tree.num_nodes
  assert np.unique(nodes).size == tree.num_nodes  # every public state once
  assert int(pool.height) == tree.num_levels - 1
  np.testing.assert_array_equal(np.asarray(pool.kind), tree.kind[nodes])
  np.testing.assert_array_equal(np.asarray(pool.depth), tree.depth[nodes])
  weight = pool.pair_weight(np.arange(pool.capacity))
  np.testing.assert_allclose(np.asarray(weight), tree.pair_weight[nodes], rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(pool.valid), tree.valid[nodes])
  payoff = beliefs.padded_pairs(pool.payoff, game.public_game.max_infostates)
  np.testing.assert_allclose(np.asarray(payoff), tree.payoff[nodes], rtol=1e-6, atol=1e-7)
  np.testing.assert_array_equal(np.asarray(pool.legal), tree.legal[nodes])
  np.testing.assert_allclose(np.asarray(pool.encoding), tree.encoding[nodes], rtol=1e-6)
  np.testing.assert_allclose(
    np.asarray(pool.probability), tree.chance_probability[nodes], rtol=1e-6
  )
  # Each edge (parent, actor infostate s, action a) -> child reaches the table's child in a slot
  # of a, with the table's next infostate.
  parent = np.asarray(pool.parent)
  edges, into = np.asarray(pool.edges), np.asarray(pool.next_infostate)
  for child in np.flatnonzero(parent >= 0):
    p = parent[child]
    actor = tree.kind[nodes[p]]
    for s, a in np.argwhere(edges[child]):
      (k,) = np.flatnonzero(tree.up_child[nodes[p], a] == nodes[child])
      assert tree.up_weight[nodes[p], a, k, actor, s] > 0
      assert tree.up_infostate[nodes[p], a, k, actor, s] == into[p, s, a]
  # and every table edge of an actor is one of the pool's
  table_edges = sum(
    int((tree.up_weight[n, :, :, tree.kind[n]] > 0).sum())
    for n in np.flatnonzero(tree.kind < public_game.CHANCE)
  )
  assert edges.sum() == table_edges


def _table_pass(tree, policy, root_ranges):
  levels = cfr.device_levels(tree)
  ranges, values, q_values, _ = cfr.evaluate_pass(levels, policy, root_ranges)
  q = np.zeros((tree.num_nodes, 2, *tree.legal.shape[1:]), np.float32)
  for start, x in zip(tree.level_starts, q_values, strict=False):
    if x is not None:
      q[start : start + x.shape[0]] = np.asarray(x)
  concat = lambda xs: np.concatenate([np.asarray(x) for x in xs])  # noqa: E731
  return concat(ranges), concat(values), q


@pytest.mark.parametrize(
  "name", ["leduc_poker", "scotland_yard(map=glasses_short)", "liars_dice(faces=4)"]
)
def test_a_pass_on_the_pool_is_the_table_pass(name):
  """Ranges, counterfactual values and the actor's action values of a random policy (with zeros)
  agree node for node, the action values row for row."""
  game, pool, nodes = _grown(name)
  order = depth_order.depth_order(pool)
  tree = game.tree
  inner = np.asarray(tables_lib.make_tables(tree).inner_position)
  legal = cfr.flat_legal(cfr.device_levels(tree))
  draw = jax.random.uniform(jax.random.PRNGKey(0), legal.shape)
  policy = cfr.regret_matching(jnp.where(draw < 0.4, 0.0, draw), legal)
  root_ranges = jnp.asarray(public_game.prior_ranges(game.public_game), jnp.float32)
  ranges, values, q = _table_pass(tree, policy, root_ranges)

  rows = inner[nodes]
  pool_policy = np.zeros(pool.legal.shape, np.float32)
  pool_policy[rows >= 0] = np.asarray(policy)[rows[rows >= 0]]
  pool_policy = belief_cfr.rows_of(pool, jnp.asarray(pool_policy))
  pool_ranges = belief_cfr.reach_down(pool, pool_policy, root_ranges, order).out
  pool_up, pool_q = belief_cfr.values_up(
    pool,
    pool_policy,
    pool_ranges,
    order=order,
    visit=lambda q, v: q.at[jnp.where(v.at.ok, v.at.nodes, pool.capacity), v.at.infostates].set(
      v.q, mode="drop"
    ),
    carry=jnp.zeros(pool.legal.shape),
  )
  np.testing.assert_allclose(np.asarray(pool_ranges), ranges[nodes], atol=1e-6)
  np.testing.assert_allclose(np.asarray(pool_up.out), values[nodes], atol=1e-6)
  players = np.flatnonzero(tree.kind[nodes] < public_game.CHANCE)
  actor = tree.kind[nodes[players]]
  acting = tree.valid[nodes[players], actor][..., None] & tree.legal[nodes[players]]
  np.testing.assert_allclose(
    np.where(acting, np.asarray(pool_q)[players], 0.0),
    np.where(acting, q[nodes[players], actor], 0.0),
    atol=1e-6,
  )


@pytest.mark.parametrize(
  "name", ["kuhn_poker", "leduc_poker", "scotland_yard(map=glasses_hidden_short)"]
)
def test_cfr_on_the_pool_is_the_table_cfr(name):
  """100 alternating CFR+ iterations in float64 give the table solver's average policy at every
  valid infostate (to 1e-7: float64 rounding, grown over the iterations), and its exploitability.
  (In float32 the two sum merged ranges in different orders, and a regret that is zero in exact
  arithmetic can come out 3e-8 on one side and 0 on the other; regret matching+ then takes
  different actions, so only float64 compares exactly.)"""
  iterations = 100
  game = load(name)
  tree = game.tree
  with jax.enable_x64(True):
    solver = solver_lib.Solver(tree, "alternating", dtype=jnp.float64)
    state, _ = solver.run(solver.init(), solver.root_ranges(None), iterations)
    theirs = solver.average_policy(state)
    pool = beliefs.grow(game.public_game, tree.num_nodes, jnp.float64)
    nodes = beliefs.tree_nodes(pool, tree)
    root_ranges = jnp.asarray(public_game.prior_ranges(game.public_game))
    run = jax.jit(
      lambda pool: jax.lax.fori_loop(
        0,
        iterations,
        lambda _, s: belief_cfr.iteration(pool, s, root_ranges, "alternating"),
        belief_cfr.init_state(pool),
      )
    )
    average = np.asarray(belief_cfr.average_policy(pool, run(pool)))
  ours = theirs.copy()
  players = np.flatnonzero(tree.kind[nodes] < public_game.CHANCE)
  acting = tree.valid[nodes[players], tree.kind[nodes[players]]]
  np.testing.assert_allclose(
    average[players][acting], theirs[nodes[players]][acting], rtol=1e-7, atol=1e-12
  )
  ours[nodes[players]] = average[players]
  assert sog.eval.exploitability(game, ours) == pytest.approx(
    sog.eval.exploitability(game, theirs), rel=1e-7
  )


@pytest.mark.parametrize(
  "name",
  [
    "kuhn_poker",
    "leduc_poker",
    "scotland_yard(map=glasses_short)",
    "scotland_yard(map=glasses_hidden_short)",
  ],
)
def test_world_states_walk_the_pool_as_the_tables(name):
  """Random games from random world states: every move reaches the table's child with the table's
  infostates, every chance node gives the table's outcome probabilities, and a world state drawn
  from the same ranges with the same key is the table's."""
  game, pool, nodes = _grown(name)
  tree = game.tree
  tables = tables_lib.make_tables(tree)
  slot = {int(n): i for i, n in enumerate(nodes)}
  ours, theirs = jax.jit(worlds.step_world), jax.jit(tables_lib.step_world)
  rng = np.random.default_rng(0)
  for game_index in range(20):
    key = jax.random.PRNGKey(game_index)
    ranges = jnp.asarray(rng.random((2, tree.max_infostates)), jnp.float32)
    world = tables_lib.sample_world(tables, 0, ranges, key)
    assert [int(x) for x in worlds.sample_world(pool, 0, ranges, key)] == [int(x) for x in world]
    node, s0, s1 = 0, *(int(x) for x in world)
    while tree.kind[node] != public_game.TERMINAL:
      here = slot[node]
      if tree.kind[node] == public_game.CHANCE:
        children = tree.up_child[node]
        weight = tables.up_weight[node, :, :, 0, s0] * np.where(
          children >= 0, tree.pair_weight[np.maximum(children, 0), s0, s1], 0.0
        )
        expected = dict(
          zip(children.ravel().tolist(), (weight / weight.sum()).ravel().tolist(), strict=True)
        )
        expected.pop(-1, None)
        probabilities = np.asarray(worlds.chance_probabilities(pool, here, s0, s1))
        kids = np.asarray(pool.children[here])
        got = {int(nodes[c]): float(probabilities[k]) for k, c in enumerate(kids) if c >= 0}
        assert got == pytest.approx(expected, abs=1e-6)
        action = 0
      else:
        own = s0 if tree.kind[node] == 0 else s1
        action = int(rng.choice(np.flatnonzero(tree.legal[node, own])))
      child, t0, t1 = (int(x) for x in theirs(tables, node, s0, s1, action, key))
      mine = [int(x) for x in ours(pool, here, s0, s1, action, key)]
      # a move, or a chance outcome drawn from the same key (both engines by inverse CDF in the
      # game's outcome order, sog.games.worlds.draw_index)
      assert [int(nodes[mine[0]]), *mine[1:]] == [child, t0, t1]
      node, s0, s1 = child, t0, t1


@pytest.mark.parametrize(
  "name", ["leduc_poker", "liars_dice(faces=4)", "scotland_yard(map=glasses_hidden_short)"]
)
def test_a_path_reaches_the_state_and_pair_weights_the_pool_grows(name):
  """``belief_paths.along`` (the query solver's start): for every public state of a fully grown
  pool, the state its path reaches and its W are the pool's, bit for bit."""
  game, pool, _ = _grown(name)
  paths = beliefs.paths(pool)
  length = max(len(p) for p in paths)
  padded = np.full((len(paths), length), -1, np.int32)
  for row, path in enumerate(paths):
    padded[row, : len(path)] = path
  states, weights = jax.jit(jax.vmap(lambda p: belief_paths.along(game.public_game, p)))(padded)
  used = int(pool.num_nodes)
  np.testing.assert_array_equal(np.asarray(weights), np.asarray(pool.pair_weight(np.arange(used))))
  for ours, grown in zip(jax.tree.leaves(states), jax.tree.leaves(pool.states), strict=True):
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(grown[:used]))


@pytest.mark.parametrize(
  "name", ["leduc_poker", "liars_dice(faces=4)", "scotland_yard(map=glasses_hidden_short)"]
)
def test_children_stepped_a_chunk_at_a_time_are_the_children_stepped_at_once(name, monkeypatch):
  """A game with more child slots than ``CHILDREN_PER_CHUNK`` (the real board's 1,991) gets its
  children a chunk at a time: with chunks of 2 slots, every game's whole tree is the one all its
  slots stepped at once grow, field for field (a fresh trace: the chunk size is read when
  traced)."""
  game = load(name).public_game
  size = load(name).tree.num_nodes
  whole = beliefs.grow_all(game, beliefs.empty(game, size))
  monkeypatch.setattr(beliefs, "CHILDREN_PER_CHUNK", 2)
  chunked = jax.jit(beliefs.grow_all, static_argnums=0)(game, beliefs.empty(game, size))
  for field in whole:
    pairs = zip(jax.tree.leaves(chunked[field]), jax.tree.leaves(whole[field]), strict=True)
    for ours, theirs in pairs:
      np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=field)


def test_an_expansion_with_a_reserve_adds_all_its_children_or_none():
  """``reserve``: the root of Leduc in a pool with room for all its children but one adds nothing
  and stays unexpanded, its added actions and next infostates unchanged; with room for all of them
  it adds all. Without a reserve the overflow shows in ``num_nodes``."""
  game = load("leduc_poker").public_game
  children = int(beliefs.add_children(game, beliefs.empty(game, 16), jnp.int32(0)).num_nodes) - 1
  assert children >= 2
  for capacity, adds in ((children, False), (children + 1, True)):
    empty = beliefs.empty(game, capacity)
    tree = beliefs.add_children(game, empty, jnp.int32(0), reserve=1)
    assert bool(tree.expanded[0]) == adds and int(tree.num_nodes) == (children + 1 if adds else 1)
    if not adds:
      for field in ("added", "next_infostate", "children", "kind", "weight"):
        np.testing.assert_array_equal(getattr(tree, field), getattr(empty, field), err_msg=field)
  overflowed = beliefs.add_children(game, beliefs.empty(game, children), jnp.int32(0))
  assert int(overflowed.num_nodes) == children + 1 > overflowed.capacity


def test_a_game_whose_expansion_is_too_large_is_refused(monkeypatch):
  monkeypatch.setattr(beliefs, "MAX_EXPANSION_ENTRIES", 100)
  with pytest.raises(ValueError, match=r"cannot grow this game: .*\(S0, S1\)=\(6, 6\)"):
    beliefs.empty(load("leduc_poker").public_game, 8)


def test_a_pool_too_small_for_the_game_is_refused():
  game = load("kuhn_poker")
  with pytest.raises(ValueError, match="more than capacity=5 public states"):
    beliefs.grow(game.public_game, 5)


def test_a_chance_draw_depends_on_the_order_of_the_positive_weights_only():
  """draw_index: zeros between the weights do not move the draw (the table and the pool lay a
  node's outcomes out differently), the frequencies follow the weights, all zeros give 0."""
  weights = jnp.array([0.2, 0.5, 0.3])
  spread = jnp.array([0.0, 0.2, 0.0, 0.0, 0.5, 0.3, 0.0])
  keys = jax.random.split(jax.random.PRNGKey(0), 4000)
  compact = jax.vmap(lambda k: game_worlds.draw_index(weights, k))(keys)
  padded = jax.vmap(lambda k: game_worlds.draw_index(spread, k))(keys)
  np.testing.assert_array_equal(np.asarray(padded), np.array([1, 4, 5])[np.asarray(compact)])
  frequencies = np.bincount(np.asarray(compact), minlength=3) / keys.shape[0]
  np.testing.assert_allclose(frequencies, weights, atol=0.03)
  assert int(game_worlds.draw_index(jnp.zeros(4), keys[0])) == 0


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard(map=glasses_hidden_short)"])
def test_the_depth_order_visits_each_node_and_row_once_by_depth(name):
  """Read depth by depth, the node chunks are the expanded slots by (depth, slot) and the row
  chunks their rows by depth, each once, at most a chunk of them a step (Leduc's levels hold more
  than a chunk of 4); past a depth's chunks, and in a chunk's tail, only padding (P, R); the leaves'
  chunks hold the other used slots in slot order. A walk down takes each node before its rows and
  its rows before its children, a walk up the reverse."""
  game = load(name)
  pool = beliefs.grow(game.public_game, game.tree.num_nodes + 40)  # 40 free slots
  order = depth_order.depth_order(pool, node_chunk=4, row_chunk=4, leaf_chunk=16)
  P, R = pool.capacity, pool.row_capacity
  depth, expanded = np.asarray(pool.depth), np.asarray(pool.expanded)
  used = np.flatnonzero(np.asarray(pool.used))
  interior, leaves = used[expanded[used]], used[~expanded[used]]
  rows = np.arange(int(pool.num_rows))
  row_depth = depth[np.asarray(pool.row_node)[rows]]
  for by_depth, none, members, member_depth in (
    (order.nodes, P, interior, depth[interior]),
    (order.rows, R, rows, row_depth),
  ):
    for d in range(int(order.num_levels)):
      steps = range(int(by_depth.level_chunks[d]) + 1)
      chunks = [np.asarray(by_depth.chunk(d, c, 4, none)) for c in steps]
      real = [chunk[chunk < none] for chunk in chunks]
      assert all(np.all(c[len(n) :] == none) for c, n in zip(chunks, real, strict=True))
      assert not real[-1].size  # past the depth's chunks
      visited = np.concatenate(real)
      np.testing.assert_array_equal(np.sort(visited), members[member_depth == d])
      if none == P:
        np.testing.assert_array_equal(visited, np.sort(visited))  # by slot within a depth
    assert max(int(c) for c in by_depth.level_chunks) > 1
  in_leaf_chunks = np.concatenate(
    [np.asarray(order.leaf_chunk_at(c)) for c in range(int(order.num_leaf_chunks))]
  )
  np.testing.assert_array_equal(in_leaf_chunks[: leaves.size], leaves)
  assert (in_leaf_chunks[leaves.size :] == P).all() and int(order.num_leaf_chunks) > 1

  def visit_rank(upward: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each node's and each row's place in a walk (-1: never visited)."""

    def step(which, none):
      def place(members, carry):
        ranks, count = carry
        real = members < none
        places = count + jnp.cumsum(real) - 1
        rank = ranks[which].at[members].set(jnp.where(real, places, -1), mode="drop")
        ranks = (rank, ranks[1]) if which == 0 else (ranks[0], rank)
        return ranks, count + real.sum()

      return place

    init = ((jnp.full(P, -1), jnp.full(R, -1)), jnp.int32(0))
    walk = order.up if upward else order.down
    (nodes, rows_), count = walk(step(0, P), step(1, R), init)
    assert int(count) == used.size + int(pool.num_rows)
    return np.asarray(nodes), np.asarray(rows_)

  below_root = used[used != 0]
  parents = np.asarray(pool.parent)[below_root]
  row_node = np.asarray(pool.row_node)[rows]
  child_rows = np.asarray(pool.row_of)[parents]  # [n, S]: the parents' rows
  (down, down_rows), (up, up_rows) = visit_rank(False), visit_rank(True)
  assert (down[used] >= 0).all() and (down_rows[rows] >= 0).all()
  assert (down[parents] < down[below_root]).all() and (up[below_root] < up[parents]).all()
  assert (down[row_node] < down_rows[rows]).all() and (up_rows[rows] < up[row_node]).all()
  has = child_rows < R
  into = np.broadcast_to(down[below_root][:, None], has.shape)[has]
  assert (down_rows[child_rows[has]] < into).all()
  out = np.broadcast_to(up[below_root][:, None], has.shape)[has]
  assert (out < up_rows[child_rows[has]]).all()


@pytest.mark.parametrize("name", GAMES)
def test_each_expanded_actor_infostate_has_one_row_whose_child_map_inverts_the_edges(name):
  """A row per valid infostate of the actor at each expanded player node (none elsewhere), its
  node's rows consecutive, and its (s, a) -> children map the inverse of the children's edges:
  child c is among row (p, s)'s children for action a exactly where edges[c, s, a], each once."""
  _, pool, _ = _grown(name)
  P, R = pool.capacity, pool.row_capacity
  kind, valid, expanded = (np.asarray(x) for x in (pool.kind, pool.valid, pool.expanded))
  row_of, row_node = np.asarray(pool.row_of), np.asarray(pool.row_node)
  row_infostate, row_child = np.asarray(pool.row_infostate), np.asarray(pool.row_child)
  start, count = np.asarray(pool.row_start), np.asarray(pool.row_count)
  used = np.flatnonzero(np.asarray(pool.used))
  players = used[expanded[used] & (kind[used] < public_game.CHANCE)]
  own = np.zeros_like(row_of, bool)
  own[players] = valid[players, kind[players]]
  assert (row_of < R).sum() == int(pool.num_rows) == own.sum()
  assert ((row_of < R) == own).all()
  node_of, s_of = np.nonzero(own)
  np.testing.assert_array_equal(row_node[row_of[own]], node_of)
  np.testing.assert_array_equal(row_infostate[row_of[own]], s_of)
  np.testing.assert_array_equal(row_of[own], start[node_of] + (np.cumsum(own, 1) - 1)[own])
  assert (count[players] == own[players].sum(1)).all()
  r, a, f = np.nonzero(row_child < P)
  mapped = set(zip(r.tolist(), a.tolist(), row_child[r, a, f].tolist(), strict=True))
  assert len(mapped) == r.size  # each child once per (s, a)
  parent, edges = np.asarray(pool.parent), np.asarray(pool.edges)
  c, s_, a = np.nonzero(edges[used[used != 0]])
  c = used[used != 0][c]
  assert mapped == set(zip(row_of[parent[c], s_].tolist(), a.tolist(), c.tolist(), strict=True))


def test_a_pool_without_rows_left_adds_no_children(monkeypatch):
  """With rows for one infostate a slot (R = P), Leduc's nodes (several valid infostates each)
  use them up before its slots: the expansion that finds too few rows left adds nothing, every
  expanded player node keeps its rows, and the rows in use never pass R."""
  monkeypatch.setattr(belief_rows, "MAX_ROWS", 0)
  game = load("leduc_poker")
  capacity = game.tree.num_nodes
  grow_all = jax.jit(beliefs.grow_all, static_argnums=0)
  pool = grow_all(game.public_game, beliefs.empty(game.public_game, capacity))
  assert pool.row_capacity == capacity
  assert int(pool.num_nodes) < capacity  # stopped by its rows
  kind, valid, expanded = (np.asarray(x) for x in (pool.kind, pool.valid, pool.expanded))
  used = np.flatnonzero(np.asarray(pool.used))
  players = used[expanded[used] & (kind[used] < public_game.CHANCE)]
  needed = valid[players, kind[players]].sum()
  assert needed == int(pool.num_rows) <= capacity
  frontier = used[~expanded[used] & (kind[used] < public_game.CHANCE)]
  assert (int(pool.num_rows) + valid[frontier, kind[frontier]].sum(1) > capacity).any()


@pytest.mark.parametrize("slot_chunk", [3, 7, 256])
def test_zero_used_zeroes_the_used_slots_and_no_chunk_past_them(slot_chunk):
  """``DepthOrder.zero_used`` (a pass's sums zeroed before it adds into them) zeroes every used
  slot, in chunks that need not divide the pool (the last one clamped inside it; one chunk of the
  whole pool where that is smaller), and leaves the slots past the chunks that hold used ones as
  they were."""
  game = load("kuhn_poker")
  tree = beliefs.grow(game.public_game, game.tree.num_nodes + 11)  # 11 free slots
  used, P = int(tree.num_nodes), tree.capacity
  order = depth_order.depth_order(tree, slot_chunk=slot_chunk)
  array = jax.random.uniform(jax.random.PRNGKey(0), (P, 2, 3)) + 1.0
  zeroed = np.asarray(order.zero_used(array))
  size = min(slot_chunk, P)
  touched = min(-(-used // size) * size, P)
  np.testing.assert_array_equal(zeroed[:used], 0.0)
  np.testing.assert_array_equal(zeroed[touched:], np.asarray(array)[touched:])
  assert touched < P or size == P  # some free slots are checked where the chunks allow
