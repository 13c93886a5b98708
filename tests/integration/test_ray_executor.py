"""`bench run --executor ray` on a real two-node Ray cluster on this machine (both nodes on the local engine).

The cluster is started once for the module (tests/ray_cluster.py) and stopped at the
end, whatever happened. The tests run in order: the second kills the second node, the
third interrupts a run, the fourth adds a node whose images differ from the run's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ray_cluster import RayCluster

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SLOW_SOLVER = 'sleep 25; cd {workspace} && echo "Hello, world!" > hello.txt'


@pytest.fixture(scope="module")
def cluster():
    made = RayCluster()
    try:
        made.start("head")
        made.start("second")
        yield made
    finally:
        made.stop()


def records(label: Path, name: str) -> dict[str, dict]:
    return {p.parent.relative_to(label).as_posix(): json.loads(p.read_text())
            for p in sorted(label.glob(f"*/*/trial-*/{name}"))}


def only_dirty_harness(done) -> bool:
    """verify-provenance passed, or named exactly the harness's uncommitted changes (a checkout being edited)."""
    report = json.loads(done.stdout)
    return report["ok"] if done.returncode == 0 else \
        {d["what"].split(" (")[0] for d in report["differences"]} == {"harness was dirty"}


def bench_env() -> dict[str, str]:
    return {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}


def slow_run(cluster: RayCluster, tmp_path: Path, label: str, trials: int) -> list[str]:
    """`bench run` of hello with an agent that takes a while, on the cluster."""
    return [sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "command", "--agent-cmd", SLOW_SOLVER,
            "--trials", str(trials), "--executor", "ray", "--ray-address", cluster.address, "--label", label]


def run_containers(docker_client, run_id: str) -> list:
    return docker_client.containers.list(all=True, filters={"label": f"bench.run={run_id}"})


def test_trials_spread_over_both_nodes_and_record_as_a_local_run_does(cluster, docker_client, bench, tmp_path):
    ray = ["--executor", "ray", "--ray-address", cluster.address]
    args = ["run", "hello", "c-rle", "--agent", "oracle", "--trials", "3"]
    done = bench(*args, *ray, "--label", "on-ray", check_rc=0)
    bench(*args, "--label", "local", check_rc=0)
    on_ray, local = tmp_path / "results/on-ray", tmp_path / "results/local"
    results, provenance = records(on_ray, "result.json"), records(on_ray, "provenance.json")
    assert len(results) == 6
    assert {k: r["verdict"] for k, r in results.items()} == \
        {k: r["verdict"] for k, r in records(local, "result.json").items()}
    ids = cluster.node_ids()
    assert {p["executor"]["node_id"] for p in provenance.values()} == {ids["head"], ids["second"]}
    assert {(r["lane"], p["lane"], p["executor"]["name"]) for r, p in zip(results.values(), provenance.values())} == \
        {("ray", "ray", "ray")}
    assert f"node {ids['second'][:12]}" in done.stderr and "trials per node:" in done.stderr
    assert only_dirty_harness(bench("verify-provenance", str(on_ray), "--json"))
    mixed = bench("compare", "local", "on-ray", "--results", str(tmp_path / "results"))
    assert mixed.returncode == 3 and "lane" in mixed.stdout + mixed.stderr  # lanes are not mixed unless asked

    bench("run", "hello", "--agent", "oracle", "--label", "across", check_rc=0)  # resume across executors
    resumed = bench("run", "hello", "--agent", "oracle", "--trials", "2", *ray, "--label", "across", check_rc=0)
    assert "1 finished trial(s) kept, 1 to run" in resumed.stderr
    lanes = {k: r["lane"] for k, r in records(tmp_path / "results/across", "result.json").items()}
    assert lanes == {"hello/default/trial-1": "local-docker", "hello/default/trial-2": "ray"}


def test_a_node_lost_mid_trial_gives_error_and_the_run_goes_on(cluster, docker_client, bench, tmp_path):
    ids = cluster.node_ids()
    runner = subprocess.Popen(slow_run(cluster, tmp_path, "lost", 4), cwd=tmp_path, env=bench_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = cluster.nodes["second"].pid
    deadline = time.monotonic() + 180
    while not [c for c in docker_client.containers.list(filters={"label": "bench.role=agent"})
               if _in_session(c.labels.get("bench.pid"), second)]:
        assert time.monotonic() < deadline and runner.poll() is None, "no agent ever ran on the second node"
        time.sleep(0.5)
    cluster.kill("second")
    out, err = runner.communicate(timeout=300)
    assert runner.returncode == 3, err  # ERROR, no FAIL
    results = records(tmp_path / "results/lost", "result.json")
    provenance = records(tmp_path / "results/lost", "provenance.json")
    lost = {k for k, p in provenance.items() if p["executor"]["node_id"] == ids["second"]}
    assert lost and len(results) == 4
    for key, result in results.items():
        if key in lost:
            assert result["verdict"] == "ERROR" and "was lost while running this trial" in result["reason"], result
        else:
            assert result["verdict"] == "PASS", result["reason"]
    run_id = next(iter(results.values()))["run_id"]
    assert run_containers(docker_client, run_id) == []
    assert only_dirty_harness(bench("verify-provenance", str(tmp_path / "results/lost"), "--json"))  # ERRORs too


def test_ctrl_c_cancels_the_ray_tasks_and_every_node_removes_the_runs_containers(cluster, docker_client, tmp_path):
    from bench.engine import alive

    sessions = {process.pid for process in cluster.nodes.values()}
    runner = subprocess.Popen(slow_run(cluster, tmp_path, "stopped", 2), cwd=tmp_path, env=bench_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, agents = time.monotonic() + 180, []
    while not agents:
        assert time.monotonic() < deadline and runner.poll() is None, "no agent ever ran on a node"
        agents = [c for c in docker_client.containers.list(filters={"label": "bench.role=agent"})
                  if any(_in_session(c.labels.get("bench.pid"), session) for session in sessions)]
        time.sleep(0.5)
    runner.send_signal(signal.SIGINT)
    out, err = runner.communicate(timeout=180)
    assert runner.returncode != 0 and "interrupted: cancelling the Ray tasks" in err, err
    assert run_containers(docker_client, agents[0].labels["bench.run"]) == []
    assert not alive(agents[0].labels["bench.pid"])  # the task's worker was killed, not left to finish
    stopped = [json.loads(path.read_text()) for path in (tmp_path / "results" / "stopped").rglob("result.json")]
    assert stopped and all(r["verdict"] == "ERROR" and r["interrupted"] for r in stopped), stopped
    assert all(r["reason"].startswith("interrupted: the run was stopped before this trial finished") for r in stopped)


def _in_session(pid: str | None, session: int) -> bool:
    """Whether the process is one of the node's (its workers lead process groups of their own, in its session)."""
    try:
        return os.getsid(int(pid or 0)) == session
    except (ProcessLookupError, ValueError):
        return False


def test_a_node_whose_image_differs_from_the_run_is_refused_by_name(cluster, docker_client, bench, tmp_path):
    from bench.images import Images
    from bench.paths import Project

    images = Images(docker_client, Project(ROOT))
    base, other = images.tag("base"), images.tag("toolchain")
    mirror = f"benchtestmirror/{base.split('/', 1)[1]}"
    docker_client.images.get(other).tag(mirror)  # on that node, "base" names another image
    try:
        cluster.start("odd", env={"BENCH_NODE_REPOSITORY": "benchtestmirror"})
        odd = cluster.node_ids()["odd"]
        done = bench("run", "hello", "--agent", "oracle", "--trials", "2", "--executor", "ray",
                     "--ray-address", cluster.address, "--label", "refused", check_rc=0)
        assert f"node {odd[:12]}" in done.stderr and "refused for this run" in done.stderr
        refusal = next(line for line in done.stderr.splitlines() if "refused for this run" in line)
        assert odd[:12] in refusal and "image base" in refusal and "the run pins" in refusal
        provenance = records(tmp_path / "results/refused", "provenance.json")
        assert odd not in {p["executor"]["node_id"] for p in provenance.values()}
    finally:
        docker_client.images.remove(mirror, noprune=True)


def test_a_node_that_lacks_an_image_reports_it_and_loads_what_the_driver_sends(cluster, docker_client, tmp_path):
    """The node half of sending per-run layers: prepare names the missing image's ID; load_images takes a
    `docker save` archive through Ray's object store, and the image is back with the very ID the run pins."""
    import io
    import tarfile

    import ray

    from bench.harness import build_wheel
    from bench.hashing import sha256_bytes
    from bench.models import HarnessRecord, ImageRecord
    from bench.paths import Project
    from bench.ray_node import RunShape, load_images, prepare
    from bench.ray_ship import Shipment, pack_project

    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in {"Dockerfile": b"FROM scratch\nCOPY hello /hello\n", "hello": b"hi\n"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    image, _ = docker_client.images.build(fileobj=context, custom_context=True, tag="benchtest/ray-missing:1", rm=True)
    archive = b"".join(image.save(named=False))
    docker_client.images.remove(image.id, force=True)
    wheel = build_wheel(tmp_path / "wheel").read_bytes()
    bundle, _ = pack_project(Project(ROOT), [])
    shipment = Shipment(sha256_bytes(bundle), sha256_bytes(wheel), "hermetic_bench.whl")
    shape = RunShape("raytest", "raytest", HarnessRecord(version="0", git_sha=None, dirty=False,
                                                         wheel_sha256=shipment.wheel_sha256), [], None, "ray", False)
    needed = [ImageRecord(name="ray-missing", tag="benchtest/ray-missing:1", id=image.id)]
    on_head = {"resources": {"head": 0.01}, "num_cpus": 0}
    kept = signal.getsignal(signal.SIGTERM), sys.excepthook  # ray.init replaces both in this (pytest's) process
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    try:
        refs = [ray.put(bundle), ray.put(wheel)]
        report = ray.get(ray.remote(prepare).options(**on_head).remote(*refs, shipment, shape, needed))
        assert (report.refused, report.missing) == ([], [image.id])
        problems = ray.get(ray.remote(load_images).options(**on_head).remote(*refs, shipment, shape, needed,
                                                                               [ray.put(archive)]))
        assert problems == [] and docker_client.images.get(image.id).id == image.id
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, kept[0])
        sys.excepthook = kept[1]
        docker_client.images.remove(image.id, force=True)


def test_cleanup_of_a_dead_workers_containers_spares_the_live_workers_of_the_same_run(docker_client):
    """A Ray run has one run id and many owning processes (workers): when one dies (its node lost), any bench on the
    host removes that worker's containers, never its live siblings' (which once took a live trial down)."""
    import socket

    from bench.engine import HARNESS, HARNESS_LABEL, HOST_LABEL, PID_LABEL, RUN_LABEL, remove_orphans
    from bench.images import Images
    from bench.paths import Project

    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid now names no process: a worker of a lost node
    image = Images(docker_client, Project(ROOT)).tag("base")
    made = {owner: docker_client.containers.create(image, ["sleep", "60"], network_disabled=True, labels={
        HARNESS_LABEL: HARNESS, HOST_LABEL: socket.gethostname(), PID_LABEL: str(pid), RUN_LABEL: "raytest-shared"})
        for owner, pid in (("live", os.getpid()), ("dead", gone.pid))}
    try:
        assert "raytest-shared" in remove_orphans(docker_client)
        left = {c.id for c in docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}=raytest-shared"})}
        assert left == {made["live"].id}
    finally:
        for container in made.values():
            try:
                container.remove(force=True)
            except Exception:
                pass
