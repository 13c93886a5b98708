"""The pure parts of --executor ray: what travels between the driver and a node is checked by digest both ways
(bench/ray_ship.py); the cluster's trial slots honour --concurrency and what cannot reach a node is refused up
front (bench/ray_executor.py). The cluster itself is tests/integration/test_ray_executor.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.agents import AgentOptions
from bench.errors import InfrastructureError, UsageError
from bench.hashing import sha256_bytes
from bench.models import EngineRecord
from bench.paths import Project
from bench.ray_executor import Node, _cap, check_request
from bench.ray_node import NodeReport, node_tag
from bench.run import RunRequest
from bench.ray_ship import Shipment, check_trial_files, pack_project, shipped_file, unpack, write_trial


def project(root):
    (root / "cases/hello/workspace").mkdir(parents=True)
    (root / "cases/hello/PROMPT.md").write_text("say hello\n")
    (root / "goldens/hello").mkdir(parents=True)
    (root / "goldens/hello/gate.toml").write_text("[[checks]]\n")
    (root / "results").mkdir()
    (root / "results/secret.txt").write_text("not shipped")
    return Project(root)


def trial_files(**changes: bytes) -> dict[str, bytes]:
    files = {"result.json": b'{"verdict": "PASS"}', "artifacts/frame.png": b"\x89PNG"}
    manifest = {"schema_version": 1, "files": {name: sha256_bytes(data) for name, data in files.items()}}
    return {**files, "manifest.json": json.dumps(manifest).encode(), **changes}


def test_the_bundle_is_the_same_bytes_every_time_and_carries_host_files_by_digest(tmp_path):
    tarball = tmp_path / "subject.tgz"
    tarball.write_bytes(b"subject bytes")
    first, digests = pack_project(project(tmp_path / "one"), [tarball])
    second, _ = pack_project(project(tmp_path / "two"), [tarball])  # made later, elsewhere: the same bytes
    assert first == second and digests == {str(tarball): sha256_bytes(b"subject bytes")}

    shipment = Shipment(sha256_bytes(first), sha256_bytes(b"wheel"), "h.whl", digests)
    root, wheel = unpack(first, b"wheel", shipment, tmp_path / "cache")
    assert (root / "cases/hello/PROMPT.md").read_text() == "say hello\n" and (root / "cases/hello/workspace").is_dir()
    assert not (root / "results").exists()  # only what a node needs
    assert shipped_file(root, shipment, tarball).read_bytes() == b"subject bytes"
    assert wheel.read_bytes() == b"wheel" and root.name == shipment.bundle_sha256


def test_a_bundle_or_wheel_that_does_not_hash_as_sent_is_refused_before_use(tmp_path):
    bundle, _ = pack_project(project(tmp_path / "project"), [])
    shipment = Shipment(sha256_bytes(bundle), sha256_bytes(b"wheel"), "h.whl")
    with pytest.raises(InfrastructureError, match="project bundle arrived with SHA-256"):
        unpack(bundle + b"\0", b"wheel", shipment, tmp_path / "cache")
    with pytest.raises(InfrastructureError, match="harness wheel arrived with SHA-256"):
        unpack(bundle, b"other wheel", shipment, tmp_path / "cache")
    assert not (tmp_path / "cache" / shipment.bundle_sha256).exists()


def test_trial_files_are_written_only_when_each_matches_the_nodes_manifest(tmp_path):
    assert check_trial_files(trial_files()) == []
    assert check_trial_files(trial_files(**{"result.json": b'{"verdict": "FAIL"}'})) == [
        "result.json: SHA-256 differs from the node's manifest (changed in transit)"]
    assert check_trial_files(trial_files(**{"extra.txt": b"x"})) == ["extra.txt: sent but not in the manifest"]
    missing = trial_files()
    del missing["artifacts/frame.png"]
    assert check_trial_files(missing) == ["artifacts/frame.png: in the manifest but not sent"]
    escaping = check_trial_files(trial_files(**{"../outside": b"x"}))
    assert "../outside: not a plain path inside the trial folder" in escaping
    write_trial(tmp_path / "trial-1", trial_files())
    assert (tmp_path / "trial-1/artifacts/frame.png").read_bytes() == b"\x89PNG"


def test_concurrency_caps_the_trials_at_once_spread_over_the_nodes():
    def node(slots: int) -> Node:
        return Node(NodeReport("n" * 12, "host", EngineRecord("1", "1"), []), slots)

    nodes = [node(2), node(2), node(1)]
    _cap(nodes, 3)
    assert [n.slots for n in nodes] == [1, 1, 1]
    nodes = [node(4), node(1)]
    _cap(nodes, 4)
    assert [n.slots for n in nodes] == [3, 1]
    nodes = [node(2)]
    _cap(nodes, None)
    assert [n.slots for n in nodes] == [2]


def test_a_node_may_keep_the_pinned_images_under_another_repository(monkeypatch):
    assert node_tag("bench/base:abc") == "bench/base:abc"
    monkeypatch.setenv("BENCH_NODE_REPOSITORY", "mirror.local/team/")
    assert node_tag("bench/base:abc") == "mirror.local/team/base:abc"


@pytest.mark.parametrize("change, words", [
    ({"dry_run": True}, "--dry-run prints each agent's command"),
    ({"agent_options": AgentOptions(model_script=Path("turns.toml"))}, "--model-script serves the model"),
])
def test_what_cannot_reach_a_node_is_refused_before_anything_is_built(change, words):
    request = RunRequest(cases=["hello"], executor="ray", **change)
    with pytest.raises(UsageError, match=words):
        check_request(request, judge=None)
    with pytest.raises(UsageError, match="judge checks"):
        check_request(RunRequest(cases=["hello"], executor="ray"), judge=object())


def test_an_address_where_no_cluster_answers_is_refused_at_once_naming_the_fix():
    from bench.ray_executor import connect

    with pytest.raises(UsageError, match=r"no Ray cluster answers at 127.0.0.1:1 .*ray start --head"):
        connect("127.0.0.1:1")


def test_a_node_whose_bench_builds_another_wheel_is_refused_with_the_fix(tmp_path):
    from bench.harness import build_wheel
    from bench.hashing import sha256_file
    from bench.ray_node import _harness_problems

    ours = sha256_file(build_wheel(tmp_path))
    assert _harness_problems(Shipment("b" * 64, ours, "h.whl")) == []
    [problem] = _harness_problems(Shipment("b" * 64, "0" * 64, "h.whl"))
    assert "its bench is another build" in problem and "install the driver's bench on the node" in problem
