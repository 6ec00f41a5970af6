"""What the scripts share: the flags of a GT-CFR search, of SoG's protocol and of a leaf model, each
defined once (defaults read from the library's configs), and the leaf model a flag names.

A script defines the groups it needs at import time and reads them in ``main``::

  _SEARCH = common.define_search_flags(sims=["100"])
  _PROTOCOL = common.define_protocol_flags()
  _LEAF = common.define_leaf_flags()
  ...
  searcher = GTCFR(game, _LEAF.model(game), _SEARCH.config(sims), branch_depth=depth)
  result = composed.compose(searcher, _PROTOCOL.seeds(), _PROTOCOL.resolving_config(),
                            _PROTOCOL.batch_size.value, common.progress_printer(f"s={sims}"),
                            tree=game.tree)
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import pathlib
import re
import sys

from absl import flags
import jax
import jax.numpy as jnp

from sog import monitoring
import sog.games
from sog.games import tree as tree_lib
from sog.nets import checkpoint
from sog.nets import cvpn as cvpn_lib
from sog.nets import leaf as leaf_lib
from sog.protocol import settings as settings_lib
from sog.search import cfr
from sog.search import leaf_models
from sog.search import resolving
from sog.search import types as search_types
from sog.search.pool import belief_oracle

LEAF_CHOICES = ("oracle", "zeros", "untrained")
_FLAG_OF_FIELD = {"simulations_per_phase": "c"}  # a stored setting's flag where the names differ

_GAME_MODULES = flags.DEFINE_list(
  "game_module",
  [],
  "Modules (dotted names or .py paths) imported before the game loads, for "
  "games of your own that they register with sog.games.register.",
)


def load_game(name: str, enumerated: bool = True):
  """Imports the --game_module modules, then loads the game ``name`` (``ValueError`` naming the
  valid games for an unknown one, and for a pgx game where the script needs an ``enumerated``
  one)."""
  sog.games.import_game_modules(_GAME_MODULES.value)
  if enumerated:
    return sog.games.registry.load_enumerated(name, f"scripts/{pathlib.Path(sys.argv[0]).name}")
  return sog.games.load(name)


def apply_checkpoint_settings(leaf: str, sections: tuple[str, ...]) -> str:
  """Where ``leaf`` (the --leaf value) is a checkpoint that carries the search settings its numbers
  were measured with (``search.json``, :mod:`sog.protocol.settings`), makes the fields of its
  ``sections`` (those of the agent the script runs) the values of this script's flags that the
  command line does not give. Returns what the script's header line says about them ("" where the
  checkpoint has no settings file)."""
  directories = leaf_directories(leaf)
  if leaf in LEAF_CHOICES or not all(pathlib.Path(d).is_dir() for d in directories):
    return ""
  every = [settings_lib.read(checkpoint.locate(d)) for d in directories]
  if any(stored != every[0] for stored in every):
    raise ValueError(f"--leaf={leaf}: the ensemble's checkpoints carry different search settings")
  stored = every[0]
  if stored is None:
    return ""
  note = f"search settings of {leaf} ({settings_lib.FILE}): "
  if not set(sections) & set(stored.sections):
    return note + f"none for this agent ({', '.join(sections)}); the library's defaults"
  changed, overridden, unused = [], [], []
  for field, value in stored.items(sections):
    name = _FLAG_OF_FIELD.get(field, field)
    if name not in flags.FLAGS:
      unused.append(field)
      continue
    given = flags.FLAGS[name].present or (name == "safe" and flags.FLAGS["unsafe"].present)
    if given:
      overridden.append(
        "--unsafe" if name == "safe" and not flags.FLAGS[name].present else f"--{name}"
      )
    elif flags.FLAGS[name].value != value:
      flags.FLAGS.set_default(name, value)  # parsed and validated as a command-line value would be
      changed.append(f"{name}={value}")
  note += ", ".join(changed) if changed else "the library's defaults"
  note += f"; overridden by {', '.join(overridden)}" if overridden else ""
  return note + (f"; not used by this script: {', '.join(unused)}" if unused else "")


ORACLE_ITERATIONS = 50  # CFR+ iterations of each exact-oracle call, unless a script says otherwise


@dataclasses.dataclass(frozen=True)
class SearchFlags:
  """--sims, --c, --updates, --prior_temperature, --puct_constant: SoG(s, c) and PUCT; --redraws,
  --tie_break, --open_chance, --averaging: how the tree grows and is averaged."""

  sims: flags.FlagHolder[list[str]]
  c: flags.FlagHolder[float]
  updates: flags.FlagHolder[str]
  prior_temperature: flags.FlagHolder[float]
  puct_constant: flags.FlagHolder[float]
  redraws: flags.FlagHolder[int]
  tie_break: flags.FlagHolder[str]
  open_chance: flags.FlagHolder[str]
  averaging: flags.FlagHolder[str]

  def simulations(self) -> list[int]:
    """The values of s, each an int >= 1 (``ValueError`` naming the bad one)."""
    values = []
    for text in self.sims.value:
      if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"--sims: each value of s must be an int >= 1, got {text!r}")
      values.append(int(text))
    return values

  def config(self, simulations: int) -> search_types.GTCFRConfig:
    """The library's GT-CFR config with these flags' values and s = ``simulations``."""
    return search_types.GTCFRConfig(
      simulations=simulations,
      simulations_per_phase=self.c.value,
      updates=self.updates.value,
      prior_temperature=self.prior_temperature.value,
      puct_constant=self.puct_constant.value,
      redraws=self.redraws.value,
      tie_break=self.tie_break.value,
      open_chance=self.open_chance.value,
      averaging=self.averaging.value,
    )

  def describe(self) -> str:
    return (
      f"SoG(s, {self.c.value:g}), {self.updates.value} updates, "
      f"T_prior {self.prior_temperature.value:g}, PUCT C {self.puct_constant.value:g}, "
      f"{self.redraws.value} redraws, ties by {self.tie_break.value}, chance opened "
      f"{self.open_chance.value.replace('_', ' ')}, {self.averaging.value} averaging"
    )

  def record(self) -> dict:
    """The flags' values for a script's JSON line."""
    return {
      "c": self.c.value,
      "updates": self.updates.value,
      "prior_temperature": str(self.prior_temperature.value),
      "puct_constant": self.puct_constant.value,
      "redraws": self.redraws.value,
      "tie_break": self.tie_break.value,
      "open_chance": self.open_chance.value,
      "averaging": self.averaging.value,
    }


def define_search_flags(sims: list[str]) -> SearchFlags:
  """Defines the search flags, --sims defaulting to ``sims`` and the rest to ``GTCFRConfig``'s."""
  defaults = search_types.GTCFRConfig()
  return SearchFlags(
    sims=flags.DEFINE_list("sims", sims, "Values of s (expansion simulations per search)."),
    c=flags.DEFINE_float(
      "c", defaults.simulations_per_phase, "Simulations per CFR phase (c).", lower_bound=1e-9
    ),
    updates=flags.DEFINE_enum(
      "updates", defaults.updates, cfr.UPDATES, "GT-CFR's CFR+ updates (default: the library's)."
    ),
    prior_temperature=flags.DEFINE_float(
      "prior_temperature",
      defaults.prior_temperature,
      "T_prior of PUCT's prior, softmax(logits / T) of the leaf model's policy head (SoG: 1); "
      "inf: a uniform prior (what zeros and the oracle give).",
      lower_bound=1e-9,
    ),
    puct_constant=flags.DEFINE_float(
      "puct_constant",
      defaults.puct_constant,
      "C of PUCT's expansion rule (values scaled to [-1, 1]).",
      lower_bound=0.0,
    ),
    redraws=flags.DEFINE_integer(
      "redraws",
      defaults.redraws,
      "Walks redrawn per simulation while a walk adds nothing.",
      lower_bound=0,
    ),
    tie_break=flags.DEFINE_enum(
      "tie_break",
      defaults.tie_break,
      list(search_types.TIE_BREAKS),
      "Who wins a PUCT tie: the lowest action or the highest prior.",
    ),
    open_chance=flags.DEFINE_enum(
      "open_chance",
      defaults.open_chance,
      list(search_types.OPEN_CHANCE),
      "A chance node is opened by a simulation of its own or with the node that adds it.",
    ),
    averaging=flags.DEFINE_enum(
      "averaging",
      defaults.averaging,
      list(search_types.AVERAGING),
      "Linear averaging weights from the search's first iteration "
      "(global) or from the node's entry (per_node).",
    ),
  )


@dataclasses.dataclass(frozen=True)
class ProtocolFlags:
  """--seeds, --first_seed, --batch_size and the re-solving flags of SoG's protocol."""

  seeds_count: flags.FlagHolder[int]
  first_seed: flags.FlagHolder[int]
  batch_size: flags.FlagHolder[int]
  safe: flags.FlagHolder[bool]
  unsafe: flags.FlagHolder[bool]
  alpha: flags.FlagHolder[float]
  terminate_values: flags.FlagHolder[str]
  predecessor: flags.FlagHolder[str]

  def seeds(self) -> range:
    return range(self.first_seed.value, self.first_seed.value + self.seeds_count.value)

  def resolving_config(self) -> resolving.ResolvingConfig:
    """The re-solving the flags ask for (``ValueError`` if --safe and --unsafe are both given)."""
    if self.unsafe.value and flags.FLAGS["safe"].present and self.safe.value:
      raise ValueError("--safe and --unsafe contradict each other; give one")
    return resolving.ResolvingConfig(
      safe=self.safe.value and not self.unsafe.value,
      alpha=self.alpha.value,
      terminate_values=self.terminate_values.value,
    )

  def describe(self) -> str:
    config = self.resolving_config()
    kind = f"safe (alpha={config.alpha:g})" if config.safe else "unsafe"
    return (
      f"{kind} re-solving from the {self.predecessor.value} predecessor's search, seeds "
      f"{self.seeds().start}-{self.seeds().stop - 1}"
    )


def define_protocol_flags(seeds: int = 3) -> ProtocolFlags:
  """Defines the protocol's flags, --seeds defaulting to ``seeds``, re-solving to the library's."""
  defaults = resolving.ResolvingConfig()
  return ProtocolFlags(
    seeds_count=flags.DEFINE_integer(
      "seeds", seeds, "Composed policies (seeds) per setting.", lower_bound=1
    ),
    first_seed=flags.DEFINE_integer(
      "first_seed",
      0,
      "Seeds run are first_seed, first_seed + 1, ... (to split a long evaluation over runs).",
      lower_bound=0,
    ),
    batch_size=flags.DEFINE_integer(
      "batch_size",
      1,
      "Searches per vmapped batch in the smallest pool, proportionally fewer in larger ones (one "
      "breadth-first depth at a time; sog.search.pool.sized.SizedPools.rows).",
      lower_bound=1,
    ),
    safe=flags.DEFINE_bool(
      "safe", defaults.safe, "Safe re-solving (the gadget); --nosafe or --unsafe: unsafe."
    ),
    unsafe=flags.DEFINE_bool("unsafe", False, "Unsafe re-solving (same as --nosafe)."),
    alpha=flags.DEFINE_float(
      "alpha",
      defaults.alpha,
      "Weight of the gadget's opponent range in the mix.",
      lower_bound=0.0,
      upper_bound=1.0,
    ),
    terminate_values=flags.DEFINE_enum(
      "terminate_values",
      defaults.terminate_values,
      resolving.TERMINATE_VALUES,
      "Which opponent values of the last search the gadget's Terminate pays.",
    ),
    predecessor=flags.DEFINE_enum(
      "predecessor",
      "own",
      list(tree_lib.PREDECESSORS),
      "The search a re-solve continues: the searching player's last (own) or the nearest "
      "decision's above, whoever acted (nearest).",
    ),
  )


@dataclasses.dataclass(frozen=True)
class PrecisionFlags:
  """--float64: the precision of the searches."""

  float64: flags.FlagHolder[bool]

  def dtype(self):
    """The searches' float type; float64 switches JAX's x64 mode on (call before any search)."""
    if self.float64.value:
      jax.config.update("jax_enable_x64", True)
      return jnp.float64
    return jnp.float32


def define_precision_flags() -> PrecisionFlags:
  return PrecisionFlags(
    float64=flags.DEFINE_bool(
      "float64",
      False,
      "Search in float64 (JAX's x64 mode): the precision of the fixtures recorded from the table "
      "search before it left the library (float32 rounding can flip ties in regret matching).",
    ),
  )


@dataclasses.dataclass(frozen=True)
class LeafFlags:
  """--leaf and what refines it: the exact oracle's budget, an injected value error, and the exact
  oracle answering one class of the leaf's queries (attribution)."""

  leaf: flags.FlagHolder[str]
  oracle_iterations: flags.FlagHolder[int]
  oracle_warm_start: flags.FlagHolder[bool]
  oracle_policy_prior: flags.FlagHolder[bool]
  value_error: flags.FlagHolder[float]
  value_error_seed: flags.FlagHolder[int]
  oracle_on: flags.FlagHolder[str | None]
  reach_threshold: flags.FlagHolder[float]

  def model(self, game: sog.games.Game, on_tables: bool = False) -> leaf_models.LeafModel:
    """The leaf model the flags name, for GT-CFR's searches or, ``on_tables``, for ReBeL's solves
    on the subgame tables (the exact oracle, alone or answering the routed queries, is the
    tables' own there)."""

    def oracle(warm_start: bool, policy_prior: bool) -> leaf_models.LeafModel:
      iterations = self.oracle_iterations.value
      if on_tables:
        return leaf_models.exact_leaf_model(
          iterations, warm_start=warm_start, policy_prior=policy_prior
        )
      return belief_oracle.exact_leaf_model(
        game, iterations, warm_start=warm_start, policy_prior=policy_prior
      )

    if self.leaf.value == "oracle":
      model = oracle(self.oracle_warm_start.value, self.oracle_policy_prior.value)
    else:
      model = leaf_model(self.leaf.value, game)
    if self.value_error.value > 0:
      model = leaf_models.with_value_error(
        model, self.value_error.value, self.value_error_seed.value
      )
    if self.oracle_on.value is not None:
      model = leaf_models.routed_leaf_model(
        model, oracle(False, False), self.oracle_on.value, self.reach_threshold.value, game
      )
    return model

  def describe(self) -> str:
    text = f"leaf={self.leaf.value}"
    if self.leaf.value == "oracle":
      text += (
        f" ({self.oracle_iterations.value} CFR+ iterations per call"
        f"{', warm-started' if self.oracle_warm_start.value else ''}"
        f"{', its policy as the prior' if self.oracle_policy_prior.value else ''})"
      )
    if self.value_error.value:
      text += f" + value error sigma {self.value_error.value:g}"
    if self.oracle_on.value is not None:
      text += (
        f", the exact oracle ({self.oracle_iterations.value} CFR+ iterations) on its "
        f"{self.oracle_on.value} queries"
        + (
          f" (threshold {self.reach_threshold.value:g})"
          if self.oracle_on.value in ("low_reach", "high_reach")
          else ""
        )
      )
    return text

  def record(self) -> dict:
    return {
      "leaf": self.leaf.value,
      "oracle_iterations": self.oracle_iterations.value,
      "oracle_warm_start": self.oracle_warm_start.value,
      "oracle_policy_prior": self.oracle_policy_prior.value,
      "leaf_value_error": self.value_error.value,
      "leaf_value_error_seed": self.value_error_seed.value,
      "oracle_on": self.oracle_on.value,
      "reach_threshold": self.reach_threshold.value,
    }


def define_leaf_flags(
  leaf: str = "oracle", oracle_iterations: int = ORACLE_ITERATIONS
) -> LeafFlags:
  """Defines the leaf-model flags, --leaf defaulting to ``leaf``."""
  return LeafFlags(
    leaf=flags.DEFINE_string(
      "leaf",
      leaf,
      f"{' | '.join(LEAF_CHOICES)} | a CVPN checkpoint "
      "directory (untrained: a CVPN of the default size, seed 0) | several checkpoint "
      "directories separated by commas (their ensemble: the mean of their outputs).",
    ),
    oracle_iterations=flags.DEFINE_integer(
      "oracle_iterations",
      oracle_iterations,
      "CFR+ iterations of each exact-oracle call.",
      lower_bound=1,
    ),
    oracle_warm_start=flags.DEFINE_bool(
      "oracle_warm_start",
      False,
      "Each exact-oracle call continues the search's previous "
      "call's CFR+ run (so t calls have solved below the frontier for t * oracle_iterations "
      "iterations).",
    ),
    oracle_policy_prior=flags.DEFINE_bool(
      "oracle_policy_prior",
      False,
      "The exact oracle's prior is its solve's policy at each "
      "leaf (a perfect policy head) instead of uniform; with k = 1 (perfect information) the "
      "prior picks the child each expansion adds.",
    ),
    value_error=flags.DEFINE_float(
      "leaf_value_error",
      0.0,
      "sigma of a fixed N(0, sigma^2) error added to the leaf model's "
      "conditional values at each (public state, player, infostate) "
      "(leaf_models.with_value_error): with --leaf=oracle, a perfect network but for an error "
      "of known size.",
      lower_bound=0.0,
    ),
    value_error_seed=flags.DEFINE_integer("leaf_value_error_seed", 0, "Seed of that error."),
    oracle_on=flags.DEFINE_enum(
      "oracle_on",
      None,
      list(leaf_models.QUERY_CLASSES),
      "The cold exact oracle (--oracle_iterations a call) answers this class of --leaf's queries, "
      "--leaf the rest (leaf_models.routed_leaf_model): what the leaf's error there costs.",
    ),
    reach_threshold=flags.DEFINE_float(
      "reach_threshold",
      0.1,
      "--oracle_on=low_reach / high_reach: the opponent's range mass below / from which a "
      "player's values are the oracle's.",
      lower_bound=0.0,
    ),
  )


def leaf_directories(spec: str) -> list[str]:
  """The checkpoint directories of a --leaf value: one, or several separated by commas outside the
  parentheses of a game's parameters (``checkpoints/connect_four(rows=3,columns=3,x_in_row=3)`` is
  one directory)."""
  return [part for part in re.split(r",(?![^()]*\))", spec) if part]


def leaf_model(
  spec: str,
  game: sog.games.Game,
  oracle_iterations: int = ORACLE_ITERATIONS,
  oracle_warm_start: bool = False,
  oracle_policy_prior: bool = False,
) -> leaf_models.LeafModel:
  """The leaf model ``spec`` names: "oracle" (a CFR+ solve of every frontier leaf's subgame),
  "zeros", "untrained" (a CVPN of the default size initialised with seed 0), a CVPN checkpoint
  directory of ``game``, or several separated by commas (their ensemble, the mean of their
  outputs: :func:`sog.nets.ensemble_leaf_model`)."""
  if spec == "oracle":
    return belief_oracle.exact_leaf_model(
      game, oracle_iterations, warm_start=oracle_warm_start, policy_prior=oracle_policy_prior
    )
  if spec == "zeros":
    return leaf_models.zero_leaf_model()
  if spec == "untrained":
    network = cvpn_lib.make_network(game.public_game)
    return leaf_lib.cvpn_leaf_model(
      network, cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(0)), game.name
    )
  directories = leaf_directories(spec)
  for directory in directories:
    if not pathlib.Path(directory).is_dir():
      raise ValueError(
        f"--leaf: {directory!r} is neither one of {LEAF_CHOICES} nor a checkpoint directory"
      )
  if len(directories) > 1:
    return leaf_lib.ensemble_leaf_model(
      [checkpoint.restore_leaf_model(directory, game.name) for directory in directories]
    )
  return checkpoint.restore_leaf_model(spec, game.name)


def progress_printer(label: str, unit: str = "search") -> Callable[[int, int], None]:
  """A ``progress(done, total)`` callback (``compose``'s, a dataset's): a tqdm bar of the ``unit``s
  done (a line about every 10 s off a terminal), closed when the last is done."""
  progress: list[monitoring.Progress] = []

  def update(done: int, total: int) -> None:
    if not progress:
      progress.append(monitoring.Progress(f"  {label}", total, unit=unit))
    progress[0].update(done)
    if done >= total:
      progress[0].close()

  return update
