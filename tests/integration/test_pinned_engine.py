"""Pinned paths on the real engine: an agent that patches the engine it was given is graded against the
image's install, and the patch is recorded (and fails the trial, as red-box's case.toml says).

The agent writes red-box's reference solution, then breaks its own copy of Shallot so any
page built from it throws at load. On red-box (pinned, engine unmodified) the browser check
still passes — the build used the image's node_modules — and the trial FAILs for the patch,
listed in result.json. The same agent on a copy of red-box that pins nothing FAILs the
browser check: the patch would have mattered, so the pass above proves which copy was used.
"""

from __future__ import annotations

import base64
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
ENGINE = "node_modules/@dylanebert/shallot"


def solution_and_sabotage() -> str:
    """The command agent's script: unpack the reference solution, then patch the engine and the manifest."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(ROOT / "goldens" / "red-box" / "solution", arcname=".")
    packed = base64.b64encode(buffer.getvalue()).decode()
    return (f"cd {{workspace}} && echo {packed} | base64 -d | tar xz && "
            f"echo 'throw new Error(\"patched engine\");' >> {ENGINE}/src/standard/index.ts && "
            "echo '// mine' > node_modules/evil.js && sed -i 's/\"name\"/\"x-patched\": true, \"name\"/' package.json")


def test_a_patched_engine_is_graded_from_the_image_and_reported(docker_client, tmp_path, project, bench):
    case = (project / "cases" / "red-box" / "case.toml").read_text()
    assert 'pinned = ["node_modules", "package.json", "bun.lock"]' in case
    (project / "cases" / "red-box-unpinned").mkdir()
    (project / "cases" / "red-box-unpinned" / "case.toml").write_text(
        re.sub(r"(?m)^(pinned|unmodified) = .*\n", "", case))
    (project / "cases" / "red-box-unpinned" / "PROMPT.md").write_text(
        (project / "cases" / "red-box" / "PROMPT.md").read_text())
    (project / "goldens" / "red-box-unpinned").mkdir()
    (project / "goldens" / "red-box-unpinned" / "gate.toml").write_text(
        (project / "goldens" / "red-box" / "gate.toml").read_text())
    bench("run", "red-box", "red-box-unpinned", "--arm", "with-context", "--agent", "command", "--agent-cmd",
          solution_and_sabotage(), "--seat", "software", "--concurrency", "1", "--label", "patched", root=project,
          timeout=900, check_rc=1)
    trials = tmp_path / "results" / "patched"
    pinned = json.loads((trials / "red-box" / "with-context" / "trial-1" / "result.json").read_text())
    assert pinned["verdict"] == "FAIL"
    assert pinned["reason"].startswith("the agent changed the pinned engine, which the case says it must not: "
                                       f"C {ENGINE}/src/standard/index.ts")
    assert [check["passed"] for check in pinned["checks"]] == [True], pinned["checks"]  # built from the image's copy
    assert {f"C {ENGINE}/src/standard/index.ts", "A node_modules/evil.js", "C package.json"} == set(pinned["pinned_changes"])
    assert pinned["pinned_changes_total"] == len(pinned["pinned_changes"])

    unpinned = json.loads((trials / "red-box-unpinned" / "with-context" / "trial-1" / "result.json").read_text())
    assert unpinned["verdict"] == "FAIL" and unpinned["pinned_changes"] is None, unpinned["reason"]
    assert unpinned["checks"][0]["passed"] is False, unpinned["checks"]  # the agent's patched copy breaks the page
    assert "patched engine" in (trials / "red-box-unpinned" / "with-context" / "trial-1" / "gate.log").read_text() \
        or "not ready" in unpinned["reason"], unpinned["reason"]
