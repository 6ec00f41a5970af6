"""PNG line plots for scripts (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
import itertools
import pathlib

_BASELINE_STYLES = (":", "-.", (0, (5, 2, 1, 2, 1, 2)))


def line_plot(
  path: str | pathlib.Path,
  series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
  title: str,
  xlabel: str,
  ylabel: str,
  logx: bool = False,
  logy: bool = True,
  levels: Mapping[str, float] | None = None,
) -> None:
  """Writes the named (x, y) series as one line plot to ``path``; ``levels`` are labelled
  horizontal reference lines (e.g. another agent's measured value). On a log y axis, values <= 0
  (an exactly solved game's exploitability) are drawn as triangles at a floor a decade below the
  smallest positive value, and their series' label says so."""
  import matplotlib

  matplotlib.use("Agg")
  import matplotlib.pyplot as plt

  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig, ax = plt.subplots(figsize=(6, 4))
  for label, (x, y, marker) in drawable(series, levels, logy).items():
    ax.plot(x, y, marker=marker, label=label)
  for (label, y), style in zip((levels or {}).items(), itertools.cycle(_BASELINE_STYLES)):
    ax.axhline(y, linestyle=style, linewidth=1.2, color="gray", label=label)
  ax.set_xscale("log" if logx else "linear")
  if logx:
    _plain_log_ticks(ax.xaxis)
  _finish(
    plt, fig, ax, path, title, xlabel, ylabel, logy, legend=len(series) + len(levels or {}) > 1
  )


def drawable(
  series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
  levels: Mapping[str, float] | None,
  logy: bool,
) -> dict[str, tuple[Sequence[float], Sequence[float], str | None]]:
  """{label: (x, y, marker)} as :func:`line_plot` draws them: on a log axis a series with values
  <= 0 has them at a floor a decade below the smallest positive value (of the series and
  ``levels``), triangle markers, and a label that says so."""
  positive = [v for _, y in series.values() for v in y if v > 0] + [
    v for v in (levels or {}).values() if v > 0
  ]
  floor = min(positive, default=1.0) / 10
  out = {}
  for label, (x, y) in series.items():
    marker = "o" if len(x) < 30 else None
    if logy and any(v <= 0 for v in y):
      y = [v if v > 0 else floor for v in y]
      label, marker = f"{label} (\u25bc: exactly 0)", "v"
    out[label] = (x, y, marker)
  return out


def ribbon_plot(
  path: str | pathlib.Path,
  series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]],
  title: str,
  xlabel: str,
  ylabel: str,
  markers: Mapping[str, Sequence[tuple[float, float]]] | None = None,
  levels: Mapping[str, float] | None = None,
  reference_label: str = "reference",
  baselines: Mapping[str, Mapping[str, float]] | None = None,
  logy: bool = True,
) -> None:
  """Writes each named series (x, low, middle, high) as a line with a low-high ribbon to ``path``.

  Reference values drawn in the series' colour: ``markers[name]`` as (x, y) crosses and
  ``levels[name]`` as a dashed horizontal line (e.g. a paper's value at a step beyond the x range).
  ``baselines[label][name]`` is a horizontal line in its own line style per label (e.g. another
  model's value at the series' setting), in the series' colour, or gray where no series has the
  name.
  """
  import matplotlib

  matplotlib.use("Agg")
  import matplotlib.pyplot as plt

  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  markers, levels = markers or {}, levels or {}
  fig, ax = plt.subplots(figsize=(7, 4.5))
  colours = {}
  for label, (x, low, middle, high) in series.items():
    (line,) = ax.plot(x, middle, marker="o" if len(x) < 30 else None, label=label)
    colours[label] = line.get_color()
    ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if label in markers:
      mx, my = zip(*markers[label], strict=True)
      ax.plot(mx, my, linestyle="none", marker="x", markersize=8, color=line.get_color())
    if label in levels:
      ax.axhline(levels[label], linestyle="--", linewidth=1, color=line.get_color())
  if markers or levels:
    ax.plot([], [], linestyle="--", marker="x", color="gray", label=reference_label)
  for (label, values), style in zip((baselines or {}).items(), itertools.cycle(_BASELINE_STYLES)):
    for name, y in values.items():
      ax.axhline(y, linestyle=style, linewidth=1.2, color=colours.get(name, "gray"))
    ax.plot([], [], linestyle=style, color="gray", label=label)
  _finish(plt, fig, ax, path, title, xlabel, ylabel, logy, legend=True)


def protocol_plot(
  path: str | pathlib.Path,
  series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]],
  references: Mapping[str, Mapping[float, float]],
  title: str,
  ylabel: str,
) -> None:
  """Writes exploitability against s (log-log, plain tick labels at the series' s) to ``path``: each
  series (s, low, mean, high) as its mean with a low-high ribbon (the seeds' min and max; values of
  0 at a floor a decade below the smallest positive one), each reference {s: value} as markers at
  the series' s where it has them (a paper's published points for the same settings)."""
  import matplotlib

  matplotlib.use("Agg")
  from matplotlib import ticker
  import matplotlib.pyplot as plt

  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig, ax = plt.subplots(figsize=(6, 4))
  every_s = sorted({s for x, *_ in series.values() for s in x})
  # On the log axis an exactly solved setting (0) sits at a floor a decade below the smallest
  # positive value, as line_plot draws it.
  positive = [v for _, *ys in series.values() for y in ys for v in y if v > 0]
  floor = min(positive, default=1.0) / 10
  for label, (x, low, middle, high) in series.items():
    low, middle, high = ([v if v > 0 else floor for v in y] for y in (low, middle, high))
    (line,) = ax.plot(x, middle, marker="o", label=label)
    ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
  drawn = reference_points(every_s, references)
  for (label, (x, y)), marker in zip(drawn.items(), itertools.cycle("xP+*"), strict=False):
    ax.plot(x, y, linestyle="none", marker=marker, markersize=9, color="black", label=label)
  ax.set_xscale("log")
  ax.set_xticks(every_s, [f"{s:g}" for s in every_s])
  ax.xaxis.set_minor_formatter(ticker.NullFormatter())
  if len(every_s) == 1:
    ax.set_xlim(every_s[0] / 1.5, every_s[0] * 1.5)
  _finish(plt, fig, ax, path, title, "simulations s", ylabel, logy=True, legend=True)


def reference_points(
  every_s: Sequence[float], references: Mapping[str, Mapping[float, float]]
) -> dict[str, tuple[list[float], list[float]]]:
  """{label: (s, value)} of each reference at the s in ``every_s`` it has (labels with none are
  left out): what :func:`protocol_plot` marks."""
  out = {}
  for label, points in references.items():
    shown = [s for s in every_s if s in points]
    if shown:
      out[label] = (shown, [points[s] for s in shown])
  return out


def _plain_log_ticks(axis) -> None:
  """Tick labels of a log axis as plain numbers (30, 100, 0.05) instead of powers of ten; where the
  axis spans less than two decades, 2x and 5x each decade are labelled too."""
  from matplotlib import ticker

  low, high = sorted(axis.get_view_interval())
  plain = ticker.FuncFormatter(lambda value, _: f"{value:g}")
  axis.set_major_formatter(plain)
  if low > 0 and high / low < 100:
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_minor_formatter(plain)


def _finish(
  plt, fig, ax, path: pathlib.Path, title: str, xlabel: str, ylabel: str, logy: bool, legend: bool
) -> None:
  """Scales, labels (log axes with plain numbers), legend and grid, then writes the figure to
  ``path`` and closes it."""
  ax.set_yscale("log" if logy else "linear")
  if logy:
    _plain_log_ticks(ax.yaxis)
  ax.set_xlabel(xlabel)
  ax.set_ylabel(ylabel)
  ax.set_title(title, fontsize=10)
  if legend:
    if len(ax.get_legend_handles_labels()[1]) > 6:  # many lines: the legend goes beside the axes
      fig.set_size_inches(fig.get_size_inches()[0] + 3.5, fig.get_size_inches()[1])
      ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
      ax.legend(fontsize=8)
  ax.grid(True, which="both", alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)
  print(f"wrote {path}")
