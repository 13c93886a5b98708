"""`bench view`: the results viewer, one set of pages served locally or written as a static bundle.

Pages are rendered by one renderer (bench/view/site.py) from the label's records and
its verify-provenance findings; the server serves a bundle rendered into a temporary
folder, so what a person browses locally is byte for byte what `--bundle` publishes.
"""
