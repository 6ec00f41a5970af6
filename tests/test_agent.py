"""The SoG agent and its OpenSpiel bot: complete games against OpenSpiel's bots, clear errors."""

import functools
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
from open_spiel.python.algorithms import cfr as openspiel_cfr
from open_spiel.python.algorithms import evaluate_bots
from open_spiel.python.bots import policy as policy_bot
from open_spiel.python.bots import uniform_random
import pytest

from sog.games import load
from sog.openspiel import bot as bot_lib
from sog.openspiel import bridge as openspiel_bridge
from sog.search import agent as agent_lib
from sog.search import leaf_models
from sog.search import types
from sog.search.pool import belief_oracle
from tests.conftest import ROOT
from tests.conftest import table_search


@functools.cache
def _agent(name: str) -> agent_lib.SoGAgent:
  """The agent the bot tests share (one compilation of its searches, one xdist group): Kuhn with
  the exact oracle (50 CFR+ iterations a call) at s = 20, Leduc with the zero leaf at s = 10. It
  keeps its summary between decisions: a test that needs a fresh one resets it."""
  game = load(name)
  if name == "kuhn_poker":
    return agent_lib.SoGAgent(
      game, belief_oracle.exact_leaf_model(game, 50), types.GTCFRConfig(simulations=20)
    )
  return agent_lib.SoGAgent(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=10))


@pytest.mark.xdist_group("agents")
@pytest.mark.parametrize("name, games", [("kuhn_poker", 2), ("leduc_poker", 1)])
def test_the_bot_plays_complete_games_against_random_and_cfr_plus_bots(name, games):
  """``games`` whole games per seat against each opponent (one compilation serves every
  decision)."""
  game = load(name)
  os_game = openspiel_bridge.openspiel_game(game)
  solver = openspiel_cfr.CFRPlusSolver(os_game)
  for _ in range(20):
    solver.evaluate_and_update_policy()
  agent = _agent(name)
  rng = np.random.RandomState(0)
  for seat in (0, 1):
    opponents = {
      "random": uniform_random.UniformRandomBot(1 - seat, rng),
      "cfr_plus": policy_bot.PolicyBot(1 - seat, rng, solver.average_policy()),
    }
    for opponent in opponents.values():
      for game_index in range(games):
        bots = [None, None]
        bots[seat] = bot_lib.SoGBot(agent, seat, seed=game_index)
        bots[1 - seat] = opponent
        returns = evaluate_bots.evaluate_bots(os_game.new_initial_state(), bots, rng)
        assert len(returns) == 2 and abs(sum(returns)) < 1e-9


@pytest.mark.parametrize(
  "name, games",
  [
    ("kuhn_poker", 6),
    pytest.param(
      "leduc_poker",
      2,
      marks=pytest.mark.slow(reason="the same test's [kuhn_poker] case checks the property"),
    ),
  ],
)
def test_the_agent_re_solves_as_the_table_agent_did(name, games):
  """Whole games against a uniform random opponent, both seats, float64, zero leaf, s = 10: at
  every decision the agent (its own tree grown from s_prev, continuing its last summary) gives the
  policy the table search's agent gave from the same key (recorded in
  ``tests/fixtures/table_searches.npz`` before it left the library): the same actions."""
  game = load(name)
  os_game = openspiel_bridge.openspiel_game(game)
  table = table_search(f"agent/{name}")
  rng = np.random.RandomState(0)
  decisions = 0
  with jax.enable_x64(True):
    agent = agent_lib.SoGAgent(
      game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=10), dtype=jnp.float64
    )
    for index in range(games):
      seat = index % 2
      agent.reset()
      state = os_game.new_initial_state()
      while not state.is_terminal():
        if state.is_chance_node():
          outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
          state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        elif state.current_player() == seat:
          world = openspiel_bridge.locate(game, state)
          key = jax.random.PRNGKey(1000 * index + len(world.path))
          action, policy = agent.act(world.path, world.infostates[seat], key)
          np.testing.assert_allclose(policy, table["policies"][decisions], atol=1e-12)
          assert action == int(table["actions"][decisions])
          state.apply_action(action)
          decisions += 1
        else:
          state.apply_action(int(rng.choice(state.legal_actions())))
  assert decisions == len(table["actions"]) >= games


@pytest.mark.xdist_group("agents")
def test_the_bot_reports_the_policy_it_draws_from():
  game = load("kuhn_poker")
  agent = _agent("kuhn_poker")
  bot = bot_lib.SoGBot(agent, player_id=0)
  state = openspiel_bridge.openspiel_game(game).new_initial_state()
  state.apply_action(2)  # player 0 holds the king
  state.apply_action(0)
  bot.restart_at(state)
  policy, action = bot.step_with_policy(state)
  probabilities = dict(policy)
  assert set(probabilities) == set(state.legal_actions())
  assert abs(sum(probabilities.values()) - 1.0) < 1e-6 and probabilities[action] > 0
  with pytest.raises(ValueError, match="seat"):
    bot_lib.SoGBot(agent, player_id=1).step(state)
  assert bot.sample  # imperfect information: sound play draws from the policy
  for seed in range(4):  # asked not to sample, the bot plays the policy's most probable action
    greedy = bot_lib.SoGBot(agent, player_id=0, seed=seed, sample=False)
    greedy.restart_at(state)
    policy, action = greedy.step_with_policy(state)
    assert action == max(policy, key=lambda pair: (pair[1], -pair[0]))[0]


def test_the_bot_plays_its_most_probable_action_in_perfect_information_games():
  """The default in matches: a perfect-information game's bot does not sample (AlphaZero-style
  evaluation); asked to, it does."""
  game = load("connect_four")
  agent = agent_lib.SoGAgent(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(4))
  assert agent.perfect_information and not bot_lib.SoGBot(agent, player_id=0).sample
  assert bot_lib.SoGBot(agent, player_id=0, sample=True).sample


@pytest.mark.xdist_group("agents")
def test_the_agent_rejects_states_it_cannot_act_at():
  game = load("leduc_poker")
  tree = game.tree
  agent = _agent("leduc_poker")
  agent.reset()
  chance = int(np.flatnonzero(tree.kind == 2)[0])
  with pytest.raises(ValueError, match="not a decision"):
    agent.act(tree.paths[chance], 0, jax.random.PRNGKey(0))
  with pytest.raises(ValueError, match="leaves the game"):
    agent.act((*tree.paths[chance], tree.num_actions + 5), 0, jax.random.PRNGKey(0))
  root_actor = int(tree.kind[0])
  with pytest.raises(ValueError, match="not valid"):
    agent.act((), tree.max_infostates + 1, jax.random.PRNGKey(0))
  # Below the public card, the player cannot hold that very card: legal by the rules, but no deal
  # reaches it.
  second_round = np.flatnonzero((tree.kind == 0) & (tree.depth > 2))
  impossible = [(n, s) for n in second_round for s in np.flatnonzero(~tree.valid[n, 0])]
  assert impossible
  node, s = impossible[0]
  with pytest.raises(ValueError, match="cannot occur"):
    agent.act(tree.paths[node], int(s), jax.random.PRNGKey(0))
  agent.reset()
  first = int(np.flatnonzero(tree.kind == 1)[0])
  action, policy = agent.act(
    tree.paths[first], int(np.flatnonzero(tree.valid[first, 1])[0]), jax.random.PRNGKey(1)
  )
  assert policy[action] > 0 and abs(policy.sum() - 1) < 1e-6
  below_first = np.zeros(tree.num_nodes, bool)
  below_first[tree.descendants(first)] = True
  elsewhere = int(np.flatnonzero((tree.kind == 0) & ~below_first & (tree.depth > 1))[0])
  with pytest.raises(ValueError, match="reset"):
    agent.act(
      tree.paths[elsewhere],
      int(np.flatnonzero(tree.valid[elsewhere, 0])[0]),
      jax.random.PRNGKey(2),
    )
  agent.reset()  # a first decision deep in a game (a bot restarted mid-game): a long branch
  deep = int(np.flatnonzero((tree.kind == 0) & (tree.depth >= 6))[0])
  agent.act(tree.paths[deep], int(np.flatnonzero(tree.valid[deep, 0])[0]), jax.random.PRNGKey(4))
  agent.reset()
  agent.act((), int(np.flatnonzero(tree.valid[0, root_actor])[0]), jax.random.PRNGKey(3))


def test_the_bot_needs_an_openspiel_game():
  agent = agent_lib.SoGAgent(
    load("sequential_rps"), leaf_models.zero_leaf_model(), types.GTCFRConfig(10)
  )
  with pytest.raises(ValueError, match="no OpenSpiel counterpart"):
    bot_lib.SoGBot(agent, 0)


def test_play_script_swaps_seats_and_ends_with_its_json_line():
  """scripts/play.py: SoG against OpenSpiel's MCTS on a small perfect-information game, seats
  alternating, tallied by the agent's return; MCTS on an imperfect-information game is refused
  before anything compiles."""
  command = [sys.executable, "scripts/play.py", "--leaf=zeros", "--sims=10"]
  out = subprocess.run(
    [
      *command,
      "--game=connect_four(rows=2,columns=3,x_in_row=3)",
      "--opponent=mcts",
      "--opponent_simulations=20",
      "--games=4",
    ],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  summary = json.loads(out.stdout.splitlines()[-1])
  assert summary["game"] == "connect_four(rows=2,columns=3,x_in_row=3)" and summary["games"] == 4
  assert summary["wins"] + summary["draws"] + summary["losses"] == 4
  assert summary["as_player_0"]["games"] == summary["as_player_1"]["games"] == 2
  bad = subprocess.run(
    [*command, "--game=kuhn_poker", "--opponent=mcts", "--games=1"],
    capture_output=True,
    text=True,
    cwd=ROOT,
  )
  assert bad.returncode != 0 and "perfect-information" in bad.stderr


def test_play_script_runs_the_agent_on_the_belief_pool_against_pimc():
  """scripts/play.py: Leduc against determinized MCTS (PIMC, through the OpenSpiel bridge), the
  agent's searches on the belief pool, the win rate with its 95% interval in the JSON line;
  --float64 with a pgx game (searched in float32) and PIMC on a pgx game are refused by name."""
  command = [sys.executable, "scripts/play.py", "--leaf=zeros", "--sims=10"]
  pimc = ["--opponent=pimc", "--opponent_simulations=8", "--pimc_worlds=2"]
  out = subprocess.run(
    [*command, *pimc, "--game=leduc_poker", "--games=2"],
    capture_output=True,
    text=True,
    cwd=ROOT,
    check=True,
  )
  assert "on the belief pool" in out.stdout and "pimc(8 simulations over 2 worlds)" in out.stdout
  summary = json.loads(out.stdout.splitlines()[-1])
  assert summary["game"] == "leduc_poker" and summary["games"] == 2
  assert summary["opponent"] == "pimc" and summary["pimc_worlds"] == 2
  low, high = summary["win_rate_95"]
  assert 0.0 <= low <= summary["win_rate"] <= high <= 1.0
  for flags_, named in [(["--float64"], "--float64"), (pimc, "--opponent=pimc")]:
    bad = subprocess.run(
      [*command, "--game=pgx/tic_tac_toe", *flags_, "--games=1"],
      capture_output=True,
      text=True,
      cwd=ROOT,
    )
    assert bad.returncode != 0 and named in bad.stderr and "pgx" in bad.stderr
