"""The exploitability of a search agent (SoG's protocol, "Evaluation" in the paper's Results).

A search agent's policy is not a fixed table: each search depends on the searches before it in the
same game. SoG measures it this way: for one seed, run the agent at every public state where a
player acts, in breadth-first order, each search conditioned on the searches at its predecessors
(the searching player's last decision above it: continual re-solving from that search's summary);
compose the policies the searches give at their public states into one policy over the whole public
tree; compute its exact exploitability. Over N seeds, report min / mean / max (the paper used 50).

Searches at one breadth-first depth are independent given the depths above, so they run as vmapped
batches of a fixed size, on the belief pool (:class:`~sog.search.pool.GTCFR`): each grows its
own tree from its re-solving root s_prev, in a pool sized to s_prev's subgame, so a deep re-solve
costs what its subgame costs, and nothing but the evaluation needs the enumerated tree.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import tree as tree_lib
from sog.search import predecessors as predecessors_lib
from sog.search import resolving
from sog.search.pool import belief_resolver
from sog.search.pool import belief_resolving
from sog.search.pool import sized
from sog.search.pool.belief_searcher import GTCFR


@dataclasses.dataclass(frozen=True)
class Composition:
  """The outcome of the protocol.

  Attributes:
    seeds: the seeds, one composed policy each.
    exploitability: [len(seeds)] float64, exact, in the game's utility units.
    policies: [len(seeds), N, S, A] float64, the composed policies.
    searches: searches run (decision public states times seeds).
    seconds: wall time of the searches and the evaluation.
    growth: per-search means of what the searches grew (:meth:`SearchGrowth.means`).
  """

  seeds: tuple[int, ...]
  exploitability: np.ndarray
  policies: np.ndarray
  searches: int
  seconds: float
  growth: dict[str, float] = dataclasses.field(default_factory=dict)

  def summary(self) -> dict[str, float]:
    e = self.exploitability
    return {"min": float(e.min()), "mean": float(e.mean()), "max": float(e.max())}


class SearchGrowth:
  """Per-search totals of what a protocol's searches grew, summed batch by batch: public states
  expanded (interior in the final tree, the start's branch included), expansion walks made, walks
  that added nothing (they ended at a terminal or found nothing missing), and searches whose tree
  ended complete (the focus's whole subgame grown; its mean is the share of such searches)."""

  KEYS = ("expanded", "walks", "idle_walks", "complete")

  def __init__(self):
    self.totals = dict.fromkeys(self.KEYS, 0)
    self.searches = 0

  def add(self, results, rows: int) -> None:
    """Counts the first ``rows`` searches of a batch of results (the rest are padding)."""
    expanded = np.asarray(results.expanded)[:rows].sum(-1)
    walks = np.asarray(results.walks)[:rows]
    idle = walks - np.asarray(results.growing_walks)[:rows]
    complete = np.asarray(results.complete)[:rows]
    for key, value in zip(self.KEYS, (expanded, walks, idle, complete), strict=True):
      self.totals[key] += int(value.sum())
    self.searches += rows

  def means(self) -> dict[str, float]:
    return {key: total / max(self.searches, 1) for key, total in self.totals.items()}


def search_keys(seeds: Sequence[int], nodes: Sequence[int]) -> jax.Array:
  """[J] PRNG keys, job j's ``fold_in(PRNGKey(seeds[j]), nodes[j])``: a search's randomness depends
  only on its seed and public state, not on which other searches run beside it. Vectorised: a stack
  of J separate keys compiles in time quadratic in J (10 minutes for the 20k searches of one depth
  of glasses_hidden6 over 10 seeds)."""
  seeds, nodes = np.asarray(seeds, np.int64), np.asarray(nodes, np.int64)
  if seeds.shape != nodes.shape or seeds.ndim != 1:
    raise ValueError(
      f"seeds and nodes must be equal-length lists, got {seeds.shape}, {nodes.shape}"
    )
  return jax.vmap(jax.random.fold_in)(
    jax.vmap(jax.random.PRNGKey)(jnp.asarray(seeds)), jnp.asarray(nodes, jnp.uint32)
  )


def uniform_policies(
  tree: tree_lib.PublicTree, seeds: Sequence[int], batch_size: int
) -> tuple[tuple[int, ...], np.ndarray]:
  """The seeds as ints and one uniform policy [len(seeds), N, S, A] per seed, for a composition to
  fill in (``ValueError`` for no seeds or a batch size below 1)."""
  if batch_size < 1:
    raise ValueError(f"batch_size must be >= 1, got {batch_size}")
  seeds = tuple(int(s) for s in seeds)
  if not seeds:
    raise ValueError("give at least one seed")
  return seeds, np.broadcast_to(
    policy_lib.uniform_policy(tree), (len(seeds), *tree.legal.shape)
  ).copy()


class _PoolByNode:
  """The belief pool's resolver asked by the enumerated tree's nodes (their paths of child slots
  from the root and their actors), as the protocol names decisions. A search runs in the smallest
  pool that holds every expansion of its focus's subgame (:mod:`sog.search.pool.sized`): the same
  search as in the searcher's pool, at the cost of the pool it can fill."""

  def __init__(
    self, pools: sized.SizedPools, tree: tree_lib.PublicTree, config: resolving.ResolvingConfig
  ):
    self.tree = tree
    self.resolver = sized.SizedResolver(pools, config)

  def initial_summary(self) -> belief_resolving.BeliefSummary:
    return self.resolver.initial_summary()

  def resolve(self, requests, rngs, chunk, params):
    """The requests' searches (``jobs`` index ``requests``)."""
    asked = [(summary, self.tree.paths[n], int(self.tree.kind[n])) for summary, n in requests]
    yield from self.resolver.resolve(asked, rngs, chunk, params)

  def keep(
    self, summary: belief_resolving.BeliefSummary, followers: Sequence[int]
  ) -> belief_resolving.BeliefSummary:
    """The summary cut to the public states the re-solves at ``followers`` (nodes) plan from."""
    return belief_resolver.pruned(summary, [self.tree.paths[m] for m in followers])


def compose(
  searcher: GTCFR | sized.SizedPools,
  seeds: Sequence[int],
  resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  batch_size: int = 32,
  progress: Callable[[int, int], None] | None = None,
  params=None,
  predecessor: str = "own",
  on_resolved: Callable[[list[tuple[int, int, bool]], belief_resolver.BeliefResolved], None]
  | None = None,
  tree: tree_lib.PublicTree | None = None,
) -> Composition:
  """Runs the protocol with ``searcher`` for each seed and evaluates each composed policy exactly
  (float64).

  ``searcher`` is a :class:`~sog.search.pool.GTCFR` of the game with a ``branch_depth`` of at
  least :func:`~sog.search.predecessors.branch_depth`, each search run in a pool sized to its
  subgame (one compilation per pool size; :mod:`sog.search.pool.sized`), or the
  :class:`~sog.search.pool.sized.SizedPools` of one for ``tree`` (their compiled searches reused:
  what self-play's evaluation passes). ``tree`` is the game's enumerated tree, the composed
  policy's home. A vmapped batch of searches holds ``batch_size`` of them in the smallest pool
  and proportionally fewer in larger ones (:meth:`~sog.search.pool.sized.SizedPools.rows`).
  ``progress(done, total)`` is called after every batch of searches. ``params`` replace the leaf
  model's parameters (a network in training is evaluated without a new compilation).
  ``predecessor`` picks the search each re-solve continues
  (:func:`~sog.games.tree.previous_decisions`): the searching player's last one
  (``"own"``, the default) or the nearest one above, whoever acted there (``"nearest"``; the
  paper's "conditioned on previous searches at predecessor states" allows either reading).
  ``on_resolved(searches, resolved)`` is called with every chunk of searches (a
  :class:`~sog.search.pool.belief_resolver.BeliefResolved`): ``searches[row]`` is (seed, game node
  searched, whether it continued a predecessor's search) of the chunk's row
  (:class:`sog.protocol.queries.QueryRecorder` collects their leaf queries).
  """
  if not isinstance(searcher, GTCFR | sized.SizedPools):
    raise ValueError(
      f"compose runs a GTCFR or its SizedPools, got {type(searcher).__name__} (ReBeL's "
      "protocol is sog.baselines.rebel.composed)"
    )
  if tree is None:
    raise ValueError(
      "compose needs the game's enumerated tree, the composed policy's home: pass tree=game.tree"
    )
  length = tree.max_moves
  if isinstance(searcher, GTCFR):
    pools = sized.SizedPools(searcher, length, tree)
  elif searcher.tree is not tree or searcher.path_length < length:
    raise ValueError(
      "compose: the SizedPools were sized for another tree or shorter paths; build them with "
      "this tree and its max_moves (tree.max_moves)"
    )
  else:
    pools = searcher
  deepest = predecessors_lib.branch_depth(tree, predecessor)
  if pools.searcher.branch_depth < deepest:
    raise ValueError(
      f"compose: the protocol's re-solving branches on {tree.name} reach {deepest} public "
      f"moves; build the GTCFR with branch_depth >= {deepest} "
      "(sog.search.predecessors.branch_depth)"
    )
  resolver = _PoolByNode(pools, tree, resolving_config)
  seeds, policies = uniform_policies(tree, seeds, batch_size)
  started = time.perf_counter()
  previous = tree_lib.previous_decisions(tree, predecessor)
  continuations = np.bincount(previous[previous >= 0], minlength=tree.num_nodes)
  needed = continuations > 0  # decisions whose summaries later re-solves continue
  followers = {int(n): [] for n in np.flatnonzero(needed)}  # the decisions continuing each
  for m in np.flatnonzero(previous >= 0):
    followers[int(previous[m])].append(int(m))
  initial = resolver.initial_summary()
  kept = {}  # (seed index, decision node) -> the summary its player keeps
  left = continuations * len(seeds)  # re-solves yet to be planned from each decision's summaries
  decisions = np.flatnonzero(tree.kind < public_game.CHANCE)
  total, done = len(decisions) * len(seeds), 0
  growth = SearchGrowth()
  for depth in range(tree.num_levels):
    jobs = [
      (k, int(n)) for n in decisions[tree.depth[decisions] == depth] for k in range(len(seeds))
    ]  # (seed index, node)
    if not jobs:
      continue
    requests = [(kept[(k, int(previous[n]))] if previous[n] >= 0 else initial, n) for k, n in jobs]
    for _, n in jobs:  # a summary is dropped once every re-solve continuing it has its request
      if previous[n] >= 0:
        left[previous[n]] -= 1
        if left[previous[n]] == 0:
          for seed in range(len(seeds)):
            kept.pop((seed, int(previous[n])), None)
    rngs = search_keys([seeds[k] for k, _ in jobs], [n for _, n in jobs])
    for resolved in resolver.resolve(requests, rngs, batch_size, params):
      focus_policy = np.asarray(resolved.results.focus_policy, np.float64)
      growth.add(resolved.results, len(resolved.jobs))
      summaries = resolved.summaries() if any(needed[jobs[j][1]] for j in resolved.jobs) else None
      for row, j in enumerate(resolved.jobs):
        k, n = jobs[j]
        policies[k, n] = policy_lib.normalised(focus_policy[row], tree.legal[n])
        if needed[n]:
          kept[(k, n)] = resolver.keep(summaries[row], followers[n])
      if on_resolved is not None:
        on_resolved(
          [(seeds[jobs[j][0]], jobs[j][1], bool(previous[jobs[j][1]] >= 0)) for j in resolved.jobs],
          resolved,
        )
      done += len(resolved.jobs)
      if progress is not None:
        progress(done, total)
  exploitability = np.array([best_response.evaluate(tree, p).exploitability for p in policies])
  return Composition(
    seeds=seeds,
    exploitability=exploitability,
    policies=policies,
    searches=total,
    seconds=time.perf_counter() - started,
    growth=growth.means(),
  )
