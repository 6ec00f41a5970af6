"""The public-state game interface (:class:`sog.games.PublicGame`): enumeration walks it into the
same tables the rules protocol gave (digests recorded from the rules-protocol definitions at commit
22f0587, before Kuhn and Leduc moved to the interface), its functions run under ``jit`` and
``vmap``, a user's game written against it loads by name, and a game that breaks the interface's
contract is refused with a ``ValueError`` naming the broken rule."""

import dataclasses
import hashlib
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sog.games
from sog.games import builder
from sog.games import public_rules
from tests.conftest import ROOT
from tests.conftest import TIC_TAC_TOE
from tests.test_register import _CARDS
from tests.test_register import CoinShowdown

_DIGESTS = json.loads((ROOT / "tests/fixtures/enumerated_tree_digests.json").read_text())


def tree_digest(tree: sog.games.PublicTree) -> dict[str, str]:
  """A short SHA-256 of every field of a public tree (arrays with their dtype and shape)."""
  digest = {}
  for field in dataclasses.fields(tree):
    value = getattr(tree, field.name)
    if isinstance(value, np.ndarray):
      h = hashlib.sha256(f"{value.dtype}{value.shape}".encode())
      h.update(np.ascontiguousarray(value).tobytes())
    else:
      h = hashlib.sha256(repr(value).encode())
    digest[field.name] = h.hexdigest()[:16]
  return digest


@pytest.mark.parametrize(
  "name",
  [
    "kuhn_poker",
    "leduc_poker",
    "sequential_rps",
    "liars_dice(faces=4)",
    "liars_dice(faces=5)",
    "scotland_yard(map=glasses_short)",
    "scotland_yard(map=glasses_hidden_short)",
    "connect_four",
    TIC_TAC_TOE,
  ],
)
def test_enumerated_tables_equal_the_recorded_ones(name):
  """Bit for bit: every array, path and size of the public tree (the games written against the
  interface walk their JAX definitions; Scotland Yard guards the tables until it moves too).
  Sequential RPS's paths name child slots now, where its rules named the observations "ready" and
  "hidden"."""
  game = sog.games.load(name)
  digest, recorded = tree_digest(game.tree), dict(_DIGESTS[game.name])
  if name == "sequential_rps":
    del digest["paths"], recorded["paths"]
    assert game.tree.paths == ((), (0,), (0, 0), (0, 0, 0), (0, 0, 1), (0, 0, 2))
  assert digest == recorded


class PublicCoinShowdown(sog.games.PublicGame):
  """tests.test_register's CoinShowdown written against the public-state interface: the state is
  the history ([3] int32, -1 after its end); child k is action k below a player node and coin side
  k below the chance node."""

  num_actions, max_children, max_chance_outcomes, encoding_size = 2, 2, 2, 5

  def __init__(self, cards: int = 3):
    self.cards, self.name = cards, f"public_coin_showdown(cards={cards})"
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
    over = (length == 1) & (state[0] == 0)  # player 0 passed
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
      likelihood=jnp.full((2, self.cards, self.cards), 0.5),
    )

  def child(self, state, k):
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state):
    cards = jnp.arange(self.cards)
    high_wins = (cards[:, None] > cards[None, :]) == (state[1] == 0)
    showdown = jnp.where(high_wins, 2.0, -2.0)
    return jnp.where(state[0] == 0, -1.0, jnp.where(state[2] == 0, 1.0, showdown))

  def encode(self, state):
    length = (state >= 0).sum()
    code = (jnp.arange(3) < length).astype(jnp.float32)
    side = jnp.zeros(2, jnp.float32).at[jnp.maximum(state[1], 0)].set((length > 1) * 1.0)
    return jnp.concatenate([code, side])


@pytest.fixture(scope="module")
def public_coin_game():
  sog.games.register("public_coin_showdown", PublicCoinShowdown, {"cards": _CARDS}, replace=True)
  return sog.games.load("public_coin_showdown")


def test_a_users_public_game_enumerates_to_the_same_tables_as_its_rules_version(public_coin_game):
  sog.games.check_game(public_coin_game)
  rules_tree = builder.build_public_tree(CoinShowdown())
  ours, theirs = tree_digest(public_coin_game.tree), tree_digest(rules_tree)
  del ours["name"], theirs["name"]
  assert ours == theirs


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_the_functions_batch_under_vmap_as_they_run_one_state_at_a_time(name):
  """Batched = unbatched: the game's functions vmapped over every public state of a level give each
  state's own results, and they reproduce the enumerated tree's kinds and legal masks."""
  game = sog.games.load(name)
  rules = game.rules
  public = rules.game
  keys = [rules.initial_state()]
  states, kinds = [], []
  while keys:  # breadth first over the public states, as the builder visits them
    key = keys.pop(0)
    states.append(rules._states[key])
    facts = rules.facts(key)
    kinds.append(facts.kind)
    keys.extend(k for k in facts.children if k is not None)
  batch = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *states)

  def facts(state):
    return public.kind(state), public.legal(state), public.transitions(state), public.encode(state)

  batched = jax.jit(jax.vmap(facts))(batch)
  for i in (0, len(states) // 2, len(states) - 1):
    one = jax.jit(facts)(states[i])
    chex.assert_trees_all_close(jax.tree_util.tree_map(lambda x, i=i: x[i], batched), one)
  assert sorted(np.asarray(batched[0]).tolist()) == sorted(game.tree.kind.tolist())
  assert sorted(kinds) == sorted(game.tree.kind.tolist())


HIT, MISS = 0, 1


class GuessRules(sog.games.GameRules):
  """A game whose public observation depends on the opponent's private state, as a detective's
  catch does: player 0 holds one of three cards; player 1 (nothing private) names a card, and a hit
  ends the game (+1 to player 1); after a miss player 0 stays (+1) or raises (+2 if its card is
  higher than the named one, else -2). Observations are the child slots of :class:`GuessGame`."""

  name, num_infostates, num_actions = "guess", (3, 1), 3

  def initial_state(self):
    return ()

  def deal_probabilities(self):
    return np.full((3, 1), 1.0 / 3)

  def kind(self, state):
    if len(state) == 2 or (len(state) == 1 and state[0] < 3):
      return sog.games.TERMINAL
    return (sog.games.PLAYER_1, sog.games.PLAYER_0)[len(state)]

  def legal_actions(self, state, infostate):
    return (0, 1, 2) if not state else (0, 1)

  def outcomes(self, state, infostate, action):
    if state:
      return (sog.games.ActionOutcome(action, (*state, action), infostate),)
    others = frozenset({0, 1, 2} - {action})
    return (
      sog.games.ActionOutcome(action, (action,), infostate, frozenset({action})),
      sog.games.ActionOutcome(3 + action, (3 + action,), infostate, others),
    )

  def utility(self, state, infostate_0, infostate_1):
    if len(state) == 1:
      return -1.0
    if state[1] == 0:
      return 1.0
    return 2.0 if infostate_0 > state[0] - 3 else -2.0

  def encoding_size(self):
    return 7

  def encode(self, state):
    code = np.zeros(7, np.float32)
    code[state[0] if state else 6] = 1.0
    return code


class GuessGame(sog.games.PublicGame):
  """:class:`GuessRules` as a PublicGame: the state is [named slot, player 0's action] (-1 before);
  below player 1's node child k < 3 is "hit card k", child 3 + k "missed card k"."""

  name, num_infostates, num_actions = "guess", (3, 1), 3
  max_children, encoding_size, child_depends_on_opponent = 6, 7, True

  def deal(self):
    return np.full((3, 1), 1.0 / 3)

  def root(self):
    return jnp.full(2, -1, jnp.int32)

  def kind(self, state):
    over = (state[1] >= 0) | ((state[0] >= 0) & (state[0] < 3))
    mover = jnp.where(state[0] < 0, sog.games.PLAYER_1, sog.games.PLAYER_0)
    return jnp.where(over, sog.games.TERMINAL, mover).astype(jnp.int32)

  def legal(self, state):
    kind = self.kind(state)
    rows = jnp.where(kind == sog.games.PLAYER_1, jnp.arange(3) == 0, True)
    actions = jnp.where(kind == sog.games.PLAYER_1, True, jnp.arange(3) < 2)
    return rows[:, None] & actions[None, :] & (kind < sog.games.CHANCE)

  def transitions(self, state):
    legal, named, held = self.legal(state), jnp.arange(3)[None, :, None], jnp.arange(3)
    guess = jnp.where(named == held[None, None, :], named, 3 + named)  # [1, A, O]: hit or miss
    child = jnp.where(state[0] < 0, guess, named) * jnp.ones((3, 1, 1), jnp.int32)
    present = (
      jnp.zeros(6, bool).at[child.reshape(3, -1)].max(jnp.repeat(legal, 3, axis=1), mode="drop")
    )
    return sog.games.Transitions(
      present=present,
      child=child,
      next_infostate=jnp.broadcast_to(jnp.arange(3)[:, None], (3, 3)),
      probability=jnp.zeros(0),
      likelihood=jnp.zeros((0, 3, 3)),
    )

  def child(self, state, k):
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state):
    raised = 2.0 * jnp.where(jnp.arange(3) > state[0] - 3, 1.0, -1.0)
    after_miss = jnp.where(state[1] == 0, 1.0, raised)
    return jnp.broadcast_to(jnp.where(state[1] < 0, -1.0, after_miss)[:, None], (3, 3))

  def encode(self, state):
    return jnp.zeros(7, jnp.float32).at[jnp.where(state[0] < 0, 6, state[0])].set(1.0)


def test_a_child_that_depends_on_the_opponent_enumerates_as_the_rules_opponent_masks_do():
  ours = builder.build_public_tree(public_rules.PublicGameRules(GuessGame()))
  theirs = builder.build_public_tree(GuessRules())
  assert tree_digest(ours) == tree_digest(theirs)
  assert ours.size_summary()["public_states"] == 1 + 6 + 2 * 3  # the root, hits and misses, stays
  hit, miss = ours.node_of_path((0,)), ours.node_of_path((3,))  # player 1 named card 0
  assert ours.valid[hit, 0].tolist() == [True, False, False]
  assert ours.valid[miss, 0].tolist() == [False, True, True]


class _Broken(PublicCoinShowdown):
  """The coin game with one contract rule broken (``rule`` names which)."""

  def __init__(self, rule: str):
    super().__init__()
    self.rule, self.name = rule, "broken_coin_showdown"

  def legal(self, state):
    legal = super().legal(state)
    if self.rule == "no_action":
      return legal.at[1].set(False)
    return legal

  def transitions(self, state):
    t = super().transitions(state)
    if self.rule == "probabilities":
      return t.replace(probability=jnp.full(2, 0.6))
    if self.rule == "slot":
      return t.replace(child=t.child + 2)
    if self.rule == "present":
      return t.replace(present=t.present.at[1].set(False))
    if self.rule == "next_infostate":
      return t.replace(next_infostate=t.next_infostate + self.cards)
    return t

  def encode(self, state):
    code = super().encode(state)
    return jnp.concatenate([code, code]) if self.rule == "shape" else code

  def utility(self, state):
    utility = super().utility(state)
    return utility + jnp.ones(2) if self.rule == "crash" else utility  # [3, 3] + [2] fails

  def child(self, state, k):
    child = super().child(state, k)
    return jnp.append(child, k) if self.rule == "structure" else child


class _MissingInfostate(PublicCoinShowdown):
  """Player 1 holds nothing private (S1 = 1) but the game says actions are legal for its
  infostates 1 and 2 at player 1's node."""

  def __init__(self):
    super().__init__()
    self.name, self.num_infostates = "broken_coin_showdown", (3, 1)

  def deal(self):
    return np.full((3, 1), 1.0 / 3)


@pytest.mark.parametrize(
  ("game", "message"),
  [
    (_Broken("shape"), r"encode has shape \(10,\), expected \(5,\)"),
    (_Broken("crash"), "public state .*: its functions failed: ValueError: Incompatible shapes"),
    (_Broken("no_action"), "no legal action at .* for infostate 1"),
    (_Broken("probabilities"), "probabilities that sum to 1, got \\[0.6, 0.6\\]"),
    (_Broken("slot"), r"legal action 0 of infostate 0 leads to slot 2, outside 0..1"),
    (
      _Broken("structure"),
      "child\\(state, k\\) returned a state whose structure, shapes or dtypes",
    ),
    (_Broken("present"), "slot 1 is marked empty but a legal action reaches it"),
    (_Broken("next_infostate"), r"next_infostate must lie in \[0, 3\)"),
    (_MissingInfostate(), "legal for infostate 1, which player 1 does not have"),
  ],
)
def test_a_game_that_breaks_the_contract_is_refused_naming_the_rule(game, message):
  with pytest.raises(ValueError, match=message):
    builder.build_public_tree(public_rules.PublicGameRules(game))


@pytest.mark.parametrize(
  ("field", "value", "message"),
  [
    ("max_children", 0, "max_children must be a positive int, got 0"),
    (
      "max_chance_outcomes",
      3,
      r"max_chance_outcomes must be an int in 0..max_children \(2\), got 3",
    ),
  ],
)
def test_bad_sizes_are_refused(field, value, message):
  game = PublicCoinShowdown()
  setattr(game, field, value)
  with pytest.raises(ValueError, match=message):
    public_rules.PublicGameRules(game)
