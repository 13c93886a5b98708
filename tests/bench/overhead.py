"""Per-trial harness overhead of the `null` agent on `hello`, against a Docker-SDK floor.

    python tests/bench/overhead.py [--trials N] [--blocks K] [--json OUT]

The floor is the same container work done directly with the Docker SDK in this process,
with the same image, user, network, limits and mounts as the harness, and nothing else:

  agent:  create, put_archive(workspace + PROMPT tar), start, wait, get_archive(/workspace)
          into memory, remove;
  grader: the one check of hello that runs code (`test -f hello.txt`) in a fresh container:
          create, put_archive(exported tar), start, wait, logs (stdout, stderr), remove.
          (hello's grep check is read from the exported tar on the host: no container.)

The tars are made once before timing (they are not container operations). The harness side is ``bench.run.execute`` for the same case and agent, in the
same process. Its per-trial time is the sum of each TrialResult's phases; ``execute()/N``
is the whole call's wall time divided by its trials, so it includes per-run setup.

Floor and harness alternate in K blocks of N/K (ABBA order: floor first in odd blocks,
harness first in even ones), so drift hits both. Each block's harness half is one
``execute(trials=N/K)`` on its own label. One discarded warm-up of each comes first.
Finally ``bench run hello --agent null`` runs twice as a subprocess; the second one's
wall time is reported with its summary.json's ``images_built`` (it must build nothing).

This is a report, not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.agents.base import PROMPT_FILE  # noqa: E402
from bench.cases import load_case  # noqa: E402
from bench.harness import prepare  # noqa: E402
from bench.images import Images  # noqa: E402
from bench.paths import Project  # noqa: E402
from bench.run import RunRequest, execute  # noqa: E402
from bench.sandbox import USER  # noqa: E402

CASE, AGENT = "hello", "null"
TARGET = 1.5
FLOOR_LABEL = "bench.overhead"  # our own label: never the harness's, so its cleanup leaves ours alone


# --- tars, built once ---------------------------------------------------------------


def _tar(entries: list[tuple[str, bytes | None]]) -> bytes:
    """A tar of (name, data) pairs owned by uid 1000; data None is a directory."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.uid = info.gid = 1000
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _parents(name: str) -> list[str]:
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _with_dirs(files: dict[str, bytes]) -> list[tuple[str, bytes | None]]:
    entries: list[tuple[str, bytes | None]] = []
    seen: set[str] = set()
    for name, data in files.items():
        for folder in _parents(name):
            if folder not in seen:
                seen.add(folder)
                entries.append((folder, None))
        entries.append((name, data))
    return entries


def agent_tar(case) -> bytes:
    """workspace/ of the case plus the prompt, as the harness lays them out."""
    files: dict[str, bytes] = {}
    entries: list[tuple[str, bytes | None]] = [("workspace", None)]
    for path in sorted(case.workspace.rglob("*")):
        name = f"workspace/{path.relative_to(case.workspace).as_posix()}"
        entries.append((name, None if path.is_dir() else path.read_bytes()))
    files[PROMPT_FILE.lstrip("/")] = case.prompt_file.read_bytes()
    return _tar(entries + _with_dirs(files))


# --- the floor ----------------------------------------------------------------------


class Floor:
    """The raw Docker SDK operations of one trial, timed op by op."""

    def __init__(self, client: docker.DockerClient, project: Project, wheel: Path) -> None:
        self.client = client
        case = load_case(project, CASE)
        images = Images(client, project)
        self.agent_image = images.ensure(case.spec.image).id
        self.grader_image = images.ensure(case.grader_image).id
        self.limits = case.spec.limits
        self.agent_tar = agent_tar(case)
        self.check = next(c.run for c in case.gate.checks if c.kind == "command")
        self.labels = {FLOOR_LABEL: str(os.getpid())}

    def _create(self, image: str, command: list[str], **extra):
        limits = self.limits
        return self.client.containers.create(
            image, command=command, user=USER, working_dir="/workspace", labels=self.labels,
            network_mode="none", nano_cpus=int(limits.cpus * 1e9), mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m", pids_limit=limits.pids, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], shm_size="256m", **extra,
        )

    def once(self) -> dict[str, float]:
        """One trial's container work; returns seconds per operation (and totals)."""
        t: dict[str, float] = {}
        clock = time.perf_counter

        def mark(name: str, since: float) -> float:
            now = clock()
            t[name] = t.get(name, 0.0) + now - since
            return now

        start = now = clock()
        agent = self._create(self.agent_image, ["true"], environment={})
        now = mark("agent.create", now)
        agent.put_archive("/", self.agent_tar)
        now = mark("agent.put", now)
        agent.start()
        now = mark("agent.start", now)
        agent.wait()
        now = mark("agent.wait", now)
        stream, _ = agent.get_archive("/workspace")
        exported = b"".join(stream)
        now = mark("agent.get_archive", now)
        agent.remove(force=True, v=True)
        now = mark("agent.remove", now)
        t["agent"] = now - start

        grader_start = now
        grader = self._create(self.grader_image, ["sh", "-c", self.check], environment={"HOME": "/home/bench"})
        now = mark("grader.create", now)
        grader.put_archive("/", exported)
        now = mark("grader.put", now)
        grader.start()
        now = mark("grader.start", now)
        status = grader.wait()
        now = mark("grader.wait", now)
        grader.logs(stdout=True, stderr=False), grader.logs(stdout=False, stderr=True)
        now = mark("grader.logs", now)
        grader.remove(force=True, v=True)
        now = mark("grader.remove", now)
        t["grader"] = now - grader_start
        t["total"] = now - start
        if status.get("StatusCode") == 0:  # the null agent must fail hello; anything else means the floor is wrong
            raise RuntimeError(f"floor check `{self.check}` passed on the null agent's workspace")
        return t

    def cleanup(self) -> None:
        for container in self.client.containers.list(all=True, filters={"label": f"{FLOOR_LABEL}={os.getpid()}"}):
            container.remove(force=True, v=True)


# --- the harness --------------------------------------------------------------------


def harness_block(project: Project, results: Path, label: str, trials: int) -> dict:
    request = RunRequest(cases=[CASE], agent=AGENT, trials=trials, label=label, results=results, concurrency=1,
                         command_line=["overhead.py", label])
    started = time.perf_counter()
    outcome = execute(request, project, say=lambda line: None)
    wall = time.perf_counter() - started
    per_trial = [sum(r.phases.values()) for r in outcome.results]
    phases = [dict(r.phases) for r in outcome.results]
    verdicts = [r.verdict.value for r in outcome.results]
    if verdicts != ["FAIL"] * trials:
        reasons = [r.reason for r in outcome.results]
        raise RuntimeError(f"harness trials gave {verdicts!r}, expected all FAIL: {reasons}")
    return {"label": label, "trials": trials, "wall": wall, "per_trial": per_trial, "phases": phases}


def cli_run(results: Path, label: str) -> dict:
    command = ["bench", "run", CASE, "--agent", AGENT, "--label", label, "--results", str(results)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    summary_file = results / label / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else None
    return {"label": label, "wall": wall, "exit_code": done.returncode,
            "images_built": None if summary is None else summary.get("images_built"),
            "stderr_tail": done.stderr[-1000:] if done.returncode else ""}


# --- report -------------------------------------------------------------------------


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def split(total: int, blocks: int) -> list[int]:
    blocks = max(1, min(blocks, total))
    base, extra = divmod(total, blocks)
    return [base + (1 if i < extra else 0) for i in range(blocks)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10, help="floor iterations and harness trials (default 10)")
    parser.add_argument("--blocks", type=int, default=2, help="alternating floor/harness blocks (default 2)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded floor iterations and harness trials first")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")

    project = Project(ROOT)
    client = docker.from_env(timeout=120)
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        tmp_path = Path(tmp)
        results = tmp_path / "results"
        wheel = prepare(tmp_path / "wheel").wheel
        floor = Floor(client, project, wheel)
        floor_runs: list[dict[str, float]] = []
        blocks: list[dict] = []
        try:
            for _ in range(args.warmup):
                floor.once()
            if args.warmup:
                harness_block(project, results, "warmup", args.warmup)
            for index, size in enumerate(split(args.trials, args.blocks)):
                def do_floor() -> None:
                    floor_runs.extend(floor.once() for _ in range(size))

                def do_harness() -> None:
                    blocks.append(harness_block(project, results, f"block-{index + 1}", size))

                for step in ((do_floor, do_harness) if index % 2 == 0 else (do_harness, do_floor)):
                    step()
            cli = [cli_run(results, "cli-1"), cli_run(results, "cli-2")]
        finally:
            floor.cleanup()

    floor_total = [r["total"] for r in floor_runs]
    harness_trial = [t for b in blocks for t in b["per_trial"]]
    execute_per_trial = sum(b["wall"] for b in blocks) / sum(b["trials"] for b in blocks)
    execute_per_block = [b["wall"] / b["trials"] for b in blocks]
    setup_per_run = [b["wall"] - sum(b["per_trial"]) for b in blocks]
    floor_med = statistics.median(floor_total)
    second = cli[1]

    rows = [
        ("floor: raw SDK ops per trial", stats(floor_total)),
        ("harness: per trial (sum of phases)", stats(harness_trial)),
        ("harness: execute() wall / N", stats(execute_per_block) | {"median": execute_per_trial}),
    ]
    ratio_trial = statistics.median(harness_trial) / floor_med
    ratio_execute = execute_per_trial / floor_med

    print(f"null agent on {CASE}: {args.trials} floor iterations and {args.trials} harness trials, "
          f"{len(blocks)} alternating blocks ({', '.join(str(b['trials']) for b in blocks)}), "
          f"{args.warmup} warm-up each discarded")
    print(f"{'':38} {'median':>8} {'min':>8} {'max':>8} {'x floor (med/min/max)':>24}")
    for name, s in rows:
        ratios = f"{s['median'] / floor_med:.2f} / {s['min'] / floor_med:.2f} / {s['max'] / floor_med:.2f}"
        print(f"{name:38} {s['median']:8.3f} {s['min']:8.3f} {s['max']:8.3f} {ratios:>24}")
    print("(x floor: each figure divided by the floor's median; execute() row median is total wall / total trials,"
          " min/max over blocks)")
    floor_agent = statistics.median(r["agent"] for r in floor_runs)
    floor_grader = statistics.median(r["grader"] for r in floor_runs)
    harness_agent = statistics.median(p.get("agent", 0.0) for b in blocks for p in b["phases"])
    harness_grade = statistics.median(p.get("grade", 0.0) for b in blocks for p in b["phases"])
    print(f"by container (median s): agent floor {floor_agent:.3f} vs harness {harness_agent:.3f}; "
          f"grader floor {floor_grader:.3f} vs harness {harness_grade:.3f}")
    print(f"per-run setup in execute() (wall - sum of trials), per block: "
          f"{', '.join(f'{s:.3f}' for s in setup_per_run)} s")
    ops = sorted(k for k in floor_runs[0] if "." in k)
    print("floor ops (median s): " + ", ".join(f"{k} {statistics.median(r[k] for r in floor_runs):.3f}" for k in ops))
    print(f"second `bench run {CASE} --agent {AGENT}` (CLI subprocess): {second['wall']:.3f} s wall, "
          f"exit {second['exit_code']}, images_built={second['images_built']!r} "
          f"({'builds nothing' if second['images_built'] == [] else 'BUILT SOMETHING or no summary'}); "
          f"first: {cli[0]['wall']:.3f} s, images_built={cli[0]['images_built']!r}")
    verdict = "met" if ratio_trial <= TARGET else "not met"
    print(f"ratio harness/floor per trial (median): {ratio_trial:.2f}x; execute()/N: {ratio_execute:.2f}x")
    print(f"target <= {TARGET}x: {verdict}")

    if args.json:
        report = {
            "case": CASE, "agent": AGENT, "trials": args.trials, "blocks": [b["trials"] for b in blocks],
            "warmup": args.warmup, "target_ratio": TARGET, "target_met": ratio_trial <= TARGET,
            "ratio_per_trial": ratio_trial, "ratio_execute_per_trial": ratio_execute,
            "floor": {"per_trial_s": floor_total, "stats": stats(floor_total),
                      "ops_median_s": {k: statistics.median(r[k] for r in floor_runs) for k in ops},
                      "agent_median_s": floor_agent, "grader_median_s": floor_grader},
            "harness": {"per_trial_s": harness_trial, "stats": stats(harness_trial),
                        "phases": [p for b in blocks for p in b["phases"]],
                        "execute": [{"trials": b["trials"], "wall_s": b["wall"]} for b in blocks],
                        "execute_per_trial_s": execute_per_trial, "setup_per_run_s": setup_per_run},
            "cli": {"first": cli[0], "second": second, "second_builds_nothing": second["images_built"] == []},
            "host": {"python": platform.python_version(), "docker": client.version().get("Version")},
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
