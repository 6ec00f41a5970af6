"""Typed, validated configuration of a self-play experiment, built from an ``ml_collections``
config.

Experiment files (``configs/*.py``) return a ``ConfigDict`` so that absl's ``config_flags`` can
override any field on the command line (``--config.selfplay.q_search=0.5``);
:func:`from_config_dict` turns it into the frozen dataclasses the library runs on, checking every
value (and naming unknown or missing keys) before anything is built. Defaults follow SoG's table S2
where it gives a value; the sizes are scaled down for one CPU host (see ``configs/README.md``).
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Any

import ml_collections

from sog.games import registry
from sog.nets import config as nets_config
from sog.search import resolving as resolving_lib
from sog.search import types as search_types

UNREACHED_TARGETS = ("best_response", "average")


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
  """The self-play roles (SoG, Algorithm 2) and their buffers.

  Attributes:
    games: actor games played side by side (each round makes one move in every one of them).
    solver_batch: queries the query solver answers per round.
    search_chunk: searches per vmapped batch on the belief pool, for the actors' moves and the
      solver's queries alike (a batch holds searches of one pool size, ``search_chunk`` of them in
      the smallest pool and proportionally fewer in larger ones:
      :meth:`~sog.search.pool.sized.SizedPools.rows`; one compiled search per config and pool
      size).
    eps: an actor plays from (1 - eps) * search policy + eps * uniform over the legal actions.
    p_td1: probability that a search of the played line also becomes a TD(1) value example (the
      game's outcome at the visited infostates).
    q_search: probability that each of a search's sampled leaf queries
      (``GTCFRConfig.query_samples`` of them, a uniform sample of all its queries) goes to the query
      buffer.
    q_recursive: the same for the query solver's own searches.
    q_first: the same for the actors' first searches of a game (each player's searches without a
      predecessor, from the game's root beliefs); None: q_search. The protocol's exploitability is
      most sensitive to the values these searches are given (docs/results/leduc_selfplay.md).
    unreached_targets: the value target the query solver gives an infostate that the query's range
      does not reach: ``"best_response"``, the value of the best response there against the
      opponent's average policy (what a deviation into the query's public state is worth, the value
      CFR's regrets above the query and the gadget read); ``"average"``, the search's value there
      under its average policy, which with no own reach to weigh it plays uniformly below.
    actor_value_targets: whether an actor's examples also carry value targets from its search: the
      search's counterfactual values at the public state it decided at (unreached infostates by
      ``unreached_targets``), as the solver's examples carry. False is SoG's: an actor's search
      gives the policy target, values come from solved queries and TD(1). True bootstraps every
      visited state from its search's root, as AlphaZero-style self-play on a perfect-information
      game does (``configs/pgx_*.py``).
    random_queries: queries added per round at random public belief states (uniform non-terminal
      public states, ranges of random policies or Dirichlet noise: ``sog.nets.dataset.random_pbs``),
      beside the searches' own. The protocol re-solves at every public state, with ranges the
      actors' games rarely reach; these queries spread the network's training data over them.
    query_capacity: queries held; the oldest are dropped when it is full.
    replay_capacity: examples held (a sliding window: the newest replace the oldest).
    max_updates: train steps one example may be drawn for.
    batch_size: examples per train step.
    min_replay: examples in the replay buffer before the first train step.
    train_steps_per_round: train steps per round of acting and solving (per move of ``games`` games;
      a Ray run counts each finished actor task as one).
    publish_every: train steps between parameter copies to the actors and the solver (K).

  How the actors re-solve (the gadget's ``safe`` and ``alpha``) is ``Experiment.resolving``, a
  :class:`sog.search.ResolvingConfig` like every other re-solving search's.
  """

  games: int = 8
  solver_batch: int = 8
  search_chunk: int = 1
  eps: float = 0.0
  p_td1: float = 0.0
  q_search: float = 0.3
  q_recursive: float = 0.1
  q_first: float | None = None
  unreached_targets: str = "best_response"
  actor_value_targets: bool = False
  random_queries: int = 0
  query_capacity: int = 20_000
  replay_capacity: int = 100_000
  max_updates: int = 5
  batch_size: int = 128
  min_replay: int = 256
  train_steps_per_round: int = 1
  publish_every: int = 10

  def __post_init__(self):
    positive = (
      "games",
      "solver_batch",
      "search_chunk",
      "query_capacity",
      "replay_capacity",
      "max_updates",
      "batch_size",
      "publish_every",
    )
    for name in positive:
      if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
        raise ValueError(f"selfplay.{name} must be an int >= 1, got {getattr(self, name)!r}")
    for name in ("min_replay", "train_steps_per_round", "random_queries"):
      if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
        raise ValueError(f"selfplay.{name} must be an int >= 0, got {getattr(self, name)!r}")
    for name in ("eps", "p_td1", "q_search", "q_recursive", "q_first"):
      if name == "q_first" and self.q_first is None:
        continue
      if not 0.0 <= getattr(self, name) <= 1.0:
        raise ValueError(f"selfplay.{name} must be in [0, 1], got {getattr(self, name)!r}")
    if not isinstance(self.actor_value_targets, bool):
      raise ValueError(
        f"selfplay.actor_value_targets must be True or False, got {self.actor_value_targets!r}"
      )
    if self.unreached_targets not in UNREACHED_TARGETS:
      raise ValueError(
        f"selfplay.unreached_targets must be one of {UNREACHED_TARGETS}, got "
        f"{self.unreached_targets!r}"
      )
    if self.batch_size > self.replay_capacity:
      raise ValueError(
        f"selfplay.batch_size ({self.batch_size}) exceeds replay_capacity ({self.replay_capacity})"
      )


BACKENDS = ("local", "ray")


@dataclasses.dataclass(frozen=True)
class RayConfig:
  """The Ray workers of a run whose ``Experiment.backend`` is "ray".

  Attributes:
    actor_workers: Ray actors playing ``selfplay.games`` games each.
    solver_workers: Ray actors answering ``selfplay.solver_batch`` queries at a time each.
    cpus_per_worker: Ray CPUs each worker reserves (a fraction lets workers share a core).
    trainer_cpus: Ray CPUs the trainer (a Ray actor holding the replay buffer) reserves; 0 lets it
      share the cores, as the trainer of a one-process run does.
    trainer_gpus: GPUs the trainer reserves (a fraction shares one): on a cluster, put it on a GPU
      node this way (with JAX's CUDA build installed there).
    address: the Ray cluster to join ("auto", "ray://HOST:10001", ...); "" starts a local one on
      this machine's cores.
  """

  actor_workers: int = 1
  solver_workers: int = 1
  cpus_per_worker: float = 1.0
  trainer_cpus: float = 0.0
  trainer_gpus: float = 0.0
  address: str = ""

  def __post_init__(self):
    for name in ("actor_workers", "solver_workers"):
      if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
        raise ValueError(f"ray.{name} must be an int >= 1, got {getattr(self, name)!r}")
    if not self.cpus_per_worker > 0:
      raise ValueError(f"ray.cpus_per_worker must be > 0, got {self.cpus_per_worker!r}")
    for name in ("trainer_cpus", "trainer_gpus"):
      if not getattr(self, name) >= 0:
        raise ValueError(f"ray.{name} must be >= 0, got {getattr(self, name)!r}")

  @property
  def workers(self) -> int:
    return self.actor_workers + self.solver_workers


@dataclasses.dataclass(frozen=True)
class EvaluationConfig:
  """The periodic exploitability check (SoG's composed-policy protocol, ``sog.protocol.compose``).

  Attributes:
    settings: the SoG(s, c) settings evaluated, as (s, c) pairs; empty: no evaluation during the run
      (evaluate its snapshots afterwards with ``scripts/evaluate.py --leaf``, see
      ``Experiment.snapshot_every_steps``).
    seeds: composed policies per setting.
    every_steps: train steps between evaluations (0: only at the start and the end).
    batch_size: searches per vmapped batch of the protocol in the smallest pool (fewer in larger
      pools, as ``search_chunk``; 1, the default, shares the actors' compiled search when the
      settings match theirs).
    first_seed: the protocol's seeds are first_seed, ..., first_seed + seeds - 1 (a selection of
      networks uses seeds beyond every reported one).
    keep_best: keep the network of the evaluation with the lowest mean exploitability at the first
      setting in ``best/`` of the work directory (``best/best.json`` says its step and value): the
      run selects its network by the protocol.
  """

  settings: tuple[tuple[int, float], ...] = ((100, 1.0),)
  seeds: int = 3
  every_steps: int = 1000
  batch_size: int = 1
  first_seed: int = 0
  keep_best: bool = False

  def __post_init__(self):
    for setting in self.settings:
      if len(setting) != 2 or int(setting[0]) < 1 or float(setting[1]) <= 0:
        raise ValueError(f"evaluation.settings: each must be (s >= 1, c > 0), got {setting!r}")
    if self.seeds < 1 or self.every_steps < 0 or self.batch_size < 1 or self.first_seed < 0:
      raise ValueError(
        "evaluation: seeds and batch_size must be >= 1, every_steps and first_seed >= 0"
      )
    if self.keep_best and not self.settings:
      raise ValueError(
        "evaluation.keep_best selects by the first setting: give evaluation.settings"
      )

  @property
  def seed_range(self) -> range:
    return range(self.first_seed, self.first_seed + self.seeds)

  @property
  def names(self) -> tuple[str, ...]:
    return tuple(setting_name(s, c) for s, c in self.settings)


def setting_name(simulations: int, simulations_per_phase: float) -> str:
  """The paper's name of a search setting, e.g. ``SoG(100,1)``."""
  return f"SoG({int(simulations)},{float(simulations_per_phase):g})"


def parse_setting(name: str) -> tuple[int, float]:
  """(s, c) from a setting's name ``SoG(s,c)``; raises ``ValueError`` for anything else."""
  match = re.fullmatch(r"SoG\((\d+),([0-9.]+)\)", name.strip())
  if not match:
    raise ValueError(f"a setting is named SoG(s,c), e.g. SoG(100,1); got {name!r}")
  return int(match.group(1)), float(match.group(2))


@dataclasses.dataclass(frozen=True)
class Experiment:
  """Everything one training run needs.

  Attributes:
    game: registry name of the game.
    game_modules: modules (dotted names or ``.py`` paths) that register the game where it is not
      built in (:func:`sog.games.register`); every process of the run imports them before loading
      the game.
    actor, solver: the GT-CFR searches of the actors and of the query solver (SoG(s, c),
      T_prior, ...).
    resolving: how the actors' and the evaluation's searches re-solve (safe, alpha, Terminate's
      values).
    network, optimizer: the CVPN and its training.
    selfplay: the roles and buffers.
    evaluation: the periodic exploitability check.
    backend: where the roles run: "local", interleaved in one process round by round
      (:class:`sog.selfplay.loop.SelfPlay`); "ray", actors, query solvers and the trainer (with the
      replay buffer) as Ray actors, the query buffer in the driver
      (:class:`sog.selfplay.distributed.RaySelfPlay`).
    ray: the Ray workers (read only when ``backend`` is "ray").
    max_steps: train steps of the run (it stops at whichever of max_steps and max_seconds comes
      first).
    max_seconds: budget of self-play time (rounds; evaluations excluded), in seconds, counted over
      resumptions (0: none).
    checkpoint_every_seconds: time between checkpoints.
    snapshot_every_steps: train steps between snapshots of the network (``snapshots/step_N/`` in the
      work directory, each a checkpoint ``scripts/evaluate.py --leaf`` takes); 0: none.
    diagnostics_every_steps: train steps between measurements of the value errors against exact
      solves (:mod:`sog.selfplay.diagnostics`: the solver's targets and the network, written to
      ``diagnostics.csv``); 0: none. Only for games whose whole tree CFR+ solves in seconds.
    seed: seeds the network's initialisation and every random choice of the run.
  """

  game: str
  actor: search_types.GTCFRConfig
  solver: search_types.GTCFRConfig
  resolving: resolving_lib.ResolvingConfig
  network: nets_config.NetworkConfig
  optimizer: nets_config.OptimizerConfig
  selfplay: SelfPlayConfig
  evaluation: EvaluationConfig
  backend: str = "local"
  ray: RayConfig = RayConfig()
  max_steps: int = 10_000
  max_seconds: float = 0.0
  checkpoint_every_seconds: float = 300.0
  snapshot_every_steps: int = 0
  diagnostics_every_steps: int = 0
  seed: int = 0
  game_modules: tuple[str, ...] = ()

  def __post_init__(self):
    registry.import_game_modules(self.game_modules)  # ValueError for a bad or missing module
    object.__setattr__(
      self,
      "game_modules",
      tuple(  # a .py path as an absolute one, for any process
        str(pathlib.Path(m).resolve()) if m.endswith(".py") else m for m in self.game_modules
      ),
    )
    registry.canonical_name(self.game)  # ValueError naming the registered games
    if self.backend not in BACKENDS:
      raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
    if (
      self.max_steps < 1
      or self.max_seconds < 0
      or self.checkpoint_every_seconds <= 0
      or self.snapshot_every_steps < 0
      or self.diagnostics_every_steps < 0
    ):
      raise ValueError(
        "max_steps must be >= 1, max_seconds >= 0, checkpoint_every_seconds > 0, "
        "snapshot_every_steps and diagnostics_every_steps >= 0; got "
        f"{self.max_steps}, {self.max_seconds}, {self.checkpoint_every_seconds}, "
        f"{self.snapshot_every_steps}, {self.diagnostics_every_steps}"
      )

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)

  def load_game(self) -> registry.Game:
    """The game, its modules imported first (a Ray worker unpickles the experiment without
    ``__post_init__``, so it imports them here)."""
    registry.import_game_modules(self.game_modules)
    return registry.load(self.game)


_SECTIONS = {
  "actor": search_types.GTCFRConfig,
  "solver": search_types.GTCFRConfig,
  "resolving": resolving_lib.ResolvingConfig,
  "network": nets_config.NetworkConfig,
  "optimizer": nets_config.OptimizerConfig,
  "selfplay": SelfPlayConfig,
  "evaluation": EvaluationConfig,
  "ray": RayConfig,
}


def _section(name: str, cls: type, values: dict[str, Any]):
  fields = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(values) - fields)
  if unknown:
    raise ValueError(f"config.{name}: unknown keys {unknown}; valid keys: {sorted(fields)}")
  if name == "evaluation" and "settings" in values:
    values = {**values, "settings": tuple((int(s), float(c)) for s, c in values["settings"])}
  return cls(**values)


def from_config_dict(config: ml_collections.ConfigDict | dict[str, Any]) -> Experiment:
  """The :class:`Experiment` of an experiment file's config; ``ValueError`` for unknown keys or bad
  values (each message names the field and what is allowed)."""
  values = config.to_dict() if isinstance(config, ml_collections.ConfigDict) else dict(config)
  top = {f.name for f in dataclasses.fields(Experiment)}
  unknown = sorted(set(values) - top)
  if unknown:
    raise ValueError(f"config: unknown keys {unknown}; valid keys: {sorted(top)}")
  if "game" not in values:
    raise ValueError("config: the game is missing (config.game)")
  _move_resolving_keys(values)
  for name, cls in _SECTIONS.items():
    values[name] = _section(name, cls, dict(values.get(name) or {}))
  return Experiment(**values)


def _move_resolving_keys(values: dict[str, Any]) -> None:
  """Reads experiments written before re-solving had its own section (the ``experiment`` of an older
  run's ``selfplay.json`` held ``selfplay.safe`` and ``selfplay.alpha``): moves those keys to
  ``resolving``, and refuses a config that sets one in both places."""
  selfplay = dict(values.get("selfplay") or {})
  moved = {key: selfplay.pop(key) for key in ("safe", "alpha") if key in selfplay}
  if not moved:
    return
  resolving = dict(values.get("resolving") or {})
  both = sorted(set(moved) & set(resolving))
  if both:
    raise ValueError(
      f"config: {['selfplay.' + key for key in both]} and "
      f"{['resolving.' + key for key in both]} both set; re-solving settings belong in "
      "config.resolving"
    )
  values["selfplay"], values["resolving"] = selfplay, {**resolving, **moved}


def default_config_dict(
  game: str,
  simulations: int = search_types.GTCFRConfig.simulations,
  simulations_per_phase: float = search_types.GTCFRConfig.simulations_per_phase,
) -> ml_collections.ConfigDict:
  """Every field of an :class:`Experiment` for ``game`` at its default, the actors' and the solver's
  searches SoG(simulations, simulations_per_phase), as a ``ConfigDict`` that experiment files start
  from and change (so the command line can override any field)."""
  experiment_defaults = {
    f.name: f.default
    for f in dataclasses.fields(Experiment)
    if f.default is not dataclasses.MISSING
  }
  sections = {name: dataclasses.asdict(cls()) for name, cls in _SECTIONS.items()}
  sections["evaluation"]["settings"] = tuple(sections["evaluation"]["settings"])
  # A typed None, so that the command line can set it (--config.selfplay.q_first=1.0).
  sections["selfplay"]["q_first"] = ml_collections.config_dict.placeholder(float)
  for role in ("actor", "solver"):
    sections[role].update(simulations=simulations, simulations_per_phase=simulations_per_phase)
  return ml_collections.ConfigDict({"game": game, **experiment_defaults, **sections})
