"""Other algorithms run in SoG's harness: the same games, tables, leaf models and exact evaluation.

:mod:`sog.baselines.rebel` is ReBeL (Brown et al. 2020), SoG's closest relative.
"""
