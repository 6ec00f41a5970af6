"""A game written outside the package: registered by name, checked, solved, searched, evaluated by
the protocol and trained by self-play; and the registry's errors for bad registrations."""

import copy
import json
import re
import subprocess
import sys

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog import search
import sog.eval
import sog.games
from sog.games import builder
from sog.games import conformance
from sog.games import registry
from sog.nets import checkpoint
from sog.nets import cvpn
from sog.nets import leaf as leaf_lib
from sog.protocol import composed
from sog.search import pool
from sog.selfplay import actor
from sog.selfplay import config as config_lib
from sog.selfplay import run
from tests.conftest import ROOT

PASS, PLAY = 0, 1
FOLD, CALL = 0, 1
HEADS, TAILS = 0, 1


class CoinShowdown(sog.games.PublicGame):
  """Each player holds one of ``cards`` distinct cards. Player 0 passes (losing 1) or plays; a
  public coin is tossed; player 1 folds (losing 1) or calls, and the showdown for 2 goes to the high
  card on heads and to the low card on tails. Small, with private information and public chance.

  The public state is the history ([3] int32, -1 after its end); child k is action k below a player
  node and coin side k below the chance node.
  """

  num_actions, max_children, max_chance_outcomes, encoding_size = 2, 2, 2, 5
  utility_scale = 2.0  # the showdown

  def __init__(self, cards: int = 3):
    self.cards, self.name = cards, f"coin_showdown(cards={cards})"
    self.num_infostates = (cards, cards)

  def deal(self) -> np.ndarray:
    deal = 1.0 - np.eye(self.cards)
    return deal / deal.sum()

  def root(self) -> chex.Array:
    return jnp.full(3, -1, jnp.int32)

  def kind(self, state):
    length = (state >= 0).sum()
    kinds = jnp.array(
      [sog.games.PLAYER_0, sog.games.CHANCE, sog.games.PLAYER_1, sog.games.TERMINAL]
    )
    over = (length == 1) & (state[0] == PASS)
    return jnp.where(over, sog.games.TERMINAL, kinds[length]).astype(jnp.int32)

  def legal(self, state):
    acting = self.kind(state) < sog.games.CHANCE
    return jnp.broadcast_to(acting, (self.cards, 2))

  def transitions(self, state):
    legal = self.legal(state)
    chance = self.kind(state) == sog.games.CHANCE
    return sog.games.Transitions(
      present=legal[0] | chance,
      child=jnp.broadcast_to(jnp.arange(2)[None, :, None], (self.cards, 2, 1)),  # child k: action k
      next_infostate=jnp.broadcast_to(jnp.arange(self.cards)[:, None], (self.cards, 2)),
      probability=jnp.full(2, 0.5),
      likelihood=jnp.full((2, self.cards, self.cards), 0.5),  # the coin ignores the cards
    )

  def child(self, state, k):
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state):
    cards = jnp.arange(self.cards)
    high_wins = (cards[:, None] > cards[None, :]) == (state[1] == HEADS)
    showdown = jnp.where(high_wins, 2.0, -2.0)
    return jnp.where(state[0] == PASS, -1.0, jnp.where(state[2] == FOLD, 1.0, showdown))

  def encode(self, state):
    length = (state >= 0).sum()
    code = (jnp.arange(3) < length).astype(jnp.float32)
    side = jnp.zeros(2, jnp.float32).at[jnp.maximum(state[1], 0)].set((length > 1) * 1.0)
    return jnp.concatenate([code, side])


_CARDS = sog.games.GameParameter(int, 3, choices=(2, 3, 4))


@pytest.fixture(scope="module")
def coin_game():
  sog.games.register("coin_showdown", CoinShowdown, {"cards": _CARDS}, replace=True)
  return sog.games.load("coin_showdown")


def test_a_registered_game_loads_by_name_and_passes_the_conformance_checks(coin_game):
  assert "coin_showdown" in sog.games.registered_games()
  assert coin_game.name == "coin_showdown(cards=3)"
  assert sog.games.load("coin_showdown(cards=3)") is coin_game
  four = sog.games.load("coin_showdown(cards=4)")
  assert four.tree.size_summary()["public_states"] == 9  # root, pass, coin, 2 x (P1, fold, call)
  assert four.num_infostates == (4, 4)
  for game in (coin_game, four):
    sog.games.check_game(game)
  with pytest.raises(ValueError, match="valid choices: 2, 3, 4"):
    sog.games.load("coin_showdown(cards=5)")


def test_exploitability_on_a_registered_game_matches_a_hand_computation(coin_game):
  """Player 0 always plays and player 1 always calls: each deal wins one coin side and loses the
  other, so player 0's best response is worth 0 (playing 0 against passing -1). Player 1's best
  response folds (-1) where calling loses (-2: the low card on heads, the high card on tails) and
  calls elsewhere: (-1 + 2) / 2 for the low and the high card, 0 for the middle one, 1/3 in all.
  Exploitability (OpenSpiel's units) is (0 + 1/3) / 2 = 1/6. With pass and fold instead, each best
  response takes the antes: (1 + 1) / 2 = 1."""
  tree = coin_game.tree
  acting = tree.legal.any(-1, keepdims=True)
  play_and_call = np.where(acting, np.eye(2)[1], 0.0)
  assert sog.eval.exploitability(coin_game, play_and_call) == pytest.approx(1 / 6, abs=1e-12)
  pass_and_fold = np.where(acting, np.eye(2)[0], 0.0)
  assert sog.eval.exploitability(coin_game, pass_and_fold) == pytest.approx(1.0, abs=1e-12)


def test_solve_search_and_protocol_on_a_registered_game(coin_game):
  errors = [
    sog.eval.exploitability(coin_game, search.solve(coin_game, iterations=n).average_policy)
    for n in (10, 300)
  ]
  assert errors[1] < errors[0] and errors[1] < 1e-3
  searcher = search.GTCFR(
    coin_game,
    pool.belief_oracle.exact_leaf_model(coin_game, 50),
    search.GTCFRConfig(simulations=30, simulations_per_phase=1.0),
    branch_depth=coin_game.max_moves,
  )
  result = searcher.search(jax.random.PRNGKey(0))
  assert pool.completion.exploitability(coin_game.tree, result) < 0.05
  protocol = composed.compose(searcher, seeds=range(2), batch_size=1, tree=coin_game.tree)
  assert protocol.exploitability.shape == (2,)
  assert (protocol.exploitability < 0.1).all()


def test_a_users_game_is_searched_on_the_belief_pool_without_enumeration():
  """The game's functions alone (no tree built) grow the search; the tree grown whole is the
  enumerated one, and the search's policy, evaluated exactly there, is nearly an equilibrium."""
  game = CoinShowdown(cards=4)
  searcher = pool.GTCFR(
    game, search.zero_leaf_model(), search.GTCFRConfig(simulations=30, simulations_per_phase=0.2)
  )
  result = jax.tree.map(np.asarray, searcher.search(jax.random.PRNGKey(0)))
  assert bool(result.complete)
  tree = builder.build_public_tree(game)
  assert int(result.tree.num_nodes) == tree.num_nodes
  policy = tree.legal / tree.legal.sum(-1, keepdims=True)
  policy[pool.beliefs.tree_nodes(result.tree, tree)] = result.average_policy[: tree.num_nodes]
  assert sog.eval.exploitability(tree, policy) < 0.05


def test_a_short_self_play_run_on_a_registered_game(coin_game, tmp_path):
  config = config_lib.default_config_dict("coin_showdown", simulations=4)
  config.network.update(width=16, depth=1)
  config.selfplay.update(
    games=2, solver_batch=4, batch_size=16, min_replay=16, train_steps_per_round=2
  )
  config.evaluation.update(settings=((4, 1.0),), seeds=1, every_steps=0)
  config.max_steps = 12
  summary = run.train(config_lib.from_config_dict(config), tmp_path)
  assert summary["steps"] == 12 and summary["game"] == "coin_showdown(cards=3)"
  leaf = checkpoint.restore_leaf_model(tmp_path, "coin_showdown")
  assert leaf.game == "coin_showdown(cards=3)"


class _TooLarge(CoinShowdown):
  """CoinShowdown declared too large to enumerate: it gives its length, and nothing may build its
  tree."""

  enumerable, max_moves = False, 3  # play, the coin, call

  def __init__(self, cards: int = 4):
    super().__init__(cards)
    self.name = f"too_large_showdown(cards={cards})"


@pytest.fixture
def too_large():
  """The game registered (its conformance checks on random paths through its functions)."""
  sog.games.register("too_large_showdown", _TooLarge, {"cards": _CARDS}, replace=True)
  return sog.games.load("too_large_showdown")


def test_a_game_too_large_to_enumerate_is_self_played_from_its_functions_alone(
  too_large, tmp_path, monkeypatch
):
  """Self-played (actors, solver, trainer) and saved with no tree built, which every entry point
  that needs it refuses, naming what serves the game."""

  def refuse(game):
    raise AssertionError(f"{game.name} was enumerated")

  monkeypatch.setattr(builder, "build_public_tree", refuse)
  with pytest.raises(ValueError, match=r"not enumerable.*exact exploitability"):
    _ = too_large.tree
  with pytest.raises(ValueError, match=r"not enumerable.*scripts/evaluate\.py needs"):
    registry.load_enumerated(too_large.name, "scripts/evaluate.py")
  assert too_large.max_moves == 3 and too_large.num_infostates == (3, 3)
  for needs_the_tree in (
    lambda: sog.eval.exploitability(too_large, np.zeros((1, 3, 2))),
    lambda: search.solve(too_large, iterations=1),
    lambda: composed.compose(
      search.GTCFR(too_large, search.zero_leaf_model()), [0], tree=too_large.tree
    ),
  ):
    with pytest.raises(ValueError, match=r"not enumerable.*search it with sog\.search\.pool"):
      needs_the_tree()
  agent = search.SoGAgent(too_large, search.zero_leaf_model(), search.GTCFRConfig(simulations=4))
  _, policy = agent.act((), 2, jax.random.PRNGKey(0))  # the pool's agent: from the functions
  assert policy.sum() == pytest.approx(1.0)
  config = config_lib.default_config_dict("too_large_showdown", simulations=4)
  config.network.update(width=16, depth=1)
  config.selfplay.update(
    games=2, solver_batch=4, batch_size=16, min_replay=16, train_steps_per_round=2
  )
  config.evaluation.update(settings=((4, 1.0),), seeds=1, every_steps=0, keep_best=False)
  refused = {  # each of the three alone
    "evaluation.settings = ()": lambda c: None,
    "selfplay.random_queries = 0": lambda c: c.selfplay.update(random_queries=2),
    "diagnostics_every_steps = 0": lambda c: setattr(c, "diagnostics_every_steps", 5),
  }
  for message, change in refused.items():
    wrong = copy.deepcopy(config)
    if message != "evaluation.settings = ()":
      wrong.evaluation.update(settings=())
    change(wrong)
    with pytest.raises(ValueError, match=rf"not enumerable: set {re.escape(message)} \("):
      run.train(config_lib.from_config_dict(wrong), tmp_path / "refused")
  config.evaluation.update(settings=())
  config.max_steps = 12
  summary = run.train(config_lib.from_config_dict(config), tmp_path / "run")
  assert summary["steps"] == 12 and summary["queries_solved"] > 0 and summary["games"] > 0
  assert checkpoint.restore_leaf_model(tmp_path / "run", "too_large_showdown").game == (
    "too_large_showdown(cards=3)"
  )


def test_a_game_not_enumerated_plays_the_games_the_enumerated_one_plays(too_large, coin_game):
  """The actors on the game's functions alone (every search in one pool, the branch as long as the
  game) and on the same game enumerated (pools sized to each subgame, the branch from the tree):
  the same searches, so the same examples and queries, move for move (float64)."""
  experiment = config_lib.from_config_dict(
    config_lib.default_config_dict("coin_showdown(cards=3)", simulations=6)
  )
  with jax.enable_x64(True):
    network = cvpn.make_network(too_large.public_game, experiment.network)
    params = cvpn.init_params(network, too_large.public_game, jax.random.PRNGKey(0))
    played = []
    for game in (too_large, coin_game):
      model = leaf_lib.cvpn_leaf_model(network, params, game.name)
      pools = actor.pools_for(game, model, experiment.actor, jnp.float64)
      actors = actor.Actors(game, pools, experiment.selfplay)
      actors.restart(jax.random.PRNGKey(1))
      rng, moves = np.random.default_rng(2), []
      for move in range(4):
        moves.append(actors.play(params, jax.random.PRNGKey(10 + move), rng))
      played.append((pools, moves))
  (alone, moves), (sized, enumerated_moves) = played
  assert alone.tree is None and alone.searcher.branch_depth == 3
  assert sized.searcher.branch_depth < 3
  assert sum(ended for _, _, ended in moves) > 0
  for (examples, queries, ended), (other, other_queries, other_ended) in zip(
    moves, enumerated_moves, strict=True
  ):
    assert ended == other_ended and (examples is None) == (other is None)
    if examples is not None:
      chex.assert_trees_all_close(examples, other, atol=1e-9)
    chex.assert_trees_all_close(queries, other_queries, atol=1e-9)


class _PastItsLength(_TooLarge):
  max_moves = 1


class _NoLength(_TooLarge):
  max_moves = None


class _NotALength(_TooLarge):
  max_moves = True


class _IllegalForNoCard(_TooLarge):
  def __init__(self, cards: int = 4):
    super().__init__(cards)
    self.num_infostates = (3, 4)  # player 0 holds one of 3 cards, yet legal gives 4 rows

  def deal(self) -> np.ndarray:
    deal = 1.0 - np.eye(3, 4)
    return deal / deal.sum()


@pytest.mark.parametrize(
  "game, message",
  [
    (_PastItsLength, "runs past max_moves = 1 moves"),
    (_NoLength, "a game that is not enumerable must give max_moves"),
    (_NotALength, "max_moves must be a positive int or None, got True"),
    (_IllegalForNoCard, "an action is legal for infostate 3, which player 0 does not have"),
    (lambda: _rename(_BadChance(), "bad_chance"), "sum to 1, got \\[0.4, 0.4\\]"),
  ],
)
def test_a_game_too_large_to_enumerate_is_refused_where_its_functions_break_the_contract(
  game, message
):
  broken = game()
  if isinstance(broken, _TooLarge):
    broken.name = "broken"
  else:  # the chance check on random paths, not on the tree
    broken.enumerable, broken.max_moves = False, 3
  before = sog.games.registered_games()
  with pytest.raises(ValueError, match=message):
    sog.games.register(broken.name, lambda broken=broken: broken)
  assert sog.games.registered_games() == before


def test_one_card_poker_with_three_cards_is_kuhn_poker():
  """The example module (examples/one_card_poker.py, the docs' walk-through) registers a game that,
  with three cards, is Kuhn poker: the same tables, and CFR+ gives the same average policy."""
  sog.games.import_game_modules([str(ROOT / "examples" / "one_card_poker.py")])
  ours, kuhn = sog.games.load("one_card_poker(cards=3)"), sog.games.load("kuhn_poker")
  for field in ("kind", "parent", "legal", "valid", "payoff", "encoding", "root_ranges"):
    np.testing.assert_array_equal(getattr(ours.tree, field), getattr(kuhn.tree, field))
  np.testing.assert_allclose(
    search.solve(ours, iterations=50).average_policy,
    search.solve(kuhn, iterations=50).average_policy,
    atol=1e-6,
  )
  assert sog.games.load("one_card_poker").num_infostates == (4, 4)


def test_scripts_and_configs_take_a_game_module():
  out = subprocess.run(
    [
      sys.executable,
      "scripts/describe_game.py",
      "--game_module=examples/one_card_poker.py",
      "--game=one_card_poker(cards=5)",
    ],
    cwd=ROOT,
    capture_output=True,
    text=True,
    check=True,
  )
  summary = json.loads(out.stdout.strip().splitlines()[-1])
  assert summary["infostates"] == [10, 10]  # 5 cards at each of a player's 2 decision states
  config = config_lib.default_config_dict("one_card_poker(cards=6)")
  config.game_modules = (str(ROOT / "examples" / "one_card_poker.py"),)
  assert config_lib.from_config_dict(config).load_game().num_infostates == (6, 6)
  config.game_modules = ("no_such_module_of_games",)
  with pytest.raises(ValueError, match="no_such_module_of_games"):
    config_lib.from_config_dict(config)


class _NoLegalAction(CoinShowdown):
  def legal(self, state):
    return super().legal(state).at[1].set(False)  # card 1 cannot act


class _BadChance(CoinShowdown):
  def transitions(self, state):
    return super().transitions(state).replace(probability=jnp.full(2, 0.4))


@pytest.mark.parametrize(
  "args, message",
  [
    (("Bad-Name", CoinShowdown), "is invalid"),
    (("kuhn_poker", CoinShowdown), "already registered"),
    (("bad_factory", "not callable"), "must be callable"),
    (
      ("bad_default", CoinShowdown, {"cards": sog.games.GameParameter(int, 9, (2, 3))}),
      "default 9 is not among",
    ),
    (("bad_parameter", CoinShowdown, {"cards": 3}), "GameParameter"),
    (("wrong_name", CoinShowdown), "must carry its canonical name, 'wrong_name'"),
    (("not_a_game", lambda: object()), "returned object, not a sog.games.PublicGame"),
    (("no_legal_action", lambda: _rename(_NoLegalAction(), "no_legal_action")), "no legal action"),
    (("bad_chance", lambda: _rename(_BadChance(), "bad_chance")), "sum to 1, got \\[0.4, 0.4\\]"),
    (
      ("bad_kind", CoinShowdown, {"cards": sog.games.GameParameter(float, 3, (2, 3))}),
      "must have kind int, float or str and a default of that kind",
    ),
    (
      ("bad_signature", lambda: CoinShowdown(), {"cards": _CARDS}),
      "loading the game at its default parameters failed: TypeError",
    ),
  ],
)
def test_bad_registrations_raise_clear_errors_and_leave_the_registry_as_it_was(args, message):
  before = sog.games.registered_games()
  with pytest.raises(ValueError, match=message):
    sog.games.register(*args)
  assert sog.games.registered_games() == before


def test_a_name_is_registered_once_unless_replaced(coin_game):
  with pytest.raises(ValueError, match="replace=True"):
    sog.games.register("coin_showdown", CoinShowdown, {"cards": _CARDS})
  kuhn = sog.games.load("kuhn_poker")
  sog.games.register("coin_showdown", CoinShowdown, {"cards": _CARDS}, replace=True)
  assert sog.games.load("kuhn_poker") is kuhn  # other games stay loaded
  assert sog.games.load("coin_showdown") is not coin_game  # the replaced one is built again
  with pytest.raises(ValueError, match="no such file"):
    registry.import_game_modules(["examples/no_such_game.py"])
  with pytest.raises(ValueError, match="a list of module names"):
    registry.import_game_modules("examples/one_card_poker.py")


def _rename(game, name):
  game.name = name
  return game


def test_the_conformance_checks_refuse_what_is_not_a_loaded_game():
  with pytest.raises(ValueError, match="takes a loaded game"):
    conformance.check_game("kuhn_poker")
