"""Progress lines off a terminal, metrics written to CSV and TensorBoard event files, and what the
plots draw."""

import csv
import re

import pytest

from sog import monitoring
from sog import plotting


def test_progress_off_a_terminal_writes_one_tqdm_line_per_interval_and_the_last():
  lines = []
  with monitoring.Progress("fit", 40, unit="step", every_seconds=0.0, log=lines.append) as progress:
    progress.update(10, "loss 0.5")
    progress.write("an event")
    progress.update(40, "loss 0.1")
  assert lines[1] == "an event"
  assert re.fullmatch(r"fit:  25% 10/40 \[\d\d:\d\d<.*, .* ?step/s\], loss 0\.5", lines[0]), lines[
    0
  ]
  assert lines[2].startswith("fit: 100% 40/40 [") and lines[2].endswith(", loss 0.1")
  # With a long interval only the line of the finished job is written; progress past the total is
  # clamped, and a resumed job's initial amount is shown but not counted in the rate.
  lines.clear()
  progress = monitoring.Progress(
    "self-play", 100.0, unit="%", every_seconds=3600.0, log=lines.append, initial=30.0
  )
  for done in (40.0, 70.0, 120.0, 130.0):  # the finished job's line is written once
    progress.update(done)
  assert len(lines) == 1 and re.match(r"self-play: 100% \[\d\d:\d\d<00:00, .*%/s\]$", lines[0]), (
    lines
  )
  with pytest.raises(ValueError, match="total must be > 0"):
    monitoring.Progress("x", 0)


def test_metrics_writer_rows_reach_csv_and_tensorboard(tmp_path):
  with monitoring.MetricsWriter(tmp_path) as writer:
    for step in (0, 10, 20):
      writer.write(
        "metrics",
        ("step", "loss", "note"),
        {"step": step, "loss": 1.0 / (step + 1), "note": "text", "unused": 3},
      )
    for setting, mean in (("SoG(4,1)", 0.3), ("SoG(8,1)", "0.25")):  # CSV-style strings too
      writer.write(
        "evaluation",
        ("step", "setting", "mean"),
        {"step": 20, "setting": setting, "mean": mean},
        series_field="setting",
      )
    with pytest.raises(ValueError, match="no 'step' field"):
      writer.write("metrics", ("loss",), {"loss": 1.0})
  with (tmp_path / "metrics.csv").open() as f:
    rows = list(csv.DictReader(f))
  assert [row["step"] for row in rows] == ["0", "10", "20"] and set(rows[0]) == {
    "step",
    "loss",
    "note",
  }
  scalars = monitoring.read_scalars(tmp_path / "tensorboard")
  # TensorBoard's tag rules turn "SoG(4,1)" into "SoG_4_1_".
  assert set(scalars) == {"metrics/loss", "evaluation/SoG_4_1_/mean", "evaluation/SoG_8_1_/mean"}
  assert [step for step, _ in scalars["metrics/loss"]] == [0, 10, 20]
  assert scalars["metrics/loss"][1][1] == pytest.approx(1 / 11)
  assert scalars["evaluation/SoG_8_1_/mean"] == [(20, pytest.approx(0.25))]
  # A resumed run appends to the CSV and adds an event file; both files are read.
  with monitoring.MetricsWriter(tmp_path) as writer:
    writer.write("metrics", ("step", "loss", "note"), {"step": 30, "loss": 0.01, "note": ""})
  assert [step for step, _ in monitoring.read_scalars(tmp_path)["metrics/loss"]] == [0, 10, 20, 30]


def test_a_log_plot_draws_exact_zeros_at_a_marked_floor_and_keeps_positive_series(tmp_path):
  series = {"psro": ([1.0, 2.0], [0.5, 0.0]), "cfr": ([1.0, 2.0], [1e-3, 1e-6])}
  drawn = plotting.drawable(series, {"SoG": 1e-4}, logy=True)
  assert drawn["cfr"] == ([1.0, 2.0], [1e-3, 1e-6], "o")
  assert drawn["psro (\u25bc: exactly 0)"] == ([1.0, 2.0], [0.5, 1e-7], "v")  # a decade below 1e-6
  assert plotting.drawable(series, None, logy=False)["psro"][1] == [0.5, 0.0]  # linear: as given
  plotting.line_plot(tmp_path / "p.png", series, "t", "x", "y", logx=True, levels={"SoG": 1e-4})
  assert (tmp_path / "p.png").stat().st_size > 0


def test_protocol_plot_marks_the_papers_points_at_the_series_own_s(tmp_path):
  """evaluate.py --plot: fig. 3's points only where the run has the same s, in mbb/h for poker."""
  from sog.eval import paper

  assert paper.exploitability_unit("leduc_poker") == (1000.0, "mbb/h")
  assert paper.exploitability_unit("scotland_yard(map=glasses)")[0] == 1.0
  references = paper.fig3_references("leduc_poker", 1000.0)
  trained, untrained = references.values()
  assert trained[100] == pytest.approx(109.0) and untrained[1000] == pytest.approx(145.0)
  assert paper.fig3_references("kuhn_poker") == {}
  drawn = plotting.reference_points([30, 100], references)
  assert [x for x, _ in drawn.values()] == [[100], [100]]
  assert plotting.reference_points([30], references) == {}
  series = {"SoG(s, 1)": ([33, 100], [150, 120], [180, 130], [200, 160])}
  plotting.protocol_plot(tmp_path / "p.png", series, references, "leduc", "mbb/h")
  assert (tmp_path / "p.png").stat().st_size > 0
