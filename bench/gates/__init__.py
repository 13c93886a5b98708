"""Gate check kinds, one module each, run inside the grader container.

These modules use the standard library only: the grader imports them straight from
the harness wheel (a zip on PYTHONPATH), with none of the host's dependencies. The
host validates gate.toml with pydantic and hands the runner a plain JSON plan.
"""
