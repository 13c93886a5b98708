"""The viewer's bundle in a real Chromium: Debian's, in the seat image, driven by Playwright there, network none.

The host has no browser; the seat image (built by CI's `bench images build`) has one. A
test writes the bundle with `bench view --bundle`, mounts it read-only with a driver
script, and reads the driver's last stdout line as JSON; screenshots land in the test's
tmp folder (``shots/``), mounted writable.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bench.cli import cli


def drive_bundle(docker_client, seat_tag: str, results: Path, tmp_path: Path, driver: str) -> dict:
    """Write the bundle of ``results``, run ``driver`` against it in the seat image, return what it printed last."""
    site, out = tmp_path / "site", tmp_path / "shots"
    run = CliRunner().invoke(cli, ["view", "--bundle", str(site), str(results)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    out.mkdir()
    out.chmod(0o777)
    return run_driver(docker_client, seat_tag, tmp_path, driver,
                      {str(site): {"bind": "/site", "mode": "ro"}, str(out): {"bind": "/out", "mode": "rw"}})


def run_driver(docker_client, seat_tag: str, tmp_path: Path, driver: str, volumes: dict,
               environment: dict | None = None) -> dict:
    """Run ``driver`` (Python) in the seat image, network none, with ``volumes``; the JSON it printed last."""
    (tmp_path / "driver.py").write_text(driver)
    container = docker_client.containers.run(
        seat_tag, ["python3", "/driver/driver.py"], entrypoint=[], network_mode="none", detach=True,
        environment=environment or {},
        volumes={**volumes, str(tmp_path / "driver.py"): {"bind": "/driver/driver.py", "mode": "ro"}})
    try:
        status = container.wait(timeout=180)
        logs = container.logs(stdout=True, stderr=False).decode()
        assert status["StatusCode"] == 0, container.logs().decode()[-4000:]
    finally:
        container.remove(force=True)
    return json.loads(logs.strip().splitlines()[-1])
