"""The driver's half of `bench run --executor ray`: trials as Ray tasks, records as good as local ones.

Why the driver places every trial itself (Ray node affinity) rather than letting Ray
choose: a node is used only after it proved it can run the run's trials exactly
(bench/ray_node.py ``prepare``), a refused node must never receive one, a lost node's
trial must be named, and progress must say where each trial runs. So the driver asks
Ray for the nodes that offer the ``docker`` resource, prepares each once, gives each
accepted node as many trials at a time as it offers ``docker`` units (the run's
--concurrency caps the total), and sends each trial to a node with a free unit.

What comes back is checked before it is written (bench/ray_ship.py). What goes wrong
is recorded, never dropped and never charged to the agent: a node lost mid-trial, a
node's harness error, files that fail their manifest all make that trial ERROR with the
reason, written by the same record phase a local trial uses; the run goes on with the
other nodes. Ctrl-C cancels every Ray task and has each node remove the run's containers.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .assessment import unscored
from .errors import BenchError, UsageError
from .hashing import sha256_bytes, sha256_file
from .models import EngineRecord, ExecutorRecord, ImageRecord, Verdict, utcnow
from .paths import Project
from .progress import RunProgress
from .ray_node import NodeReport, NodeTrial, RunShape, clean_node, load_images, prepare, run_on_node
from .ray_ship import Shipment, check_trial_files, pack_project, write_trial
from .record import record
from .result_models import TrialResult
from .trial import RunContext, TrialSpec

RESOURCE = "docker"  # the custom resource a node offers per trial it may run at once (`ray start --resources`)
Say = Callable[[str], None]
INSTALL = "install Ray with `pip install 'hermetic-bench[ray]'`"


@dataclass
class Node:
    """An accepted node, its trial slots, and what it has run."""

    report: NodeReport
    slots: int
    running: int = 0
    ran: int = 0
    lost: bool = False

    @property
    def short(self) -> str:
        return self.report.node_id[:8]


@dataclass
class Flight:
    """One trial on its way: the spec, the node running it, when it was sent."""

    spec: TrialSpec
    node: Node
    started_at: object = field(default_factory=utcnow)


def import_ray():
    """Ray, or a UsageError saying how to install it (it is an optional extra)."""
    try:
        import ray
    except ImportError:
        raise UsageError(f"--executor ray needs Ray, which is not installed — {INSTALL}") from None
    return ray


def check_request(request, judge) -> None:
    """What --executor ray cannot carry to a node is refused before anything is built: Ray missing, a model judge
    or a scripted model endpoint (both hold what must stay on this machine), a dry run (it prints here)."""
    import_ray()
    if judge is not None:
        raise UsageError("--executor ray: these cases have judge checks, whose model credential stays on this machine "
                         "— run them without --executor ray")
    if request.dry_run:
        raise UsageError("--executor ray: --dry-run prints each agent's command on this machine's terminal — dry-run "
                         "without --executor ray")
    if request.agent_options.model_script:
        raise UsageError("--executor ray: --model-script serves the model from this machine — run without "
                         "--executor ray")


def connect(address: str | None):
    """Join the cluster at ``address`` (RAY_ADDRESS, or the one this machine started); UsageError naming the fix."""
    ray = import_ray()
    target = address or os.environ.get("RAY_ADDRESS") or "auto"
    try:
        _reachable(target)
        ray.init(address=target, logging_level=logging.WARNING, log_to_driver=False, ignore_reinit_error=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise UsageError(f"no Ray cluster answers at {target} ({exc}) — start one with `ray start --head "
                         f"--resources '{{\"{RESOURCE}\": 4}}'` or pass --ray-address HOST:PORT") from None
    return ray


def _reachable(target: str) -> None:
    """A HOST:PORT that nothing answers on is refused at once: ray.init would wait on it for minutes."""
    host, _, port = target.rpartition(":")
    if host and port.isdigit() and "://" not in target:
        socket.create_connection((host, int(port)), timeout=10).close()


def run_on_ray(context: RunContext, specs: list[TrialSpec], project: Project, address: str | None,
               concurrency: int | None, say: Say, line: Callable[[TrialResult], str],
               attest: Callable[[set[Path]], None]) -> tuple[list[TrialResult], bool]:
    """Run ``specs`` on the cluster's Docker nodes; the results, and whether trials were left for want of a node."""
    ray = connect(address)
    try:
        shipment, bundle, wheel = _ship(ray, project, context, specs)
        shape = RunShape(context.run_id, context.label, context.harness.record, context.command_line, context.seat,
                         context.lane, context.dry_run, dict(context.lock), context.ca)
        shipped = (bundle, wheel, shipment, shape)
        nodes = _accepted(ray, context, shipped, _needed(specs), concurrency, say)
        return _Schedule(ray, context, nodes, shipped, say, line, attest).run(specs)
    finally:
        ray.shutdown()


def _ship(ray, project: Project, context: RunContext, specs: list[TrialSpec]):
    """Put the project bundle and the wheel in Ray's object store once; their digests travel with every task."""
    host_files = [spec.subject_tarball for spec in specs if spec.subject_tarball] + ([context.ca] if context.ca else [])
    data, files = pack_project(project, host_files)
    wheel = context.harness.wheel
    shipment = Shipment(sha256_bytes(data), sha256_file(wheel), wheel.name, files)
    return shipment, ray.put(data), ray.put(wheel.read_bytes())


def _needed(specs: list[TrialSpec]) -> list[ImageRecord]:
    """Every image the trials use, once each: what a node must hold with the run's IDs."""
    return list({record.id + record.tag: record for spec in specs for record in spec.images.values()}.values())


def _docker_nodes(ray) -> list[dict]:
    found = [node for node in ray.nodes() if node.get("Alive") and node.get("Resources", {}).get(RESOURCE, 0) >= 1]
    if not found:
        raise UsageError(f"no live Ray node offers the `{RESOURCE}` resource — start each Docker host's node with "
                         f"`ray start --address HEAD:PORT --resources '{{\"{RESOURCE}\": 4}}'`")
    return found


_REMOTES: dict = {}


def _remote(ray, function):
    """The Ray remote function for ``function``, made once per process (each one is exported to the cluster)."""
    if function not in _REMOTES:
        _REMOTES[function] = ray.remote(function)
    return _REMOTES[function]


def _on(ray, node_id: str, slots: float = 0) -> dict:
    """Task options that place it on exactly this node (never elsewhere), holding ``slots`` docker units."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False), "num_cpus": 0,
            "resources": {RESOURCE: slots} if slots else {}, "max_retries": 0}


def _accepted(ray, context: RunContext, shipped: tuple, needed: list[ImageRecord], concurrency: int | None,
              say: Say) -> list[Node]:
    """The nodes that proved fit, each with its slots; every refused node said by name, with every reason."""
    prepared = [(found, _remote(ray, prepare).options(**_on(ray, found["NodeID"])).remote(*shipped, needed))
                for found in _docker_nodes(ray)]
    archives: dict = {}  # image ID -> its `docker save` archive in the object store, made once for every node
    nodes, refused = [], []
    for report in (_report(ray, node, ref) for node, ref in prepared):
        problems = report.refused or (_send_images(ray, context.client, report, shipped, needed, archives, say)
                                      if report.missing else [])
        if problems:
            refused.append(f"{report.name} refused for this run: {'; '.join(problems)}")
            say(refused[-1])
        else:
            nodes.append(Node(report, _slots(ray, report.node_id)))
    if not nodes:
        raise UsageError("no Ray node can run this run's trials:\n" + "\n".join(refused))
    _cap(nodes, concurrency)
    say("ray: " + ", ".join(f"{node.report.name} runs {node.slots} at a time" for node in nodes))
    return nodes


def _send_images(ray, client, report: NodeReport, shipped: tuple, needed: list[ImageRecord], archives: dict,
                 say: Say) -> list[str]:
    """Send a node the images it lacks and can neither build nor pull (per-run layers), as `docker save` archives,
    which keep image IDs; what is still wrong on the node after it loaded them."""
    from .engine import engine_faults

    say(f"{report.name}: sending {len(report.missing)} image(s) it lacks and cannot build or pull")
    try:
        for image_id in report.missing:
            if image_id not in archives:
                with engine_faults(f"saving image {image_id[:19]} for {report.name}"):
                    archives[image_id] = ray.put(b"".join(client.images.get(image_id).save(named=False)))
        return ray.get(_remote(ray, load_images).options(**_on(ray, report.node_id)).remote(
            *shipped, needed, [archives[image_id] for image_id in report.missing]))
    except BenchError as exc:
        return [str(exc)]
    except Exception as exc:  # the node went away while loading
        return [f"it did not load the images sent ({type(exc).__name__})"]


def _report(ray, node: dict, ref) -> NodeReport:
    """The node's own report, or a refusal saying it did not give one (it went away, its worker died)."""
    try:
        return ray.get(ref)
    except Exception as exc:
        why = f"it did not answer ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]})"
        return NodeReport(node["NodeID"], node.get("NodeManagerHostname", "?"), EngineRecord("unknown", "unknown"), [why])


def _slots(ray, node_id: str) -> int:
    found = next(node for node in ray.nodes() if node["NodeID"] == node_id)
    return max(1, int(found["Resources"].get(RESOURCE, 1)))


def _cap(nodes: list[Node], concurrency: int | None) -> None:
    """At most ``concurrency`` trials at once over the cluster, spread over the nodes as evenly as they allow."""
    if not concurrency:
        return
    budget = {id(node): 0 for node in nodes}
    left = concurrency
    while left and any(budget[id(node)] < node.slots for node in nodes):
        for node in nodes:
            if left and budget[id(node)] < node.slots:
                budget[id(node)] += 1
                left -= 1
    for node in nodes:
        node.slots = budget[id(node)]


class _Schedule:
    """The driver's loop: fill free node slots in schedule order, take each finished trial, record it."""

    def __init__(self, ray, context: RunContext, nodes: list[Node], shipped: tuple, say: Say,
                 line: Callable[[TrialResult], str], attest: Callable[[set[Path]], None]) -> None:
        self.ray, self.context, self.nodes, self.shipped = ray, context, nodes, shipped
        self.say, self.line, self.attest = say, line, attest
        self.flights: dict = {}
        self.results: list[TrialResult] = []

    def run(self, specs: list[TrialSpec]) -> tuple[list[TrialResult], bool]:
        queue = deque(specs)
        with RunProgress(len(specs), self.say) as self.progress:
            try:
                while queue or self.flights:
                    self._send(queue)
                    if not self.flights:
                        break  # trials left, no node left to take them
                    ready, _ = self.ray.wait(list(self.flights), num_returns=1)
                    for ref in ready:
                        self._take(ref, queue)
            except KeyboardInterrupt:
                self._interrupt()
                raise
        if queue:
            self.say(f"no Ray node is left for {len(queue)} trial(s); rerun with --label {self.context.label} "
                     "to run them when nodes are back")
        self.say("trials per node: " + ", ".join(f"{node.report.name} {node.ran}" + (" (lost)" if node.lost else "")
                                                 for node in self.nodes))
        return self.results, bool(queue)

    def _send(self, queue: deque) -> None:
        """Fill free slots one trial per node in turn, so trials spread over the nodes rather than fill the first."""
        bundle, wheel, shipment, shape = self.shipped
        while queue and (free := [node for node in self.nodes if not node.lost and node.running < node.slots]):
            for node in free[:len(queue)]:
                spec = queue.popleft()
                ref = _remote(self.ray, run_on_node).options(**_on(self.ray, node.report.node_id, 1)).remote(
                    bundle, wheel, shipment, shape, node.report, spec)
                self.flights[ref] = Flight(spec, node)
                node.running += 1
                self.progress.started(_where(spec, node))

    def _take(self, ref, queue: deque) -> None:
        """One finished task: its checked files written, or an ERROR record saying what happened to it."""
        from ray.exceptions import RayTaskError, TaskUnschedulableError

        flight = self.flights.pop(ref)
        node, spec = flight.node, flight.spec
        node.running -= 1
        try:
            result = self._written(self.ray.get(ref), flight)
        except TaskUnschedulableError:  # its node was gone before it started: another node runs it
            self._lose(node, "it went away")
            queue.appendleft(spec)
            self.progress.withdrawn(_where(spec, node))
            return
        except RayTaskError as exc:
            result = self._error(flight, f"harness error on {node.report.name}: {_cause(exc)}")
        except Exception as exc:  # the node, or the worker running the trial, went away mid-trial
            result = self._error(flight, self._lost(node, exc))
        node.ran += 1
        self.results.append(result)
        self.progress.finished(_where(spec, node), result, f"{self.line(result)} [{node.report.name}]")
        self.attest({flight.spec.paths.dir for flight in self.flights.values()})

    def _written(self, sent: NodeTrial, flight: Flight) -> TrialResult:
        """The node's files under the trial folder once every one matches its manifest; else an ERROR record."""
        if sent.engine_lost:
            self._lose(flight.node, "its Docker engine went away")
        problems = check_trial_files(sent.files)
        if problems:
            return self._error(flight, f"the files {flight.node.report.name} sent failed their manifest: "
                               + "; ".join(problems[:5]))
        write_trial(flight.spec.paths.dir, sent.files)
        return TrialResult.model_validate_json(sent.files["result.json"])

    def _error(self, flight: Flight, reason: str, interrupted: bool = False) -> TrialResult:
        """An ERROR record for a trial whose node could not record it, by the local record phase."""
        spec, report = flight.spec, flight.node.report
        spec.paths.dir.mkdir(parents=True, exist_ok=True)
        context = replace(self.context, engine=report.engine,
                          executor=ExecutorRecord(name="ray", node_id=report.node_id, host=report.host))
        result = TrialResult(run_id=context.run_id, label=context.label, case=spec.case.id, arm=spec.arm.name,
                             trial=spec.n, agent=spec.agent.name, lane=context.lane, dry_run=context.dry_run,
                             verdict=Verdict.ERROR, reason=reason, started_at=flight.started_at, finished_at=utcnow(),
                             expectations=unscored(spec.case.gate), interrupted=interrupted)
        return record(context, spec, result, dict(spec.images), None, {})

    def _lost(self, node: Node, exc: Exception) -> str:
        """The reason for a trial whose task died: its node is dropped when Ray says the node is gone."""
        from ray.exceptions import NodeDiedError

        what = type(exc).__name__
        if isinstance(exc, NodeDiedError) or not _alive(self.ray, node.report.node_id):
            self._lose(node, what)
            return (f"{node.report.name} was lost while running this trial ({what}); its containers are removed when "
                    "the node returns (the next run's cleanup there)")
        return f"the Ray worker running this trial on {node.report.name} died ({what}: {(str(exc).splitlines() or [''])[0]})"

    def _lose(self, node: Node, why: str) -> None:
        if not node.lost:
            node.lost = True
            self.say(f"{node.report.name} is lost ({why}); the run goes on with the other nodes")

    def _interrupt(self) -> None:
        """Ctrl-C: cancel every task (their workers are killed), then each live node removes the run's containers."""
        self.say("interrupted: cancelling the Ray tasks, removing the run's containers on every node")
        for ref in list(self.flights):
            self.ray.cancel(ref, force=True)
        cleaning = [_remote(self.ray, clean_node).options(**_on(self.ray, node.report.node_id)).remote(self.context.run_id)
                    for node in self.nodes if not node.lost]
        self.ray.wait(cleaning, num_returns=len(cleaning), timeout=120)
        for flight in list(self.flights.values()):  # recorded as a local run records its running trials
            self.results.append(self._error(flight, "interrupted: the run was stopped before this trial finished "
                                            f"(its Ray task on {flight.node.report.name} was cancelled)",
                                            interrupted=True))
        self.flights.clear()
        self.attest(set())


def _alive(ray, node_id: str) -> bool:
    return any(node["NodeID"] == node_id and node.get("Alive") for node in ray.nodes())


def _where(spec: TrialSpec, node: Node) -> str:
    return f"{spec.case.id}/{spec.arm.name}/trial-{spec.n}@{node.short}"


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BenchError):
        return str(cause)
    return f"{type(cause or exc).__name__}: {cause or exc}".splitlines()[0]
