"""The public-state game interface (:class:`sog.games.PublicGame`): enumeration walks it into the
same tables the retired rules protocol gave (digests recorded from the rules-protocol definitions:
the built-in games at commit 22f0587, before they moved to the interface; the test games here at
6250428, before the protocol was removed), its functions run under ``jit`` and ``vmap``, a user's
game written against it loads by name, and a game that breaks the interface's contract is refused
with a ``ValueError`` naming the broken rule."""

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
from sog.games import walk
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
    "scotland_yard(map=glasses)",
    "scotland_yard(map=glasses_hidden)",
    "connect_four",
    TIC_TAC_TOE,
  ],
)
def test_enumerated_tables_equal_the_recorded_ones(name):
  """Bit for bit: every array, path and size of the public tree, walked from each game's JAX
  definition. Paths name child slots now: sequential RPS's rules named its observations "ready"
  and "hidden", Scotland Yard's ("x", transport, revealed station) and ("d", detective, transport,
  station, caught)."""
  game = sog.games.load(name)
  digest, recorded = tree_digest(game.tree), dict(_DIGESTS[game.name])
  if name == "sequential_rps" or name.startswith("scotland_yard"):
    del digest["paths"], recorded["paths"]
  if name == "sequential_rps":
    assert game.tree.paths == ((), (0,), (0, 0), (0, 0, 0), (0, 0, 1), (0, 0, 2))
  assert digest == recorded


def test_a_users_game_enumerates_to_the_tables_its_rules_version_gave():
  sog.games.register("coin_showdown", CoinShowdown, {"cards": _CARDS}, replace=True)
  game = sog.games.load("coin_showdown")
  sog.games.check_game(game)
  assert tree_digest(game.tree) == _DIGESTS["coin_showdown(cards=3)"]


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_the_functions_batch_under_vmap_as_they_run_one_state_at_a_time(name):
  """Batched = unbatched: the game's functions vmapped over every public state of a level give each
  state's own results, and they reproduce the enumerated tree's kinds and legal masks."""
  game = sog.games.load(name)
  public = game.public_game
  walker = walk.PublicGameWalk(public)
  keys = [walker.root()]
  states, kinds = [], []
  while keys:  # breadth first over the public states, as the builder visits them
    key = keys.pop(0)
    states.append(walker.state(key))
    facts = walker.facts(key)
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


class GuessGame(sog.games.PublicGame):
  """A game whose public child depends on the opponent's private state, as a detective's catch
  does: player 0 holds one of three cards; player 1 (nothing private) names a card, and a hit ends
  the game (+1 to player 1); after a miss player 0 stays (+1) or raises (+2 if its card is higher
  than the named one, else -2). The state is [named slot, player 0's action] (-1 before); below
  player 1's node child k < 3 is "hit card k", child 3 + k "missed card k"."""

  name, num_infostates, num_actions = "guess", (3, 1), 3
  max_children, encoding_size, child_depends_on_opponent = 6, 7, True
  max_fan_out = 2  # a named card is hit or missed
  utility_scale = 2.0  # a raise

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


def test_a_child_that_depends_on_the_opponent_enumerates_as_the_rules_opponent_masks_did():
  ours = builder.build_public_tree(GuessGame())
  assert tree_digest(ours) == _DIGESTS["guess"]
  assert ours.size_summary()["public_states"] == 1 + 6 + 2 * 3  # the root, hits and misses, stays
  hit, miss = ours.node_of_path((0,)), ours.node_of_path((3,))  # player 1 named card 0
  assert ours.valid[hit, 0].tolist() == [True, False, False]
  assert ours.valid[miss, 0].tolist() == [False, True, True]


class _Broken(CoinShowdown):
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


class _NarrowGuess(GuessGame):
  """A named card is hit or missed (two children of one action), but the game says one."""

  max_fan_out = 1


class _MissingInfostate(CoinShowdown):
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
    (
      _NarrowGuess(),
      "legal action 0 of infostate 0 reaches 2 public children over the opponent's infostates, "
      "more than max_fan_out=1",
    ),
  ],
)
def test_a_game_that_breaks_the_contract_is_refused_naming_the_rule(game, message):
  with pytest.raises(ValueError, match=message):
    builder.build_public_tree(game)


@pytest.mark.parametrize(
  ("field", "value", "message"),
  [
    ("max_children", 0, "max_children must be a positive int, got 0"),
    ("max_fan_out", 0, "max_fan_out must be a positive int, got 0"),
    (
      "max_chance_outcomes",
      3,
      r"max_chance_outcomes must be an int in 0..max_children \(2\), got 3",
    ),
  ],
)
def test_bad_sizes_are_refused(field, value, message):
  game = CoinShowdown()
  setattr(game, field, value)
  with pytest.raises(ValueError, match=message):
    walk.PublicGameWalk(game)
