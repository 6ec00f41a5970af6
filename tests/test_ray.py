"""Self-play with its roles on Ray (a local two-worker cluster): it trains, checkpoints, is killed,
resumes with its buffers, and lowers Kuhn's exploitability below the untrained network's."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sog.selfplay import config as config_lib
from sog.selfplay import loop
from sog.selfplay import run
from tests.conftest import ROOT


def test_ray_config_is_checked_before_anything_starts():
  config = config_lib.default_config_dict("kuhn_poker")
  config.backend = "spark"
  with pytest.raises(ValueError, match=r"backend must be one of \('local', 'ray'\)"):
    config_lib.from_config_dict(config)
  config.backend, config.ray.solver_workers = "ray", 0
  with pytest.raises(ValueError, match="ray.solver_workers must be an int >= 1"):
    config_lib.from_config_dict(config)


def test_a_ray_run_trains_is_killed_and_resumes_with_its_buffers(tmp_path):
  command = [sys.executable, str(ROOT / "scripts" / "train.py"), f"--config={ROOT}/configs/kuhn.py",
             f"--workdir={tmp_path}", "--config.backend=ray", "--config.evaluation.every_steps=0",
             "--config.checkpoint_every_seconds=2", "--log_every=2"]
  # A run that would go on for long: killed (with the Ray processes it started) once it has saved a
  # checkpoint holding examples.
  process = subprocess.Popen(command + ["--config.max_steps=100000"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=ROOT, start_new_session=True)
  progress = tmp_path / run.CHECKPOINT / "selfplay.json"
  deadline = time.time() + 300
  while time.time() < deadline and not (progress.is_file() and
                                        json.loads(progress.read_text())["counters"]["examples"]):
    time.sleep(1)
  os.killpg(process.pid, signal.SIGKILL)
  process.wait()
  assert loop.has_checkpoint(tmp_path / run.CHECKPOINT)
  saved = json.loads(progress.read_text())["counters"]
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:
    saved_nodes = f["replay_nodes"][:min(saved["examples"], f["replay_nodes"].shape[0])].copy()
  assert saved["examples"] > 0 and saved["games"] > 0
  # Resumed, on to 250 train steps, evaluated at the end.
  out = subprocess.run(command + ["--config.max_steps=250"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
  assert out.returncode == 0, out.stderr[-3000:]
  assert f"resumed from {tmp_path / run.CHECKPOINT}" in out.stdout
  result = json.loads(out.stdout.strip().splitlines()[-1])
  assert result["backend"] == "ray" and result["workers"] == 2 and result["steps"] == 250
  assert result["games"] > saved["games"] and result["queries_solved"] > 0
  with np.load(tmp_path / run.CHECKPOINT / "selfplay.npz") as f:  # the window kept its old examples
    kept = f["replay_nodes"][:saved_nodes.size]
    assert f["replay_added"] > saved["examples"]
  np.testing.assert_array_equal(kept, saved_nodes)
  with (tmp_path / run.EVALUATION).open() as f:
    rows = list(csv.DictReader(f))
  untrained = float(rows[0]["mean"])  # the first run's evaluation at step 0
  trained = result["exploitability"]["SoG(4,1)"]["mean"]
  assert rows[0]["step"] == "0" and trained < 0.8 * untrained, (untrained, trained)
