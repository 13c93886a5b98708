"""The observer's wait for the built site (bench/gates/browser.py ``wait_for_site``).

The host's signal file is extracted by the engine like any file: it can exist, empty or
half written, before its bytes are all there. CI once saw the observer read it empty and
die (a grader fault, ERROR, for a trial that should have FAILed).
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from bench.gates.browser import wait_for_site


def test_a_signal_file_seen_before_its_bytes_is_read_again(tmp_path):
    go = tmp_path / "site.json"
    go.write_text("")  # there, still empty: what the engine's extraction shows first
    text = json.dumps({"site": "/srv/dist"})

    def finish() -> None:
        time.sleep(0.1)
        go.write_text(text[:7])  # half written
        time.sleep(0.1)
        go.write_text(text)

    writer = threading.Thread(target=finish)
    writer.start()
    try:
        assert str(wait_for_site(str(go), within_s=5)) == "/srv/dist"
    finally:
        writer.join()


def test_a_site_that_never_arrives_is_the_harness_fault(tmp_path):
    with pytest.raises(TimeoutError, match="no site arrived within 0 s"):
        wait_for_site(str(tmp_path / "site.json"), within_s=0.1)
