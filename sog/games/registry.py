"""Loading games by OpenSpiel-style names (``load("liars_dice(faces=4)")``), and registering new
ones.

A game written outside the package (a :class:`~sog.games.public_game.PublicGame` subclass)
becomes loadable by name with :func:`register`;
scripts and configs that run in other processes name the module that registers it
(``--game_module``, ``config.game_modules``) and :func:`import_game_modules` imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
import dataclasses
import functools
import importlib
import importlib.util
import numbers
import pathlib
import re
import sys

from sog.games import builder
from sog.games import conformance
from sog.games import connect_four
from sog.games import kuhn_poker
from sog.games import leduc_poker
from sog.games import liars_dice
from sog.games import pgx_games
from sog.games import public_game
from sog.games import scotland_yard
from sog.games import scotland_yard_map
from sog.games import sequential_rps
from sog.games import tic_tac_toe
from sog.games import tree as tree_lib

_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclasses.dataclass(frozen=True)
class GameParameter:
  """A game parameter: its type, default and named choices, as ``load`` parses it from a name.

  Attributes:
    kind: the type a value is parsed into (``int``, ``str``, ``float``).
    default: the value when the name does not set it.
    choices: the valid values, or a function returning them (read when a name is parsed).
    open_ended: admits values beyond ``choices`` where it returns True (a map file's path).
    description: what ``open_ended`` admits, added to the choices in errors.
  """

  kind: type
  default: object
  choices: tuple | Callable[[], tuple]
  open_ended: Callable[[object], bool] | None = None
  description: str = ""

  def valid_values(self) -> tuple:
    return tuple(self.choices()) if callable(self.choices) else tuple(self.choices)

  def accepts(self, value) -> bool:
    return value in self.valid_values() or (self.open_ended is not None and self.open_ended(value))

  def valid_choices(self) -> str:
    return ", ".join([*map(str, self.valid_values()), *filter(None, [self.description])])


@dataclasses.dataclass(frozen=True)
class _Entry:
  make: Callable[..., public_game.PublicGame]
  parameters: dict[str, GameParameter]


_SIDE = GameParameter(int, 3, lambda: connect_four.VALID_SIDES)
_REGISTRY: dict[str, _Entry] = {
  "connect_four": _Entry(
    connect_four.ConnectFour, {"rows": _SIDE, "columns": _SIDE, "x_in_row": _SIDE}
  ),
  "kuhn_poker": _Entry(kuhn_poker.KuhnPoker, {}),
  "leduc_poker": _Entry(leduc_poker.LeducPoker, {}),
  "liars_dice": _Entry(
    liars_dice.LiarsDice, {"faces": GameParameter(int, 6, lambda: liars_dice.VALID_FACES)}
  ),
  "scotland_yard": _Entry(
    scotland_yard.ScotlandYard,
    {
      "map": GameParameter(
        str,
        "glasses",
        scotland_yard_map.available_maps,
        scotland_yard_map.is_map_file,
        "or a path to a .json map file",
      )
    },
  ),
  "sequential_rps": _Entry(sequential_rps.SequentialRPS, {}),
  "tic_tac_toe": _Entry(tic_tac_toe.TicTacToe, {}),
}
_BUILT_IN = frozenset(_REGISTRY)


@dataclasses.dataclass(frozen=True, eq=False)
class Game:
  """A loaded game: its definition and, on first use, its whole public tree.

  Attributes:
    name: the canonical name.
    public_game: the game's rules, as pure JAX functions of a public state.
  """

  name: str
  public_game: public_game.PublicGame

  @functools.cached_property
  def tree(self) -> tree_lib.PublicTree:
    """The game's public tree, enumerated from ``public_game`` on first use (``ValueError`` for a
    game that is not ``enumerable``, naming what serves it)."""
    if not self.public_game.enumerable:
      raise not_enumerable(
        self.name, "exact exploitability, SoG's protocol and the OpenSpiel bridge"
      )
    return builder.build_public_tree(self.public_game)

  @property
  def enumerable(self) -> bool:
    return self.public_game.enumerable

  @property
  def max_moves(self) -> int:
    """The most public moves from the root to any public state (at least 1): the game's own
    ``max_moves``, or its enumerated tree's depth."""
    given = self.public_game.max_moves
    return self.tree.max_moves if given is None else max(int(given), 1)

  @property
  def num_infostates(self) -> tuple[int, int]:
    return tuple(self.public_game.num_infostates)

  @property
  def num_actions(self) -> int:
    return self.public_game.num_actions


def registered_games() -> tuple[str, ...]:
  """The names ``load`` knows: the built-in games, those added by :func:`register`, then pgx's
  perfect-information games (``"pgx/<id>"``, never enumerated)."""
  return (*_REGISTRY, *(pgx_games.PREFIX + name for name in pgx_games.GAMES))


def register(
  name: str,
  factory: Callable[..., public_game.PublicGame],
  parameters: Mapping[str, GameParameter] | None = None,
  *,
  replace: bool = False,
  check: bool = True,
) -> None:
  """Makes ``load(name)`` (and ``load("name(key=value,...)")``) build ``factory(**parameters)``.

  Args:
    name: the game's base name: lower case letters, digits and underscores, starting with a letter.
    factory: called with every parameter by keyword (defaults filled) and returning the game, a
      :class:`~sog.games.public_game.PublicGame` (a subclass itself will do); its ``name`` must be
      the canonical name :func:`canonical_name` gives (``"name"`` without parameters, else
      ``"name(key=value,...)"`` in the order of ``parameters``).
    parameters: the parameters a name may set, each with its type, default and choices.
    replace: allows registering a name again (a notebook cell run twice); never a built-in game.
    check: loads the game at its default parameters and runs the conformance checks
      (:func:`sog.games.conformance.check_game`: on its enumerated tree, or on random paths
      through its functions where the game is not ``enumerable``) before the name is kept.

  Raises:
    ValueError: for a bad or taken name, bad parameters, or (with ``check``) a game whose functions
      break the interface's contract or the game model's assumptions; the registry is then left as
      it was.
  """
  if not isinstance(name, str) or not _NAME.fullmatch(name):
    raise ValueError(
      f"game name {name!r} is invalid: use lower case letters, digits and underscores, "
      "starting with a letter (parameters are declared in `parameters`)"
    )
  if name in _BUILT_IN or (name in _REGISTRY and not replace):
    hint = "" if name in _BUILT_IN else "; pass replace=True to register it again"
    raise ValueError(
      f"game {name!r} is already registered{hint}; registered games: {', '.join(_REGISTRY)}"
    )
  if not callable(factory):
    raise ValueError(
      f"{name}: factory must be callable (a sog.games.PublicGame subclass or a function "
      f"returning one), got {factory!r}"
    )
  parameters = dict(parameters or {})
  for key, parameter in parameters.items():
    if not (isinstance(key, str) and _NAME.fullmatch(key)) or not isinstance(
      parameter, GameParameter
    ):
      raise ValueError(
        f"{name}: parameter {key!r} must be a lower-case name mapped to a "
        f"sog.games.GameParameter, got {parameter!r}"
      )
    if parameter.kind not in (int, float, str) or not isinstance(parameter.default, parameter.kind):
      raise ValueError(
        f"{name}: parameter {key} must have kind int, float or str and a default of "
        f"that kind, got {parameter.kind.__name__} and {parameter.default!r}"
      )
    if not parameter.accepts(parameter.default):
      raise ValueError(
        f"{name}: parameter {key}'s default {parameter.default!r} is not among its "
        f"valid choices: {parameter.valid_choices()}"
      )
  previous = _REGISTRY.get(name)
  _REGISTRY[name] = _Entry(factory, parameters)
  _forget_loaded(name)
  if not check:
    return
  try:
    conformance.check_game(load(name))
  except Exception as error:
    if previous is None:
      del _REGISTRY[name]
    else:
      _REGISTRY[name] = previous
    _forget_loaded(name)
    if isinstance(error, ValueError):
      raise
    raise ValueError(
      f"{name}: loading the game at its default parameters failed: {type(error).__name__}: {error}"
    ) from error


def import_game_modules(modules: Iterable[str]) -> None:
  """Imports each module (a dotted name, or a path to a ``.py`` file) so that the games it registers
  load by name; a module already imported is not imported again. ``ValueError`` for one that cannot
  be found."""
  if isinstance(modules, str) or not all(isinstance(module, str) for module in modules):
    raise ValueError(f"game modules must be a list of module names or .py paths, got {modules!r}")
  for module in modules:
    if module.endswith(".py"):
      path = pathlib.Path(module)
      key = "sog_game_module_" + re.sub(r"\W", "_", str(path.resolve()))
      if key in sys.modules:
        continue
      if not path.is_file():
        raise ValueError(f"game module {module!r}: no such file")
      spec = importlib.util.spec_from_file_location(key, path)
      loaded = importlib.util.module_from_spec(spec)
      sys.modules[key] = loaded
      try:
        spec.loader.exec_module(loaded)
      except BaseException:
        del sys.modules[key]
        raise
    else:
      try:
        importlib.import_module(module)
      except ModuleNotFoundError as error:
        if error.name is None or not (module == error.name or module.startswith(error.name + ".")):
          raise  # the module exists but something it imports does not: the traceback says what
        raise ValueError(f"game module {module!r} cannot be imported: {error}") from None


def parse_name(name: str) -> tuple[str, dict[str, object]]:
  """Splits ``"game(a=1,b=x)"`` into its base name and typed, validated parameters (defaulted)."""
  match = re.fullmatch(r"\s*([a-z][a-z0-9_]*)\s*(?:\((.*)\))?\s*", name or "")
  if not match or match.group(1) not in _REGISTRY:
    raise ValueError(
      f"unknown game {name!r}; valid games: {', '.join(registered_games())} (a game "
      "of your own: "
      "sog.games.register, or --game_module / config.game_modules for its module)"
    )
  base, entry = match.group(1), _REGISTRY[match.group(1)]
  params = {key: parameter.default for key, parameter in entry.parameters.items()}
  for item in filter(None, (match.group(2) or "").split(",")):
    key, sep, value = (part.strip() for part in item.partition("="))
    if not sep or key not in entry.parameters:
      valid = ", ".join(entry.parameters) or "none"
      raise ValueError(f"{base}: unknown parameter {item.strip()!r}; valid parameters: {valid}")
    parameter = entry.parameters[key]
    try:
      typed = parameter.kind(value)
    except ValueError:
      typed = None
    if typed is None or not parameter.accepts(typed):
      raise ValueError(
        f"{base}: parameter {key}={value!r} is invalid; valid choices: {parameter.valid_choices()}"
      )
    params[key] = typed
  return base, params


def canonical_name(name: str) -> str:
  if pgx_games.is_pgx_name(name):
    return pgx_games.load(name).name
  base, params = parse_name(name)
  if not params:
    return base
  return f"{base}({','.join(f'{k}={v}' for k, v in params.items())})"


def load(name: str) -> Game:
  """Loads a game by name; raises ``ValueError`` naming the valid choices for a bad name or value.
  A name loads once per process (until :func:`register` replaces its game): the same name gives the
  same :class:`Game`. A pgx name (``"pgx/connect_four"``) gives a :class:`Game` of a
  :class:`~sog.games.pgx_games.PgxGame`, which is never enumerated (:func:`load_enumerated`)."""
  name = canonical_name(name)
  if name not in _LOADED:
    _LOADED[name] = (
      Game(name=name, public_game=pgx_games.load(name))
      if pgx_games.is_pgx_name(name)
      else _build(name)
    )
  return _LOADED[name]


_LOADED: dict[str, Game] = {}


def load_enumerated(name: str, purpose: str) -> Game:
  """:func:`load` for a use that needs the game's enumerated public tree (``purpose`` names it);
  ``ValueError`` for a pgx game or a game that is not ``enumerable``, which are never enumerated."""
  if pgx_games.is_pgx_name(name):
    pgx_games.check_name(name)
    raise ValueError(
      f"{name} is a pgx game, searched without enumeration and never enumerated: "
      f"{purpose} needs an enumerated game; valid games: {', '.join(_REGISTRY)}"
    )
  game = load(name)
  if not game.enumerable:
    raise not_enumerable(game.name, purpose)
  return game


def not_enumerable(name: str, purpose: str) -> ValueError:
  """The error for a game that is not enumerable given to ``purpose``, naming what serves it."""
  return ValueError(
    f"{name} is not enumerable (its PublicGame sets enumerable = False): {purpose} needs its "
    "enumerated public tree; search it with sog.search.pool.GTCFR and self-play it with "
    "scripts/train.py (no evaluation, random queries or value diagnostics)"
  )


def _forget_loaded(base: str) -> None:
  """Drops the loaded games of base name ``base`` (registered again: the game may differ)."""
  for name in [name for name in _LOADED if name == base or name.startswith(base + "(")]:
    del _LOADED[name]


def _build(name: str) -> Game:
  base, params = parse_name(name)
  game = _REGISTRY[base].make(**params)
  if not isinstance(game, public_game.PublicGame):
    raise ValueError(
      f"{name}: the registered factory returned {type(game).__name__}, not a sog.games.PublicGame"
    )
  if getattr(game, "name", None) != name:
    raise ValueError(
      f"{name}: the game is named {getattr(game, 'name', None)!r}; a game must carry its "
      f"canonical name, {name!r} (set `name` in the game)"
    )
  moves = getattr(game, "max_moves", None)
  if moves is not None and (
    isinstance(moves, bool) or not isinstance(moves, numbers.Integral) or moves < 1
  ):
    raise ValueError(f"{name}: max_moves must be a positive int or None, got {moves!r}")
  if not game.enumerable and moves is None:
    raise ValueError(
      f"{name}: a game that is not enumerable must give max_moves (the most public moves from "
      "the root to any public state): self-play's paths and a re-solve's branch are sized by it"
    )
  return Game(name=name, public_game=game)
