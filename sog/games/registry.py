"""Loading games by OpenSpiel-style names: ``load("liars_dice(faces=4)")``."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable

from sog.games import builder
from sog.games import connect_four
from sog.games import kuhn_poker
from sog.games import leduc_poker
from sog.games import liars_dice
from sog.games import rules as rules_lib
from sog.games import scotland_yard
from sog.games import sequential_rps
from sog.games import tic_tac_toe
from sog.games import tree as tree_lib


@dataclasses.dataclass(frozen=True)
class _Parameter:
  """A game parameter: its type, default and named choices; ``open_ended`` admits values beyond them
  (its ``description`` is added to the choices in errors)."""

  kind: type
  default: object
  choices: Callable[[], tuple]
  open_ended: Callable[[object], bool] | None = None
  description: str = ""

  def accepts(self, value) -> bool:
    return value in self.choices() or (self.open_ended is not None and self.open_ended(value))

  def valid_choices(self) -> str:
    return ", ".join([*map(str, self.choices()), *filter(None, [self.description])])


@dataclasses.dataclass(frozen=True)
class _Entry:
  make: Callable[..., rules_lib.GameRules]
  parameters: dict[str, _Parameter]


_SIDE = _Parameter(int, 3, lambda: connect_four.VALID_SIDES)
_REGISTRY: dict[str, _Entry] = {
    "connect_four": _Entry(connect_four.ConnectFour, {"rows": _SIDE, "columns": _SIDE,
                                                     "x_in_row": _SIDE}),
    "kuhn_poker": _Entry(kuhn_poker.KuhnPoker, {}),
    "leduc_poker": _Entry(leduc_poker.LeducPoker, {}),
    "liars_dice": _Entry(liars_dice.LiarsDice,
                         {"faces": _Parameter(int, 6, lambda: liars_dice.VALID_FACES)}),
    "scotland_yard": _Entry(scotland_yard.ScotlandYard,
                            {"map": _Parameter(str, "glasses", scotland_yard.available_maps,
                                               scotland_yard.is_map_file, "or a path to a .json map file")}),
    "sequential_rps": _Entry(sequential_rps.SequentialRPS, {}),
    "tic_tac_toe": _Entry(tic_tac_toe.TicTacToe, {}),
}


@dataclasses.dataclass(frozen=True, eq=False)
class Game:
  """A loaded game: its rules and its whole public tree."""

  name: str
  rules: rules_lib.GameRules
  tree: tree_lib.PublicTree

  @property
  def num_infostates(self) -> tuple[int, int]:
    return self.rules.num_infostates

  @property
  def num_actions(self) -> int:
    return self.rules.num_actions


def registered_games() -> tuple[str, ...]:
  return tuple(_REGISTRY)


def parse_name(name: str) -> tuple[str, dict[str, object]]:
  """Splits ``"game(a=1,b=x)"`` into its base name and typed, validated parameters (defaults filled)."""
  match = re.fullmatch(r"\s*([a-z_]+)\s*(?:\((.*)\))?\s*", name or "")
  if not match or match.group(1) not in _REGISTRY:
    raise ValueError(f"unknown game {name!r}; valid games: {', '.join(_REGISTRY)}")
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
      raise ValueError(f"{base}: parameter {key}={value!r} is invalid; valid choices: "
                       f"{parameter.valid_choices()}")
    params[key] = typed
  return base, params


def canonical_name(name: str) -> str:
  base, params = parse_name(name)
  if not params:
    return base
  return f"{base}({','.join(f'{k}={v}' for k, v in params.items())})"


def load(name: str) -> Game:
  """Loads a game by name; raises ``ValueError`` naming the valid choices for a bad name or value."""
  return _load_canonical(canonical_name(name))


@functools.lru_cache(maxsize=None)
def _load_canonical(name: str) -> Game:
  base, params = parse_name(name)
  rules = _REGISTRY[base].make(**params)
  return Game(name=name, rules=rules, tree=builder.build_public_tree(rules))
