"""The real Scotland Yard board (``scotland_yard(map=london)``) and the full rules: a reference
written here from the rules, move by move against sog's JAX rules and the OpenSpiel bridge; a small
map with every option, exact against OpenSpiel and the same game in both action layouts."""

import copy
import functools
import json

import jax
import numpy as np
import pyspiel
import pytest

from sog import openspiel as openspiel_bridge
import sog.eval
import sog.games
from sog.games import conformance
from sog.games import public_game
from sog.games import scotland_yard_map
from sog.search import agent as agent_lib
from sog.search import leaf_models
from sog.search import pimc
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_paths
from sog.search.pool import belief_search
from sog.search.pool import beliefs

_LONDON = json.loads((scotland_yard_map.MAPS_DIR / "london.json").read_text())


class ReferenceGame:
  """Scotland Yard from its rules, in plain Python, 1-based stations, written apart from sog's
  definition: moves are (ticket, destination, double) with ticket a transport's name or "black"."""

  def __init__(self, data: dict, mr_x: int):
    self.data = data
    self.links: dict[int, set[tuple[str, int]]] = {s: set() for s in range(1, data["stations"] + 1)}
    for a, b, transport in data["edges"]:
      self.links[a].add((transport, b))
      self.links[b].add((transport, a))
    self.mr_x = mr_x
    self.detectives: list[int] = []
    count = data.get("detectives", len(data["detective_starts"]))
    self.tickets = [dict(data["detective_tickets"]) for _ in range(count)]
    self.mr_x_tickets = {**data["mr_x_tickets"], "black": data.get("mr_x_black_tickets", 0)}
    self.doubles = data.get("mr_x_double_moves", 0)
    self.moves_made = 0  # Mr X's moves, each a round
    self.doubling = False
    self.turn = 0  # 0: Mr X, k: detective k
    self.revealed: int | None = None
    self.outcome: str | None = None

  def start_cards(self) -> list[int]:
    return [c for c in self.data["detective_starts"] if c != self.mr_x and c not in self.detectives]

  def draw(self, card: int) -> None:
    assert card in self.start_cards()
    self.detectives.append(card)

  def mr_x_moves(self) -> set[tuple[str, int, bool]]:
    moves = set()
    for transport, b in self.links[self.mr_x]:
      if b in self.detectives:
        continue
      if self.mr_x_tickets.get(transport, 0) > 0:
        moves.add((transport, b))
      if self.mr_x_tickets["black"] > 0:
        moves.add(("black", b))
    may_double = (
      self.doubles > 0 and not self.doubling and self.moves_made + 2 <= self.data["rounds"]
    )
    return {(t, b, d) for t, b in moves for d in ([False, True] if may_double else [False])}

  def detective_moves(self) -> set[tuple[str, int, bool]]:
    k = self.turn - 1
    return {
      (t, b, False)
      for t, b in self.links[self.detectives[k]]
      if self.tickets[k].get(t, 0) > 0 and b not in self.detectives[:k] + self.detectives[k + 1 :]
    }

  def play(self, move: tuple[str, int, bool] | None) -> None:
    """A move from the mover's legal moves, or None (pass) when it has none."""
    rounds = self.data["rounds"]
    if self.turn == 0:
      if move is None:
        self.outcome = "caught"
        return
      ticket, b, double = move
      self.mr_x_tickets[ticket] -= 1
      self.mr_x = b
      self.moves_made += 1
      if self.moves_made in self.data["reveal_rounds"]:
        self.revealed = b
      if double:
        self.doubles -= 1
      self.doubling = double
      self.turn = 0 if double else 1
      return
    k = self.turn - 1
    if move is not None:
      ticket, b, _ = move
      self.tickets[k][ticket] -= 1
      if self.data.get("tickets_to_mr_x", False):
        self.mr_x_tickets[ticket] += 1
      self.detectives[k] = b
      if b == self.mr_x:
        self.outcome = "caught"
        return
    if self.turn < len(self.tickets):
      self.turn += 1
    elif self.moves_made == rounds:
      self.outcome = "escaped"
    else:
      self.turn = 0


def _public_draw(reference: ReferenceGame, cards: list[int]) -> list[float]:
  """The public probability of drawing each card next: over Mr X's starts, each weighed by how
  likely the draws so far were with him there (the cards never include his station)."""

  def left(x: int, drawn: list[int]) -> list[int]:
    return [c for c in reference.data["detective_starts"] if c != x and c not in drawn]

  posterior = {}
  for x in reference.data["mr_x_start"]:
    weight = 1.0
    for i, card in enumerate(reference.detectives):
      cards_left = left(x, reference.detectives[:i])
      weight *= 1 / len(cards_left) if card in cards_left else 0.0
    posterior[x] = weight
  total = sum(posterior.values())
  return [
    sum(
      weight / total * (card in left(x, reference.detectives)) / len(left(x, reference.detectives))
      for x, weight in posterior.items()
    )
    for card in cards
  ]


def _decode(game, station: int, action: int) -> tuple[str, int, bool] | None:
  """(ticket, 1-based destination, double) of an action at a 0-based station; None for PASS."""
  if action == game.pass_action:
    return None
  m, table = game.map, game.actions
  ticket = int(table.ticket[station, action])
  name = m.transports[ticket] if ticket < len(m.transports) else "black"
  return name, int(table.destination[station, action]) + 1, bool(table.double[station, action])


class OurGame:
  """sog's JAX rules stepped one public state and Mr X's station at a time."""

  def __init__(self, game):
    self.game = game
    self.legal = jax.jit(game.legal)
    self.transitions = jax.jit(game.transitions)
    self.child = jax.jit(game.child)
    self.kind = jax.jit(game.kind)

  def moves(self, state, mr_x: int) -> dict[tuple[str, int, bool] | None, int]:
    """{move: action} for the mover (Mr X at ``mr_x``, 0-based, or the moving detective)."""
    mover = int(state.mover)
    station = mr_x if mover == 0 else int(state.detectives[mover - 1])
    legal = np.asarray(self.legal(state))[mr_x if mover == 0 else 0]
    return {_decode(self.game, station, int(a)): int(a) for a in np.flatnonzero(legal)}

  def play(self, state, mr_x: int, action: int):
    """The public child and Mr X's station after ``action``."""
    t = self.transitions(state)
    mr_x_moves = int(state.mover) == 0
    infostate = mr_x if mr_x_moves else 0
    slot = int(t.child[infostate, action, mr_x])
    return self.child(state, slot), int(t.next_infostate[mr_x, action]) if mr_x_moves else mr_x


def _same_public_state(ours, reference: ReferenceGame, game) -> None:
  m = game.map
  unplaced = len(reference.tickets) - len(reference.detectives)
  assert np.asarray(ours.detectives).tolist() == [s - 1 for s in reference.detectives] + [-1] * (
    unplaced
  )
  transports = list(m.transports)
  for k, tickets in enumerate(reference.tickets):
    assert np.asarray(ours.detective_tickets[k]).tolist() == [tickets.get(t, 0) for t in transports]
  assert np.asarray(ours.mr_x_tickets).tolist() == [
    reference.mr_x_tickets.get(t, 0) for t in transports
  ] + [reference.mr_x_tickets["black"]]
  assert int(ours.double_moves) == reference.doubles
  assert int(ours.last_reveal) == (-1 if reference.revealed is None else reference.revealed - 1)


def _random_game(
  seed: int,
  our_game: OurGame,
  bridge_game=None,
  max_moves: int | None = None,
  hoarding: bool = False,
):
  """Plays one random game through the reference, our rules and (optionally) the bridge, checking
  after every move that they agree; returns the reference's outcome and the moves made. A hoarding
  Mr X keeps his black tickets and double moves for the last rounds."""
  rng = np.random.default_rng(seed)
  game = our_game.game
  start = int(rng.choice(game.map.mr_x_starts)) + 1
  reference = ReferenceGame(_LONDON, start)
  state, mr_x = game.root(), start - 1
  bridge = None
  if bridge_game is not None:
    bridge = bridge_game.new_initial_state()
    bridge.apply_action(start - 1)
  moves = 0
  while reference.outcome is None and (max_moves is None or moves < max_moves):
    kind = int(our_game.kind(state))
    if len(reference.detectives) < len(reference.tickets):
      assert kind == public_game.CHANCE
      t = our_game.transitions(state)
      cards = np.asarray(game.map.detective_starts)
      present = np.flatnonzero(np.asarray(t.present)[: len(cards)])
      likelihood = np.asarray(t.likelihood)[present, mr_x, 0]
      expected = reference.start_cards()
      assert sorted(cards[present][likelihood > 0] + 1) == sorted(expected)
      np.testing.assert_allclose(likelihood[likelihood > 0], 1 / len(expected), rtol=1e-6)
      public = _public_draw(reference, cards[present] + 1)
      np.testing.assert_allclose(np.asarray(t.probability)[present], public, rtol=1e-5)
      card = int(rng.choice(expected))
      reference.draw(card)
      slot = int(np.flatnonzero(cards == card - 1)[0])
      state = our_game.child(state, slot)
      if bridge is not None:  # the bridge's chance action is the card's slot
        assert sorted(cards[bridge.legal_actions()] + 1) == sorted(expected)
        bridge.apply_action(slot)
    else:
      assert kind == (public_game.PLAYER_0 if reference.turn == 0 else public_game.PLAYER_1)
      expected = reference.mr_x_moves() if reference.turn == 0 else reference.detective_moves()
      ours = our_game.moves(state, mr_x)
      assert set(ours) == (expected or {None}), (seed, moves)
      choices = sorted(expected, key=str)
      if hoarding and reference.moves_made < _LONDON["rounds"] - 3:
        choices = [m for m in choices if m[0] != "black" and not m[2]] or choices
      choice = choices[rng.integers(len(choices))] if choices else None
      if bridge is not None:
        assert sorted(bridge.legal_actions()) == sorted(ours.values())
        bridge.apply_action(ours[choice])
      reference.play(choice)
      state, mr_x = our_game.play(state, mr_x, ours[choice])
      assert mr_x == reference.mr_x - 1
    moves += 1
    _same_public_state(state, reference, game)
    if reference.outcome is not None:
      status = {"caught": -1.0, "escaped": 1.0}[reference.outcome]
      assert int(our_game.kind(state)) == public_game.TERMINAL
      assert float(game.utility(state)[mr_x, 0]) == status
      if bridge is not None:
        assert bridge.is_terminal() and bridge.returns() == [status, -status]
  return reference, moves


@pytest.fixture(scope="module")
def london():
  return OurGame(sog.games.load("scotland_yard(map=london)").public_game)


def test_london_is_the_board_of_the_data_file(london):
  game = london.game
  m = game.map
  assert m.num_stations == 199 and m.num_detectives == 5 and m.rounds == 24
  counts = m.adjacency().sum((1, 2)) // 2
  assert dict(zip(m.transports, counts.tolist(), strict=True)) == {
    "taxi": 346,
    "bus": 99,
    "underground": 20,
    "water": 3,
  }
  # Mr X's moves from his infostate, single and double, fit in a few dozen actions.
  assert game.num_actions == 2 * (13 + 13) + 1
  assert not game.enumerable
  with pytest.raises(ValueError, match="not enumerable"):
    _ = sog.games.load("scotland_yard(map=london)").tree


def test_random_london_games_follow_the_reference_rules_move_by_move(london):
  """Whole games, every move drawn uniformly from the reference's legal moves (half of them with
  a Mr X who keeps his black tickets and double moves to the last rounds, where the round limit
  bars a double move): the same legal moves, public state, Mr X station and outcome in sog's
  rules."""
  uses = {"black": 0, "double": 0, "last round with a double move left": 0}
  for seed in range(8):
    reference, moves = _random_game(seed, london, hoarding=seed % 2 == 1)
    assert reference.outcome is not None and moves > 5
    uses["black"] += _LONDON["mr_x_black_tickets"] - reference.mr_x_tickets["black"]
    uses["double"] += _LONDON["mr_x_double_moves"] - reference.doubles
    uses["last round with a double move left"] += reference.moves_made == 24 and reference.doubles
  assert min(uses.values()) > 0, uses


def test_the_openspiel_bridge_plays_london_as_our_rules_do(london):
  """A whole game through the OpenSpiel bridge (a hoarding Mr X): the same start draws, legal
  actions, states and returns as the reference and sog's rules."""
  bridge_game = pyspiel.load_game("sog_scotland_yard(map=london)")
  reference, _ = _random_game(7, london, bridge_game, hoarding=True)
  assert reference.outcome == "escaped" and reference.moves_made == 24


def _harbour(tmp_path, actions: str, **options) -> str:
  """A small map with every option of the board's rules: two transports and a ferry, black
  tickets, a double move, tickets to Mr X, and a detective whose start is drawn from three start
  cards, one of them among Mr X's private starts (two rounds, 653 public states; ``options``
  override the map file's fields)."""
  data = {
    "name": f"harbour_{actions}",
    "stations": 7,
    "transports": ["taxi", "bus", "water"],
    "edges": [
      [1, 2, "taxi"],
      [2, 3, "taxi"],
      [3, 4, "taxi"],
      [4, 5, "taxi"],
      [5, 6, "taxi"],
      [6, 7, "taxi"],
      [2, 5, "bus"],
      [3, 6, "bus"],
      [1, 7, "water"],
      [2, 3, "bus"],
    ],
    "mr_x_start": [3, 4],
    "detective_starts": [1, 4, 6],
    "detectives": 1,
    "mr_x_tickets": {"taxi": 2, "bus": 1},
    "detective_tickets": {"taxi": 2, "bus": 1},
    "mr_x_black_tickets": 1,
    "mr_x_double_moves": 1,
    "tickets_to_mr_x": True,
    "rounds": 2,
    "reveal_rounds": [1],
    "actions": actions,
    **options,
  }
  path = tmp_path / f"harbour_{actions}.json"
  path.write_text(json.dumps(data))
  return f"scotland_yard(map={path})"


def test_every_option_of_the_board_is_exact_against_openspiel(tmp_path, rng):
  """The start draws' probabilities (which depend on Mr X's station) and the black, double and
  passed-on tickets, enumerated: our exploitability equals OpenSpiel's best response through the
  bridge for the uniform policy and random ones."""
  game = sog.games.load(_harbour(tmp_path, "by_station"))
  assert game.public_game.max_chance_outcomes == 3
  policies = [sog.eval.uniform_policy(game.tree)]
  policies += [sog.eval.random_policy(game.tree, rng)]
  for policy in policies:
    ours = sog.eval.exploitability(game, policy)
    theirs = openspiel_bridge.exploitability_in_openspiel(game, policy)
    assert abs(ours - theirs) < 1e-9, (ours, theirs)


def test_both_action_layouts_are_the_same_game(tmp_path, rng):
  """By station and by destination number a station's moves in the same order, so the trees
  match node for node with the k-th legal action of one the k-th of the other, and a policy
  carried over that way has the same exploitability."""
  by_station = sog.games.load(_harbour(tmp_path, "by_station"))
  by_destination = sog.games.load(_harbour(tmp_path, "by_destination"))
  a, b = by_station.tree, by_destination.tree
  assert a.num_actions < b.num_actions
  for field in ("kind", "parent", "valid", "payoff", "histories", "encoding", "chance_probability"):
    np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
  np.testing.assert_array_equal(a.legal.sum(-1), b.legal.sum(-1))
  policy = sog.eval.random_policy(b, rng)
  carried = np.zeros(a.legal.shape)
  carried[a.legal] = policy[b.legal]
  carried[~a.legal.any(-1)] = 1.0 / a.num_actions  # rows where nobody acts, as random_policy's
  expected = sog.eval.exploitability(by_destination, policy)
  assert sog.eval.exploitability(by_station, carried) == pytest.approx(expected, abs=1e-12)
  assert expected > 0


def test_the_board_and_every_option_pass_the_conformance_checks(tmp_path, london):
  """london on random paths (it is never enumerated), the small map with every option on its whole
  tree; both include each world's ``world_row`` against ``transitions`` at start draws, Mr X's
  moves and the detectives'."""
  conformance.check_walks(london.game, walks=2)
  sog.games.check_game(sog.games.load(_harbour(tmp_path, "by_station")))


def test_sog_grows_and_searches_the_board_and_pimc_plays_it(london):
  """The belief pool expands the board's public states from each world's own row: at Mr X's first
  move and at a detective's after it, the children it adds, their edges and their valid
  infostates are exactly those ``world_row`` gives the valid worlds one at a time (an
  implementation of the board's moves apart from ``transitions``), and each child's pair weight
  is ``along``'s bit for bit. SoG(4, 1) and PIMC(20, 2 worlds) search Mr X's first move and put
  their play on his legal moves only."""
  game = sog.games.load("scotland_yard(map=london)")
  pg = london.game
  path = [0, 1, 2, 3, 4]  # the first five start cards
  state, weight = belief_paths.along(pg, np.array(path))
  tree = beliefs.empty(pg, 400, root=state, weight=weight)
  add = jax.jit(lambda tree, node: beliefs.add_children(pg, tree, node, reserve=1))
  tree = add(tree, 0)
  tree = add(tree, 1)  # the first child: a detective moves
  along = jax.jit(lambda p: belief_paths.along(pg, p)[1])
  world_row = jax.jit(pg.world_row)
  for node in (0, 1):
    parent_state = jax.tree.map(lambda x, n=node: x[n], tree.states)
    kind, valid = int(tree.kind[node]), np.asarray(tree.valid[node])
    actor = min(kind, 1)
    expected: dict[int, tuple[set, set]] = {}  # slot: (the actor's (s, a), next infostates)
    for s0 in np.flatnonzero(valid[0]):
      row = world_row(parent_state, np.array([s0, 0]))
      own = (s0, 0)[actor]
      for a in np.flatnonzero(np.asarray(pg.legal(parent_state))[own]):
        edges, lands = expected.setdefault(int(row.child[a]), (set(), set()))
        edges.add((own, int(a)))
        lands.add(int(row.next_infostate[a]) if actor == 0 else int(s0))
    children = np.asarray(tree.children[node])
    assert {int(k) for k in np.flatnonzero(children >= 0)} == set(expected)
    for k, (edges, lands) in expected.items():
      child = int(children[k])
      assert {tuple(e) for e in np.argwhere(np.asarray(tree.edges[child]))} == edges
      assert set(np.flatnonzero(np.asarray(tree.valid[child, 0]))) == lands
      child_path = (*path, *beliefs.paths(tree)[child])
      np.testing.assert_array_equal(
        tree.pair_weight(child), along(belief_paths.padded_path(child_path, len(path) + 2))
      )
  config = types.GTCFRConfig(simulations=4)
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), config, capacity=2100)
  start = belief_search.root_start(pg, public_game.prior_ranges(pg)).replace(
    state=state, weight=weight
  )
  result = searcher.search_from(jax.random.key(0), start)
  assert int(result.nodes) > int(tree.num_nodes)
  legal, mr_x = np.asarray(pg.legal(state)), np.asarray(tree.valid[0, 0])
  policy = np.asarray(result.focus_policy)
  np.testing.assert_allclose(policy[mr_x].sum(-1), 1.0, rtol=1e-5)
  assert not (policy[mr_x] * ~legal[mr_x]).any()
  player = pimc.PIMC(game, simulations=20, worlds=2)
  station = 34  # Mr X at 35
  visits = player.visits(jax.random.key(0), [path], [station])[0]
  assert visits.sum() == 20 and (visits > 0).any() and not (visits[~legal[station]] > 0).any()


def _after(game, path):
  state = game.root()
  for slot in path:
    state = game.child(state, slot)
  return state


def _never_grown_whole(*args: object) -> None:
  raise AssertionError("a game too large to enumerate was grown whole")


def test_the_boards_default_pool_fits_pool_bytes_and_never_grows_the_whole_game(
  london, monkeypatch
):
  """The board's bound (1,991 child slots an expansion) would take hundreds of gigabytes: the
  default pool is the most slots whose search state fits ``POOL_BYTES``, as the state's shapes
  count it (one slot more does not fit), never below the root, the branch's children and the
  focus's, and the game is never grown whole to count it."""
  monkeypatch.setattr(beliefs, "_grown_size", _never_grown_whole)
  game, config = london.game, types.GTCFRConfig(simulations=400)
  capacity = belief_search.node_capacity(game, config)
  assert belief_search.first_expansion_bound(game, config) < capacity
  state_bytes = functools.partial(belief_search.state_bytes, game, config)
  assert state_bytes(capacity) <= belief_search.POOL_BYTES < state_bytes(capacity + 1)
  branch = public_game.decision_gap(game)
  assert branch == 7  # five start draws and Mr X's double move before the detectives' first
  smallest = belief_search.first_expansion_bound(game, config, branch)
  assert belief_search.node_capacity(game, config, branch_depth=branch) == smallest


def test_walks_refuse_a_decision_gap_the_rules_exceed(tmp_path):
  """On random walks through a map too large to enumerate, a declared gap shorter than the rules'
  (the harbour: the detective's first decision follows the start draw and Mr X's double move, 3
  moves) is refused, naming it."""
  game = sog.games.load(_harbour(tmp_path, "by_station", enumerable=False, rounds=3))
  conformance.check_walks(game.public_game)
  rules = copy.copy(game.public_game)
  rules.max_moves_between_decisions = 2
  with pytest.raises(ValueError, match="max_moves_between_decisions is 2 but a decision lies 3"):
    conformance.check_walks(rules)


def test_the_agent_plays_a_map_too_large_to_enumerate_after_a_double_move(tmp_path, monkeypatch):
  """On a map marked too large to enumerate (the harbour's rules: a drawn start, a double move),
  the SoG agent's re-solves branch over the most moves to its player's next decision
  (``decision_gap``: 3, the start draw and Mr X's double move before the detective's first), its
  pool is sized without growing the game whole, and it plays the detective's every decision of a
  game through the OpenSpiel bridge, the first after Mr X's double move, with legal moves; restarted
  mid-game, it refuses a decision further below the root than that, naming the rule."""
  monkeypatch.setattr(beliefs, "_grown_size", _never_grown_whole)
  game = sog.games.load(_harbour(tmp_path, "by_station", enumerable=False, rounds=3))
  assert public_game.decision_gap(game.public_game) == 3 < game.max_moves
  agent = agent_lib.SoGAgent(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=4))
  assert agent.searcher.branch_depth == 3
  os_game = openspiel_bridge.openspiel_game(game)
  state, doubled, played = os_game.new_initial_state(), False, []
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(state.chance_outcomes()[0][0])
    elif state.current_player() == 0:  # Mr X: a double move first, then his first legal move
      moves = state.legal_actions()
      if not doubled:
        doubles = [a for a in moves if state.child(a).current_player() == 0]
        assert doubles, "Mr X has a double move at his first decision"
        moves, doubled = doubles, True
      state.apply_action(moves[0])
    else:
      world = openspiel_bridge.locate(game, state)
      action, _ = agent.act(world.path, world.infostates[1], jax.random.PRNGKey(len(played)))
      assert action in state.legal_actions()
      played.append((world.path, world.infostates[1]))
      state.apply_action(action)
  assert len(played) >= 2
  agent.reset()  # a bot restarted mid-game: its next decision lies 5 moves below the root
  with pytest.raises(ValueError, match="more than the game's max_moves_between_decisions = 3"):
    agent.act(*played[-1], jax.random.PRNGKey(0))
