"""Evaluation: tabular policies, exact best responses and exploitability."""

from sog.eval.exploitability import Evaluation
from sog.eval.exploitability import check_ranges
from sog.eval.exploitability import evaluate
from sog.eval.exploitability import exploitability
from sog.eval.policy import check_policy
from sog.eval.policy import random_policy
from sog.eval.policy import uniform_policy

__all__ = ["Evaluation", "check_policy", "check_ranges", "evaluate", "exploitability",
           "random_policy", "uniform_policy"]
