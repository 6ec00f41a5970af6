"""GT-CFR on a node pool: the same search as the table search where both apply (seed for seed, node
for node), batched = unbatched, search facts on pgx games, and the errors of bad input."""

import copy
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pyspiel
import pytest

import sog.games
from sog.games import conformance
from sog.games import pgx_games
from sog.games import public_game
from sog.search import alphazero
from sog.search import leaf_models
from sog.search import pool
from sog.search import types
from tests.conftest import ROOT
from tests.conftest import load
from tests.conftest import table_case
from tests.conftest import table_search

_C4 = "connect_four(rows=3,columns=3,x_in_row=3)"


class _NodeIndexGame(public_game.PublicGame):
  """An enumerated perfect-information game's tables as a PublicGame whose state is the node index,
  so a pool search can be compared with the table search node for node."""

  num_infostates = (1, 1)

  def __init__(self, tree: sog.games.PublicTree):
    self.name, self.num_actions = tree.name, tree.num_actions
    self.max_children, self.encoding_size = tree.num_actions, int(tree.encoding.shape[-1])
    terminal = tree.kind == sog.games.TERMINAL
    safe_weight = np.where(terminal, tree.pair_weight[:, 0, 0], 1.0)
    self._kind = jnp.asarray(tree.kind, jnp.int32)
    self._legal = jnp.asarray(tree.legal[:, 0] & ~terminal[:, None])
    self._child = jnp.asarray(tree.up_child[:, :, 0], jnp.int32)
    self._utility = jnp.asarray(np.where(terminal, tree.payoff[:, 0, 0] / safe_weight, 0.0))
    self._encoding = jnp.asarray(tree.encoding)

  def deal(self) -> np.ndarray:
    return np.ones((1, 1))

  def root(self) -> jax.Array:
    return jnp.int32(0)

  def kind(self, state: jax.Array) -> jax.Array:
    return self._kind[state]

  def legal(self, state: jax.Array) -> jax.Array:
    return self._legal[state][None]

  def transitions(self, state: jax.Array) -> public_game.Transitions:
    return public_game.action_children(self, self.legal(state))

  def child(self, state: jax.Array, k: jax.Array) -> jax.Array:
    return self._child[state, k]

  def utility(self, state: jax.Array) -> jax.Array:
    return self._utility[state][None, None]

  def encode(self, state: jax.Array) -> jax.Array:
    return self._encoding[state]


def _fixed_leaves(num_nodes: int, num_actions: int, seed: int = 0):
  """A pool leaf model and a belief-pool leaf model (reading the node index a
  :class:`_NodeIndexGame` state is) that agree with each other and with the table leaf model the
  table search's fixture was recorded with: node n is worth z[n] to player 0 (-z[n] to player 1)
  per unit of opponent reach, with fixed random logits, whatever the ranges."""
  rng = np.random.default_rng(seed)
  z = jnp.asarray(rng.uniform(-1, 1, num_nodes), jnp.float32)
  logits = jnp.asarray(rng.normal(size=(num_nodes, num_actions)), jnp.float32)

  def pool_apply(params, game, states, mask):
    return pool.PoolLeafOutput(jnp.stack([z[states], -z[states]], -1), logits[states])

  def belief_apply(params, tree, slots, ranges, mask):
    nodes = tree.states[slots]
    per_player = jnp.stack([z[nodes], -z[nodes]], -1)[..., None]  # [L, 2, 1]
    values = per_player * ranges.sum(-1, keepdims=True)[:, ::-1]
    return leaf_models.LeafOutput(
      values, jnp.broadcast_to(logits[nodes][:, None, None], (*ranges.shape, num_actions))
    )

  return pool.PoolLeafModel(pool_apply), leaf_models.stateless(belief_apply)


@pytest.mark.parametrize(
  "options",
  [
    {},
    {"updates": "simultaneous"},
    {"averaging": "per_node", "redraws": 0},
    {"tie_break": "action", "simulations_per_phase": 2.0},
  ],
)
def test_pool_search_equals_table_search(options):
  """With k = all actions the pool grows the same public states as the table search from the same
  seeds (recorded in ``tests/fixtures/table_searches.npz`` before it left the library), and its
  policies and values are the same at every node (leaf values that do not depend on the ranges, as
  a network's do not with one infostate per player)."""
  game = load(_C4)
  pool_leaf, _ = _fixed_leaves(game.tree.num_nodes, game.tree.num_actions)
  config = types.GTCFRConfig(simulations=40, expansion_k=game.tree.num_actions, **options)
  pool_search = pool.PoolGTCFR(_NodeIndexGame(game.tree), pool_leaf, config)
  case = table_case("c4", "fixed", settings=options)
  for seed in range(2):
    table = table_search(f"node_pool/{case}/{seed}")
    grown = pool_search.search(jax.random.PRNGKey(seed))
    used = np.asarray(grown.tree.used)
    nodes = np.asarray(grown.tree.states)[used]
    assert sorted(nodes) == table["nodes"].tolist()
    expanded = np.asarray(grown.tree.expanded)[used]
    order = np.argsort(nodes[expanded])
    assert nodes[expanded][order].tolist() == table["expanded"].tolist()
    np.testing.assert_allclose(
      np.asarray(grown.average_policy)[used][expanded][order], table["average_policy"], atol=1e-5
    )
    np.testing.assert_allclose(grown.root_values, table["root_values"], atol=1e-5)
    assert int(grown.walks) == int(table["walks"])
    assert int(grown.growing_walks) == int(table["growing_walks"])


@pytest.mark.parametrize(
  "options",
  [{}, {"updates": "simultaneous"}, {"averaging": "per_node", "redraws": 0}, {"expansion_k": 2}],
)
def test_the_belief_pool_with_k_below_all_is_the_perfect_information_pool(options):
  """With k = 1 (a perfect-information game's default) or 2 the belief pool (``BeliefGTCFR``, the
  one engine to come) grows the public states the perfect-information pool (``PoolGTCFR``) grows
  from the same seeds, with the same walks, root policy and values (float32 rounding): both give an
  action not added yet the mover's value at the node and average over the added actions."""
  game = load(_C4)
  node_game = _NodeIndexGame(game.tree)
  pool_leaf, belief_leaf = _fixed_leaves(game.tree.num_nodes, game.tree.num_actions)
  config = types.GTCFRConfig(simulations=40, **options)
  pool_search = pool.PoolGTCFR(node_game, pool_leaf, config)
  belief_search = pool.BeliefGTCFR(node_game, belief_leaf, config)
  assert belief_search.k == options.get("expansion_k", 1)
  for seed in range(2):
    grown = pool_search.search(jax.random.PRNGKey(seed))
    belief = belief_search.search(jax.random.PRNGKey(seed))
    nodes = np.asarray(grown.tree.states)[np.asarray(grown.tree.used)]
    assert sorted(nodes) == sorted(np.asarray(belief.tree.states)[: int(belief.tree.num_nodes)])
    np.testing.assert_allclose(belief.focus_policy[0], grown.root_policy, atol=1e-6)
    np.testing.assert_allclose(belief.focus_values[:, 0], grown.root_values, atol=1e-6)
    assert int(belief.walks) == int(grown.walks)
    assert int(belief.growing_walks) == int(grown.growing_walks)


def test_batched_equals_unbatched():
  game = sog.games.load("pgx/tic_tac_toe")
  searcher = pool.PoolGTCFR(game, pool.zero_pool_leaf_model(), types.GTCFRConfig(simulations=30))
  rngs = jax.random.split(jax.random.PRNGKey(3), 3)
  batch = searcher.search_batch(rngs)
  for i in range(3):
    one = searcher.search(rngs[i])
    np.testing.assert_array_equal(batch.tree.children[i], one.tree.children)
    np.testing.assert_allclose(batch.root_policy[i], one.root_policy, atol=1e-6)


def test_the_pool_searches_a_games_jax_definition_as_its_tables():
  """Connect Four's own JAX functions (boards.KInARow) and its enumerated tables drive the same
  search: the same grown tree, root policy and values from the same seed."""
  game = load(_C4)
  config = types.GTCFRConfig(simulations=30, expansion_k=game.num_actions)
  model = pool.zero_pool_leaf_model()
  on_tables = pool.PoolGTCFR(_NodeIndexGame(game.tree), model, config).search(jax.random.PRNGKey(4))
  on_rules = pool.PoolGTCFR(game.public_game, model, config).search(jax.random.PRNGKey(4))
  assert int(on_rules.tree.num_nodes) == int(on_tables.tree.num_nodes)
  np.testing.assert_array_equal(on_rules.tree.children, on_tables.tree.children)
  np.testing.assert_allclose(on_rules.root_policy, on_tables.root_policy, atol=1e-6)
  np.testing.assert_allclose(on_rules.root_values, on_tables.root_values, atol=1e-6)


def _play(game, actions):
  state = game.root()
  for action in actions:
    state = game.child(state, jnp.int32(action))
  return state


@pytest.mark.parametrize("mover_wins", [True, False])
def test_pgx_search_finds_the_win(mover_wins):
  """x (player 0) has 0 and 1, o has 3 and 4: x wins at 2. With o to move instead (one more x move
  elsewhere, at 8), o wins at 5. The search from there plays the win and values it +1 for the
  mover."""
  game = sog.games.load("pgx/tic_tac_toe")
  moves = [0, 3, 1, 4] if mover_wins else [0, 3, 1, 4, 8]
  root = _play(game, moves)
  mover = int(game.kind(root))
  searcher = pool.PoolGTCFR(game, pool.zero_pool_leaf_model(), types.GTCFRConfig(simulations=100))
  result = searcher.search(jax.random.PRNGKey(0), root)
  win = 2 if mover == 0 else 5
  assert int(np.argmax(result.root_policy)) == win
  assert float(result.root_policy[win]) > 0.9
  assert float(result.root_values[mover]) > 0.9


@pytest.mark.parametrize(
  "name,spiel", [("tic_tac_toe", "tic_tac_toe"), ("connect_four", "connect_four")]
)
def test_pgx_games_agree_with_openspiel(name, spiel):
  """Random games: the same legal actions, the same player to move, the same end and utility."""
  game = pgx_games.load(pgx_games.PREFIX + name)
  step, kind = jax.jit(game.child), jax.jit(game.kind)
  legal = jax.jit(lambda state: game.legal(state)[0])
  rng = np.random.default_rng(0)
  for _ in range(5):
    state, spiel_state = game.root(), pyspiel.load_game(spiel).new_initial_state()
    while not spiel_state.is_terminal():
      assert int(kind(state)) == spiel_state.current_player()
      assert np.flatnonzero(np.asarray(legal(state))).tolist() == spiel_state.legal_actions()
      action = int(rng.choice(spiel_state.legal_actions()))
      state, _ = step(state, jnp.int32(action)), spiel_state.apply_action(action)
    assert int(kind(state)) == public_game.TERMINAL
    assert float(game.utility(state)[0, 0]) == spiel_state.returns()[0]


@pytest.mark.parametrize(
  "name,problem",
  [
    ("pgx/go_7x7", "unknown pgx game"),
    ("pgx/backgammon", "chance"),
    ("pgx/sparrow_mahjong", "three players"),
    ("pgx/minatar-breakout", "one player"),
    ("pgx/leduc_holdem", "imperfect information"),
  ],
)
def test_bad_pgx_games_are_refused(name, problem):
  with pytest.raises(ValueError, match=problem):
    sog.games.load(name)


def test_pgx_games_are_listed_and_not_enumerated():
  assert "pgx/connect_four" in sog.games.registered_games()
  assert sog.games.load("pgx/connect_four").num_actions == 7
  assert sog.games.canonical_name(" pgx/connect_four") == "pgx/connect_four"
  with pytest.raises(ValueError, match="never enumerated"):
    sog.games.registry.load_enumerated("pgx/connect_four", "exact exploitability")
  refused = subprocess.run(
    [sys.executable, "scripts/evaluate.py", "--game=pgx/connect_four"],
    cwd=ROOT,
    capture_output=True,
    text=True,
  )
  assert refused.returncode != 0 and "ValueError: pgx/connect_four is a pgx game" in refused.stderr
  assert refused.stderr.count("Traceback") == 1


@pytest.mark.parametrize("name", ["pgx/tic_tac_toe", "pgx/connect_four"])
def test_pgx_games_keep_the_interface_on_random_paths(name):
  """A pgx game is declared not enumerable, and random paths through its functions keep the
  interface's contract state by state and end within its max_moves (conformance.check_walks)."""
  game = sog.games.load(name)
  assert not game.enumerable and game.max_moves == {"pgx/tic_tac_toe": 9}.get(name, 42)
  conformance.check_walks(game, walks=4)
  too_short = copy.copy(game)
  too_short.max_moves = 4  # a game of either board lasts at least 5 moves
  with pytest.raises(ValueError, match="runs past max_moves = 4"):
    conformance.check_walks(too_short, walks=1)


def test_capacity_too_small_is_refused():
  game = sog.games.load("pgx/tic_tac_toe")
  config = types.GTCFRConfig(simulations=100, expansion_k=2)
  assert pool.node_capacity(9, config, 2) == 1 + 9 + 200
  with pytest.raises(ValueError, match="too small for s=100, k=2"):
    pool.PoolGTCFR(game, pool.zero_pool_leaf_model(), config, capacity=150)
  model = pool.zero_pool_leaf_model()
  with pytest.raises(ValueError, match="too small for s=100, k=2"):  # the pure search checks too
    pool.search(game, model.apply, None, jax.random.PRNGKey(0), game.root(), config, 150, 2, 10)


def test_terminal_root_is_refused():
  game = sog.games.load("pgx/tic_tac_toe")
  searcher = pool.PoolGTCFR(game, pool.zero_pool_leaf_model(), types.GTCFRConfig(simulations=5))
  with pytest.raises(ValueError, match="terminal"):
    searcher.search(jax.random.PRNGKey(0), _play(game, [0, 3, 1, 4, 2]))


def test_query_sample_holds_distinct_frontier_leaves():
  """Queries are states the search's passes valued at its frontier, each at most once."""
  game = sog.games.load("pgx/connect_four")
  config = types.GTCFRConfig(simulations=30, query_samples=16)
  result = pool.PoolGTCFR(game, pool.zero_pool_leaf_model(), config).search(jax.random.PRNGKey(0))
  assert bool(result.query_valid.all())
  boards = np.asarray(result.query_states.observation).reshape(16, -1)
  assert len({board.tobytes() for board in boards}) == 16
  kinds = np.asarray(jax.vmap(game.kind)(result.query_states))
  assert (kinds != public_game.TERMINAL).all()


def test_the_pool_refuses_imperfect_information():
  with pytest.raises(
    ValueError, match=r"perfect-information sog.games.PublicGame .* got kuhn_poker"
  ):
    pool.PoolGTCFR(load("kuhn_poker").public_game, pool.zero_pool_leaf_model())


def test_alphazero_peer_finds_the_win():
  """mctx's search with the zero leaf, from the position of test_pgx_search_finds_the_win."""
  game = sog.games.load("pgx/tic_tac_toe")
  root = jax.tree.map(lambda x: x[None], _play(game, [0, 3, 1, 4]))
  searcher = alphazero.AlphaZero(game, pool.zero_pool_leaf_model(), 100)
  weights = np.asarray(searcher.search(jax.random.PRNGKey(0), root).action_weights[0])
  assert int(np.argmax(weights)) == 2 and weights[2] > 0.5


def test_play_script_on_a_pgx_game():
  """play.py's pgx path: SoG on the pool against mctx, and its JSON line; mctx refused on a table
  game with a ValueError naming the valid opponents."""

  def run(*args):
    return subprocess.run(
      [sys.executable, "scripts/play.py", *args], cwd=ROOT, capture_output=True, text=True
    )

  done = run("--game=pgx/tic_tac_toe", "--leaf=zeros", "--sims=10", "--opponent=mctx", "--games=2")
  assert done.returncode == 0, done.stderr
  record = json.loads(done.stdout.strip().splitlines()[-1])
  assert record["game"] == "pgx/tic_tac_toe" and record["games"] == 2
  assert record["wins"] + record["draws"] + record["losses"] == 2
  assert record["sample"] is False  # perfect information: the most probable action by default
  refused = run("--game=kuhn_poker", "--leaf=zeros", "--opponent=mctx", "--games=1")
  assert (
    refused.returncode != 0 and "ValueError: --opponent=mctx plays pgx games only" in refused.stderr
  )


def test_bench_search_times_perfect_information_games():
  """bench_search on a pgx game and on an enumerated perfect-information game (timed against MCTS,
  not IS-MCTS, which refuses them): its JSON line has each game's seconds and cost ratio."""
  done = subprocess.run(
    [
      sys.executable,
      "scripts/bench_search.py",
      "--games=pgx/tic_tac_toe,connect_four",
      "--sims=10",
      "--batch=2",
      "--repeats=1",
    ],
    cwd=ROOT,
    capture_output=True,
    text=True,
  )
  assert done.returncode == 0, done.stderr
  record = json.loads(done.stdout.strip().splitlines()[-1])
  for game in ("pgx/tic_tac_toe", "connect_four"):
    row = record[game]["SoG(10,1)"]
    assert row["seconds_per_search"] > 0 and row["cost_ratio"] > 0 and row["peer_seconds"] > 0
  assert record["connect_four"]["SoG(10,1)"]["leaf"] == "untrained"  # the default
  assert record["pgx/tic_tac_toe"]["SoG(10,1)"]["mctx_seconds_per_search"] > 0
