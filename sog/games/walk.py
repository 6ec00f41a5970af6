"""A walk over a :class:`~sog.games.public_game.PublicGame`'s public states, one state at a time:
what :mod:`sog.games.builder` enumerates into a game's tables, and what the OpenSpiel bridge and the
SoG agent step through one move at a time (:func:`shared_walk`), all from the game's one definition.

:class:`PublicGameWalk` evaluates the game's functions once per public state (vmapped over batches
of the states the walk has handed out) and answers questions about a state from the results: its
kind, the legal actions of an infostate, the outcomes of an action (public child, the actor's next
infostate, the opponent infostates that lead there), chance outcomes and likelihoods. It checks
the interface's contract as it goes and raises ``ValueError`` naming the rule a game breaks and the
public state: a function that fails, an array of the wrong shape, an unknown kind, a legal action at
a chance or terminal state or for an infostate the actor does not have, a child slot out of range
or marked present (or empty) against what the legal actions reach, a next infostate out of range,
chance outcomes that are not a distribution, likelihoods outside [0, 1], a utility that is not
finite. (The builder adds the model's own checks, such as a reachable infostate without a legal
action.)
"""

from __future__ import annotations

import collections
from collections.abc import Callable
import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game as public_game_lib

_TOLERANCE = 1e-6
#: The most public states evaluated in one vmapped call, and the most bytes their results take (a
#: game with large per-state arrays, such as Scotland Yard's board, gets fewer states a call).
BATCH, BATCH_BYTES = 256, 1 << 26


#: A public state as a hashable key, its leaves' bytes.
PublicStateKey = tuple[bytes, ...]


@dataclasses.dataclass(frozen=True)
class ActionOutcome:
  """One public outcome of (actor infostate, action).

  Attributes:
    slot: the public child's slot k in the state's :class:`~sog.games.public_game.Transitions`.
    next_state: the public child.
    next_infostate: the actor's infostate in the child.
    opponent_mask: the opponent infostates that produce this outcome (None: all of them), where
      the public child depends on the opponent's private state.
  """

  slot: int
  next_state: PublicStateKey
  next_infostate: int
  opponent_mask: frozenset[int] | None = None


@dataclasses.dataclass(frozen=True)
class ChanceOutcome:
  """One public chance outcome in slot ``slot``, with its public probability."""

  slot: int
  next_state: PublicStateKey
  probability: float


@dataclasses.dataclass(frozen=True)
class Facts:
  """Everything the builder asks about one public state, as NumPy arrays."""

  kind: int
  legal: np.ndarray  # [S, A]
  transitions: public_game_lib.Transitions  # NumPy leaves, trimmed (PublicGameWalk._kept)
  children: tuple[PublicStateKey | None, ...]  # [K]: None for an empty slot
  utility: np.ndarray  # [S, S]
  encoding: np.ndarray  # [E]


class PublicGameWalk:
  """A walk over the public states of a :class:`~sog.games.public_game.PublicGame` (see the module
  docstring). States are named by :data:`PublicStateKey`; :meth:`root` is the first.

  The game's functions run in float64 (``float64=True``, what the builder tabulates: its
  probabilities and payoffs exact where the game's are), or in JAX's default precision, as the
  searches of a game that is never tabulated run them (:func:`sog.games.conformance.check_walks`;
  pgx's games refuse 64-bit integers).

  Attributes:
    game: the public-state game it walks.
    name, num_infostates, num_actions: the game's.
    batch: how many public states one vmapped call evaluates (:data:`BATCH`, fewer where their
      results would take more than :data:`BATCH_BYTES`).
  """

  def __init__(self, game: public_game_lib.PublicGame, float64: bool = True):
    _check_sizes(game)
    self.game, self.float64 = game, float64
    self.name = game.name
    self.num_infostates = tuple(int(n) for n in game.num_infostates)
    self.num_actions = int(game.num_actions)
    self._states: dict[PublicStateKey, chex.ArrayTree] = {}
    self._signature: tuple | None = None  # the root's tree structure, leaf shapes and dtypes
    self._evaluated: dict[PublicStateKey, tuple] = {}  # evaluated and checked, not yet read
    self._facts: dict[PublicStateKey, Facts] = {}
    self._handed_out: collections.deque[PublicStateKey] = collections.deque()
    self._evaluate = jax.jit(jax.vmap(self._evaluate_state))
    with jax.enable_x64(float64):
      root = game.root()
      shapes = self._guarded(root, lambda: jax.eval_shape(self._evaluate_state, root))
    size = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(shapes))
    self.batch = int(np.clip(BATCH_BYTES // max(size, 1), 1, BATCH))

  def _evaluate_state(self, state: chex.ArrayTree) -> tuple:
    game = self.game
    children = jax.vmap(game.child, in_axes=(None, 0))(
      state, jnp.arange(game.max_children, dtype=jnp.int32)
    )
    return (
      game.kind(state),
      game.legal(state),
      game.transitions(state),
      children,
      game.utility(state),
      game.encode(state),
    )

  def _key(self, state: chex.ArrayTree) -> PublicStateKey:
    leaves, treedef = jax.tree_util.tree_flatten(state)
    leaves = [np.asarray(leaf) for leaf in leaves]
    signature = (treedef, tuple((leaf.shape, leaf.dtype) for leaf in leaves))
    if self._signature is None:
      self._signature = signature
    elif signature != self._signature:
      raise ValueError(
        f"{self.name}: child(state, k) returned a state whose structure, shapes or dtypes "
        f"differ from root()'s: {signature} against {self._signature}"
      )
    key = tuple(leaf.tobytes() for leaf in leaves)
    self._states.setdefault(key, jax.tree_util.tree_unflatten(treedef, leaves))
    return key

  def _hand_out(self, key: PublicStateKey) -> PublicStateKey:
    """Queues a state the builder is given, for the next batch."""
    if key not in self._facts and key not in self._evaluated:
      self._handed_out.append(key)
    return key

  def facts(self, key: PublicStateKey) -> Facts:
    """The game's functions at the public state ``key``. A miss evaluates (and checks) it
    together with the states handed to the builder and not evaluated yet (the builder walks
    breadth first, so a batch is mostly one depth), :attr:`batch` at a time."""
    facts = self._facts.get(key)
    if facts is None:
      if key not in self._evaluated:
        batch = {key: None}  # ordered, without repeats
        while self._handed_out and len(batch) < self.batch:
          pending = self._handed_out.popleft()
          if pending not in self._facts and pending not in self._evaluated:
            batch[pending] = None
        self._evaluate_batch(list(batch))
      kind, legal, transitions, children, utility, encoding = self._evaluated.pop(key)
      slots = [
        self._key(jax.tree_util.tree_map(lambda x, k=k: x[k], children)) if present else None
        for k, present in enumerate(transitions.present.tolist())
      ]
      facts = self._facts[key] = Facts(kind, legal, transitions, tuple(slots), utility, encoding)
    return facts

  def _guarded(self, state: chex.ArrayTree, evaluate):
    """``evaluate()``, with a failure of the game's functions as a ``ValueError`` naming
    ``state``."""
    try:
      return evaluate()
    except Exception as error:
      raise ValueError(
        f"{_describe(self.game, state)}: its functions failed: {type(error).__name__}: {error}"
      ) from error

  def _kept(
    self, kind: int, transitions: public_game_lib.Transitions
  ) -> public_game_lib.Transitions:
    """The part of a checked state's transitions the walk reads again: at a player node
    ``child`` [S_actor, A, O or 1] (the actor's rows; one column where no child depends on the
    opponent) and ``likelihood`` [C, 0, 0], at a chance node ``child`` [0, A, O] and the
    likelihoods (copied out of the batch), at a terminal neither: kilobytes a player state on a
    large board, not megabytes."""
    t = transitions
    no_likelihood = np.array(t.likelihood[:, :0, :0])
    if kind == public_game_lib.CHANCE:
      return t.replace(child=np.array(t.child[:0]), likelihood=np.array(t.likelihood))
    if kind == public_game_lib.TERMINAL:
      return t.replace(child=np.array(t.child[:0]), likelihood=no_likelihood)
    child = t.child[: self.num_infostates[kind]]
    if (child == child[..., :1]).all():
      child = child[..., :1]
    return t.replace(child=np.array(child), likelihood=no_likelihood)

  def _evaluate_batch(self, keys: list[PublicStateKey]) -> None:
    states = [self._states[key] for key in keys]
    padded = states + states[:1] * (self.batch - len(states))  # one compiled batch size
    stacked = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *padded)
    with jax.enable_x64(self.float64):
      evaluated = self._guarded(
        states[0], lambda: jax.tree_util.tree_map(np.asarray, self._evaluate(stacked))
      )
    # A state's results are views into the batch's arrays; a padded batch's are copied, so that
    # the padding is not kept alive with them.
    take = (lambda x, i: x[i]) if len(keys) == self.batch else (lambda x, i: x[i].copy())
    for i, key in enumerate(keys):
      kind, legal, transitions, children, utility, encoding = jax.tree_util.tree_map(
        lambda x, i=i: take(x, i), evaluated
      )
      kind = int(kind)
      _check_state(self.game, self._states[key], kind, legal, transitions, utility, encoding)
      transitions = self._kept(kind, transitions)
      self._evaluated[key] = (kind, legal, transitions, children, utility, encoding)

  def state(self, key: PublicStateKey) -> chex.ArrayTree:
    """The public state (NumPy leaves) a key names."""
    return self._states[key]

  def root(self) -> PublicStateKey:
    with jax.enable_x64(self.float64):  # the state's dtypes as its children's
      root = self.game.root()
    return self._hand_out(self._key(root))

  def kind(self, state: PublicStateKey) -> int:
    return self.facts(state).kind

  def legal_actions(self, state: PublicStateKey, infostate: int) -> list[int]:
    return np.flatnonzero(self.facts(state).legal[infostate]).tolist()

  def outcomes(self, state: PublicStateKey, infostate: int, action: int) -> list[ActionOutcome]:
    facts = self.facts(state)
    t = facts.transitions
    opponent_count = self.num_infostates[1 - facts.kind]
    slots = t.child[infostate, action, :opponent_count]  # [O]: one slot, or one per opponent
    outcomes = []
    for k in np.unique(slots).tolist():
      mask = np.broadcast_to(slots == k, (opponent_count,))
      outcomes.append(
        ActionOutcome(
          k,
          self._hand_out(facts.children[k]),
          int(t.next_infostate[infostate, action]),
          None if mask.all() else frozenset(np.flatnonzero(mask).tolist()),
        )
      )
    return outcomes

  def chance_outcomes(self, state: PublicStateKey) -> list[ChanceOutcome]:
    facts = self.facts(state)
    return [
      ChanceOutcome(k, self._hand_out(facts.children[k]), float(facts.transitions.probability[k]))
      for k in np.flatnonzero(facts.transitions.present).tolist()
    ]

  def chance_likelihood(
    self, state: PublicStateKey, slot: int, infostate_0: int, infostate_1: int
  ) -> float:
    return float(self.facts(state).transitions.likelihood[slot, infostate_0, infostate_1])

  def utility(self, state: PublicStateKey, infostate_0: int, infostate_1: int) -> float:
    return float(self.facts(state).utility[infostate_0, infostate_1])

  def encode(self, state: PublicStateKey) -> np.ndarray:
    return self.facts(state).encoding

  def action_name(self, action: int) -> str:
    return self.game.action_name(action)


def _check_sizes(game: public_game_lib.PublicGame) -> None:
  sizes = getattr(game, "num_infostates", None)
  if not (
    isinstance(sizes, tuple | list)
    and len(sizes) == 2
    and all(isinstance(n, int | np.integer) and n >= 1 for n in sizes)
  ):
    raise ValueError(
      f"{getattr(game, 'name', game)!r}: num_infostates must be (S0, S1), two positive "
      f"ints, got {sizes!r}"
    )
  for field in ("num_actions", "max_children", "encoding_size", "max_fan_out"):
    value = getattr(game, field, None)
    if not isinstance(value, int | np.integer) or value < 1:
      raise ValueError(f"{game.name}: {field} must be a positive int, got {value!r}")
  chance = game.max_chance_outcomes
  if not isinstance(chance, int | np.integer) or not 0 <= chance <= game.max_children:
    raise ValueError(
      f"{game.name}: max_chance_outcomes must be an int in 0..max_children "
      f"({game.max_children}), got {chance!r}"
    )


def _check_state(
  game: public_game_lib.PublicGame,
  state: chex.ArrayTree,
  kind: int,
  legal: np.ndarray,
  transitions: public_game_lib.Transitions,
  utility: np.ndarray,
  encoding: np.ndarray,
) -> None:
  """Raises ``ValueError`` naming the first contract rule the arrays at ``state`` break."""
  S, A, K = game.max_infostates, game.num_actions, game.max_children
  C = game.max_chance_outcomes
  columns = S if game.child_depends_on_opponent else 1  # O, the opponent axis of child
  S0, S1 = game.num_infostates
  where = functools.partial(_describe, game, state)
  expected = {
    "legal": (legal, (S, A)),
    "transitions.present": (transitions.present, (K,)),
    "transitions.child": (transitions.child, (S, A, columns)),
    "transitions.next_infostate": (transitions.next_infostate, (S, A)),
    "transitions.probability": (transitions.probability, (C,)),
    "transitions.likelihood": (transitions.likelihood, (C, S, S)),
    "utility": (utility, (S, S)),
    "encode": (encoding, (game.encoding_size,)),
  }
  for name, (array, shape) in expected.items():
    if array.shape != shape:
      raise ValueError(f"{where()}: {name} has shape {array.shape}, expected {shape}")
  if kind not in (
    public_game_lib.PLAYER_0,
    public_game_lib.PLAYER_1,
    public_game_lib.CHANCE,
    public_game_lib.TERMINAL,
  ):
    raise ValueError(f"{where()}: kind {kind} is not PLAYER_0, PLAYER_1, CHANCE or TERMINAL")
  if kind in (public_game_lib.CHANCE, public_game_lib.TERMINAL) and legal.any():
    raise ValueError(f"{where()}: an action is legal at a {public_game_lib.KIND_NAMES[kind]} state")
  if kind == public_game_lib.CHANCE:
    _check_chance(where, transitions, S0, S1)
  elif kind == public_game_lib.TERMINAL:
    if not np.isfinite(utility[:S0, :S1]).all():
      raise ValueError(f"{where()}: the utility is not finite")
  else:
    _check_player(game, where, kind, legal, transitions)


def _check_chance(
  where: Callable[[], str], t: public_game_lib.Transitions, S0: int, S1: int
) -> None:
  C = t.probability.shape[0]
  present = t.present[:C]
  probability = np.where(present, t.probability, 0.0)
  if t.present[C:].any() or not (
    present.any()
    and np.isfinite(probability).all()
    and probability.min() >= 0
    and abs(probability.sum() - 1.0) <= _TOLERANCE
  ):
    raise ValueError(
      f"{where()}: chance outcomes must lie in slots below max_chance_outcomes ({C}) with "
      f"non-negative probabilities that sum to 1, got "
      f"{np.round(probability[present].astype(np.float64), 6).tolist()}"
    )
  likelihood = t.likelihood[present][:, :S0, :S1]
  if not ((likelihood >= 0) & (likelihood <= 1 + _TOLERANCE)).all():
    raise ValueError(f"{where()}: chance likelihoods P(k | s0, s1) must lie in [0, 1]")


def _check_player(
  game: public_game_lib.PublicGame,
  where: Callable[[], str],
  actor: int,
  legal: np.ndarray,
  t: public_game_lib.Transitions,
) -> None:
  count, opponent_count = game.num_infostates[actor], game.num_infostates[1 - actor]
  if legal[count:].any():
    s = int(np.flatnonzero(legal[count:].any(-1))[0]) + count
    raise ValueError(
      f"{where()}: an action is legal for infostate {s}, which player {actor} does not have "
      f"(it has {count})"
    )
  K = t.present.shape[0]
  child = t.child[:, :, :opponent_count]
  reached = legal[:, :, None] & np.ones_like(child, bool)
  inside = (child >= 0) & (child < K)
  if (reached & ~inside).any():
    s, a, o = (int(i[0]) for i in np.nonzero(reached & ~inside))
    raise ValueError(
      f"{where()}: legal action {a} of infostate {s} leads to slot {int(child[s, a, o])}, "
      f"outside 0..{K - 1}"
    )
  used = np.zeros(K, bool)
  used[child[reached]] = True
  if (used != t.present).any():
    k = int(np.flatnonzero(used != t.present)[0])
    problem = "no legal action reaches it" if t.present[k] else "a legal action reaches it"
    raise ValueError(
      f"{where()}: slot {k} is marked {'present' if t.present[k] else 'empty'} but {problem}"
    )
  fan_out = np.sort(child, -1)
  fan_out = 1 + (fan_out[..., 1:] != fan_out[..., :-1]).sum(-1)  # [S, A] distinct slots over o
  if (legal & (fan_out > game.max_fan_out)).any():
    s, a = (int(i[0]) for i in np.nonzero(legal & (fan_out > game.max_fan_out)))
    raise ValueError(
      f"{where()}: legal action {a} of infostate {s} reaches {int(fan_out[s, a])} public "
      f"children over the opponent's infostates, more than max_fan_out={game.max_fan_out}"
    )
  next_infostate = np.where(legal, t.next_infostate, 0)
  if next_infostate.min() < 0 or next_infostate.max() >= count:
    raise ValueError(
      f"{where()}: next_infostate must lie in [0, {count}) for player {actor}'s legal actions"
    )


def _describe(game: public_game_lib.PublicGame, state: chex.ArrayTree) -> str:
  leaves = [np.asarray(leaf).tolist() for leaf in jax.tree_util.tree_leaves(state)]
  return f"{game.name}: public state {leaves}"


_SHARED: dict[int, tuple[public_game_lib.PublicGame, PublicGameWalk]] = {}


def shared_walk(game: public_game_lib.PublicGame) -> PublicGameWalk:
  """The process's one walk of ``game`` (this object): the public states it has met and its
  compiled evaluator serve every caller that steps through the game one move at a time (the
  OpenSpiel bridge, the SoG agent)."""
  entry = _SHARED.get(id(game))
  if entry is None or entry[0] is not game:
    entry = _SHARED[id(game)] = (game, PublicGameWalk(game))
  return entry[1]
