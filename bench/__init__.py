"""Hermetic Bench: clean-agent trials in fresh containers, graded by withheld gates.

This package must stay importable with the standard library alone: a browser
check's observer imports ``bench.gates.runner`` straight from the harness wheel, and
the sidecars run ``bench.model_endpoint`` / ``bench.credential_proxy`` from it, with
none of the host's dependencies installed.
"""

__version__ = "0.1.0"
