"""The SoG agent and its OpenSpiel bot: complete games against OpenSpiel's bots, clear errors."""

import json
import subprocess
import sys

import jax
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
from sog.search import gtcfr
from sog.search import leaf_models
from tests.conftest import ROOT


@pytest.mark.parametrize(
  "name, leaf, games",
  [
    ("kuhn_poker", leaf_models.exact_leaf_model(50), 2),
    pytest.param("leduc_poker", leaf_models.zero_leaf_model(), 1, marks=pytest.mark.slow),
  ],
)
def test_the_bot_plays_complete_games_against_random_and_cfr_plus_bots(name, leaf, games):
  """``games`` whole games per seat against each opponent. Leduc (chance between decisions; every
  depth compiles its own subgame search, 80 s) is marked slow: the bot's mechanics are Kuhn's, and
  the agent's re-solves in Leduc's subgames are ``test_subgames``' and the protocol's tests."""
  game = load(name)
  os_game = openspiel_bridge.openspiel_game(game)
  solver = openspiel_cfr.CFRPlusSolver(os_game)
  for _ in range(20):
    solver.evaluate_and_update_policy()
  agent = agent_lib.SoGAgent(game, leaf, gtcfr.GTCFRConfig(simulations=20))
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


def test_the_bot_reports_the_policy_it_draws_from():
  game = load("kuhn_poker")
  agent = agent_lib.SoGAgent(game, leaf_models.exact_leaf_model(50), gtcfr.GTCFRConfig(30))
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
  agent = agent_lib.SoGAgent(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(4))
  assert agent.perfect_information and not bot_lib.SoGBot(agent, player_id=0).sample
  assert bot_lib.SoGBot(agent, player_id=0, sample=True).sample


def test_the_agent_rejects_states_it_cannot_act_at():
  game = load("leduc_poker")
  tree = game.tree
  agent = agent_lib.SoGAgent(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(10))
  chance = int(np.flatnonzero(tree.kind == 2)[0])
  with pytest.raises(ValueError, match="not a decision node"):
    agent.act(chance, 0, jax.random.PRNGKey(0))
  root_actor = int(tree.kind[0])
  invalid = np.flatnonzero(~tree.valid[0, root_actor])
  if invalid.size:
    with pytest.raises(ValueError, match="not valid"):
      agent.act(0, int(invalid[0]), jax.random.PRNGKey(0))
  first = int(np.flatnonzero(tree.kind == 1)[0])
  action, policy = agent.act(
    first, int(np.flatnonzero(tree.valid[first, 1])[0]), jax.random.PRNGKey(1)
  )
  assert policy[action] > 0 and abs(policy.sum() - 1) < 1e-6
  below_first = np.zeros(tree.num_nodes, bool)
  below_first[tree.descendants(first)] = True
  elsewhere = int(np.flatnonzero((tree.kind == 0) & ~below_first & (tree.depth > 1))[0])
  with pytest.raises(ValueError, match="reset"):
    agent.act(elsewhere, int(np.flatnonzero(tree.valid[elsewhere, 0])[0]), jax.random.PRNGKey(2))
  agent.reset()
  agent.act(0, int(np.flatnonzero(tree.valid[0, root_actor])[0]), jax.random.PRNGKey(3))


def test_the_bot_needs_an_openspiel_game():
  agent = agent_lib.SoGAgent(
    load("sequential_rps"), leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(10)
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
