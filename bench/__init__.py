"""Hermetic Bench: clean-agent trials in fresh containers, graded by withheld gates.

This package must stay importable with the standard library alone: the grader
container imports ``bench.gates.runner`` straight from the harness wheel, with
none of the host's dependencies installed.
"""

__version__ = "0.1.0"
