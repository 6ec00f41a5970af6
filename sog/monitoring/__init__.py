"""Watching long jobs: progress on a terminal or in a log, metrics as CSV and TensorBoard files."""

from sog.monitoring.metrics import MetricsWriter
from sog.monitoring.metrics import append_row
from sog.monitoring.metrics import read_scalars
from sog.monitoring.progress import Progress

__all__ = ["MetricsWriter", "Progress", "append_row", "read_scalars"]
