"""What every GT-CFR search shares: SoG(s, c) and the constants the paper leaves open
(:class:`GTCFRConfig`), and the sample of a search's leaf queries (:class:`QuerySample`).

Kept apart from the search (:class:`sog.search.pool.GTCFR`) so that configs, scripts and
self-play can name them without importing a searcher."""

from __future__ import annotations

import dataclasses
import math

import chex
import jax.numpy as jnp

from sog.search import cfr

TIE_BREAKS = ("action", "prior")
OPEN_CHANCE = ("own_simulation", "with_parent")
AVERAGING = ("global", "per_node")


@dataclasses.dataclass(frozen=True)
class GTCFRConfig:
  """SoG(s, c) and the constants the paper leaves open.

  Attributes:
    simulations: s, expansion simulations in the whole search (rounded up to whole phases).
    simulations_per_phase: c; each phase runs ceil(1/c) CFR+ updates and ceil(c) simulations
      (c = 0.1: one simulation every 10 updates; c = 10: 10 simulations after each update).
    expansion_k: actions whose children one expansion adds; None: the game's default (all of them
      for imperfect information, 1 for perfect information).
    puct_constant: C in PUCT, on values scaled to [-1, 1] (AlphaZero's order of magnitude).
    prior_temperature: T_prior of the softmax turning the leaf model's logits into PUCT's prior;
      ``math.inf`` makes the prior uniform over the legal actions (the logits are then ignored).
    virtual_loss: subtracted from Q(s, a) per simulation of the same phase already through (s, a);
      only acts when ceil(c) > 1.
    query_samples: size of the uniform sample of leaf queries (PBSs) kept across the whole search
      (self-play's actors and query solver hand them on; other searches ignore them).
    updates: "alternating" (the default: player 0, then player 1 against player 0's new policy, as
      OpenSpiel's CFR+: two passes and two leaf-model calls per update, and far faster convergence
      per update) or "simultaneous" (SoG's GT-CFR as the paper states it); the two are compared
      in docs/results/leduc_protocol.md.
    redraws: how often a simulation whose walk added no public state (it ended at a terminal, or
      found nothing missing) is walked again from a new world state, while the focus's subgame is
      not complete, so that each of the s simulations adds to the tree as the paper's complexity
      section counts them ("k child states are added to the tree at each iteration"); 0: every walk
      counts as a simulation, whatever it adds (the library before this option). Every walk's
      visits count either way. What redraws buy is measured in docs/results/leduc_selfplay.md,
      "How the search grows".
    tie_break: how PUCT breaks a tie of Q + U between actions: "prior" (the highest prior, at random
      among equal priors) or "action" (the lowest action index, argmax's order: fold first in poker;
      the library before this option). At an infostate with no visits U is 0, so PUCT is argmax Q,
      which ties wherever the actions' values do (at 0 before the node's first CFR pass).
    open_chance: "own_simulation" (a chance node added by an expansion is a frontier leaf that a
      later simulation opens) or "with_parent" (an expansion that adds a chance node adds its
      outcomes too, so opening it costs no simulation).
    averaging: the weights of the linear average policy: "global" (iteration t of the whole search
      weighs t at every node) or "per_node" (a node's t counts from the iteration it became interior
      in the tree, so a late-added node's first policies weigh as a new CFR run's do).
  """

  simulations: int = 100
  simulations_per_phase: float = 1.0
  expansion_k: int | None = None
  puct_constant: float = 1.0
  prior_temperature: float = 1.0
  virtual_loss: float = 1.0
  query_samples: int = 4
  updates: str = "alternating"
  redraws: int = 16
  tie_break: str = "prior"
  open_chance: str = "own_simulation"
  averaging: str = "global"

  def __post_init__(self):
    checks = [
      (
        isinstance(self.simulations, int) and self.simulations >= 1,
        "simulations (s) must be an int >= 1",
      ),
      (self.simulations_per_phase > 0, "simulations_per_phase (c) must be > 0"),
      (
        self.expansion_k is None or (isinstance(self.expansion_k, int) and self.expansion_k >= 1),
        "expansion_k (k) must be None (the game's default) or an int >= 1",
      ),
      (self.puct_constant >= 0, "puct_constant must be >= 0"),
      (self.prior_temperature > 0, "prior_temperature must be > 0"),
      (self.virtual_loss >= 0, "virtual_loss must be >= 0"),
      (
        isinstance(self.query_samples, int) and self.query_samples >= 0,
        "query_samples must be an int >= 0",
      ),
      (self.updates in cfr.UPDATES, f"updates must be one of {cfr.UPDATES}"),
      (isinstance(self.redraws, int) and self.redraws >= 0, "redraws must be an int >= 0"),
      (self.tie_break in TIE_BREAKS, f"tie_break must be one of {TIE_BREAKS}"),
      (self.open_chance in OPEN_CHANCE, f"open_chance must be one of {OPEN_CHANCE}"),
      (self.averaging in AVERAGING, f"averaging must be one of {AVERAGING}"),
    ]
    for ok, message in checks:
      if not ok:
        raise ValueError(f"GT-CFR config: {message}; got {self}")

  @property
  def updates_per_phase(self) -> int:
    return math.ceil(round(1.0 / self.simulations_per_phase, 9))

  @property
  def passes_per_update(self) -> int:
    """Tree passes (each valuing the frontier with one leaf-model call) per CFR update: one
    simultaneous pass, or one per player when alternating."""
    return 1 if self.updates == "simultaneous" else 2

  @property
  def simulations_in_phase(self) -> int:
    return math.ceil(round(self.simulations_per_phase, 9))

  @property
  def phases(self) -> int:
    return math.ceil(self.simulations / self.simulations_in_phase)


@chex.dataclass(frozen=True)
class QuerySample:
  """A uniform sample (without replacement) of the leaf queries of a search: the Q queries with the
  smallest random keys; ``keys`` is inf in unused rows."""

  nodes: chex.Array  # [Q] int32, the pool slots of the queried leaves
  ranges: chex.Array  # [Q, 2, S]
  keys: chex.Array  # [Q]

  @property
  def valid(self) -> chex.Array:
    return jnp.isfinite(self.keys)
