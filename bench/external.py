"""Work made outside bench: `bench setup` lays out what an agent would get, `bench grade` grades a folder.

Why both go through the trial machinery rather than beside it: a graded folder must be
evidence of the same kind as a trial, verified and compared like one. So ``grade_folder``
hands bench/run.py's ``execute`` a request whose one arm's agent is `external` and whose
submission is the folder: the same validation, images, withheld gate, record, manifest,
run.json, summary.json and signed label as `bench run`. The one phase that differs is
``produce`` in bench/trial.py, which packs the folder (bench/submission.py) where a run
stages, runs and exports an agent.

``set_up`` stages the workspace exactly as a trial's agent gets it (bench/staging.py:
the fixture, the case's workspace, the arm's context, the case's setup commands, the
staged image reused by case x arm), exports /workspace from a container of that image
within the export budget, and lays it out with PROMPT.md beside it. It reads nothing
under goldens/.
"""

from __future__ import annotations

import os
import secrets
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .agent_run import export_workspace
from .agents import EXTERNAL
from .arm_inputs import resolve_arms
from .cases import Case, load_case
from .docker_sandbox import open_sandbox
from .engine import ROLE_LABEL, connect, remove_run_containers, run_labels
from .errors import CaseError, InfrastructureError, UsageError
from .images import Images
from .models import ArmSpec, ImageRecord
from .paths import Project, RunPaths
from .request_checks import check_label
from .resume import finished
from .run import RunOutcome, RunRequest, default_label, execute
from .sandbox import SandboxSpec, tar_tree
from .staging import stage, stage_layers
from .subject import Subjects
from .submission import PROMPT, ROOT, Submission
from .trust import ca_bundle

Say = Callable[[str], None]


@dataclass
class GradeRequest:
    """`bench grade CASE DIR [--arm A] [--label L] [--results R] [--seat S]`, by name."""

    case: str
    folder: Path
    arm: str | None = None
    label: str | None = None
    results: Path = Path("results")
    seat: str | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))


def external_arm(case: Case, name: str | None, arm_name: str | None = None) -> ArmSpec:
    """The arm a folder is set up or graded as: a context of the case (default its first), agent external.

    ``arm_name`` names the arm apart from its context (check-answers names each answer's arm after it).
    """
    context = name or case.spec.arms[0]
    if context not in case.spec.arms:
        raise UsageError(f"--arm {context!r}: case {case.id} has no such arm; its arms are {', '.join(case.spec.arms)}")
    return ArmSpec(name=arm_name or context, context=context, agent=EXTERNAL)


def grade_folder(request: GradeRequest, project: Project, say: Say | None = None) -> RunOutcome:
    """Grade ``request.folder`` as one trial of the case, recorded in a label like any run's."""
    case = load_case(project, request.case)
    arm = external_arm(case, request.arm)
    folder = submission_folder(request.folder)
    if request.results.resolve().is_relative_to(folder):
        raise UsageError(f"--results {request.results} is inside the graded folder {folder}: the record would be "
                         "graded as the work — pass --results a folder outside it")
    label = check_label(request.label) if request.label else default_label()
    refuse_regrade(RunPaths(request.results / label), case.id, arm.name)
    run = RunRequest(cases=[case.id], agent=EXTERNAL, label=label, results=request.results, seat=request.seat,
                     command_line=request.command_line, submissions={case.id: [Submission(arm, folder)]})
    return execute(run, project, say)


def submission_folder(folder: Path) -> Path:
    """The folder to pack, resolved once here (the user named it; nothing inside it is ever followed)."""
    resolved = folder.expanduser().resolve()
    if not resolved.is_dir():
        raise UsageError(f"{folder}: not a folder — pass the folder `bench setup` laid out (or any workspace folder)")
    return resolved


def refuse_regrade(paths: RunPaths, case: str, arm: str) -> None:
    """A label holds one verdict per case x arm for a grade: a second would silently keep the first."""
    trial = paths.trial(case, arm, 1)
    if finished(trial):
        raise UsageError(f"label {paths.label} already holds a graded {case}/{arm} ({trial.dir}); grade into a new "
                         "--label")


# --- setup ----------------------------------------------------------------------------


def set_up(project: Project, case_id: str, arm_name: str | None, folder: Path | None, say: Say) -> Path:
    """Lay out case x arm's workspace as a trial's agent gets it, PROMPT.md beside it; returns the folder."""
    case = load_case(project, case_id)
    arm = external_arm(case, arm_name)
    target = _empty_folder(folder, case.id)
    client = connect()
    images = Images(client, project, ca_bundle(), log=say)
    found = resolve_arms(images, client, [case], {case.id: [arm]}, Subjects(project, images, None, ca_bundle()), [])
    run_id, scratch = secrets.token_hex(6), Path(tempfile.mkdtemp(prefix="bench-setup-"))
    try:
        tar = _staged_workspace(client, run_id, case, arm, found[(case.id, arm.name)].images["agent"], scratch)
        _lay_out(tar, target, case)
    finally:
        remove_run_containers(client, run_id)
    (target / PROMPT).write_bytes(case.prompt())
    return target


def _empty_folder(folder: Path | None, case_id: str) -> Path:
    if folder is None:
        return Path(tempfile.mkdtemp(prefix=f"bench-{case_id}-"))
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} is not an empty folder — name a new or empty one (or none, for a temporary one)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder.resolve()


def _staged_workspace(client, run_id: str, case: Case, arm: ArmSpec, agent_image: ImageRecord, scratch: Path) -> Path:
    """/workspace of a container made exactly as a trial's agent container is, exported to ``scratch``."""
    sandboxes, limits = open_sandbox(client), case.spec.limits
    log = scratch / "setup.log"
    try:
        staged = stage(client, sandboxes, run_id, case, arm.context, case.record().visible_hash, agent_image, limits, log)
    except InfrastructureError as exc:
        raise InfrastructureError(f"{exc} ({log})") from None
    spec = SandboxSpec(image=(staged or agent_image).id, command=["true"], limits=limits, role="setup",
                       labels=run_labels(run_id, **{ROLE_LABEL: "setup"}))
    with sandboxes(spec) as box:
        if staged is None:
            box.put(tar_tree(*stage_layers(case, arm.context)))
        box.run(limits.timeout_s)
        export = export_workspace(box, scratch / "workspace.tar", limits.export_max_mb)
    if export.refused:
        raise CaseError(case.dir / "case.toml", "limits.export_max_mb", f"the staged workspace: {export.refused}",
                        "raise the budget or make the workspace smaller")
    return scratch / "workspace.tar"


def _lay_out(tar: Path, target: Path, case: Case) -> None:
    """The exported workspace's entries under ``target``, owned by whoever ran setup (links kept as links; no
    device, no path out of it)."""
    members = []
    with tarfile.open(tar) as archive:
        for member in archive:
            name = member.name.rstrip("/")
            if not name.startswith(f"{ROOT}/") or member.ischr() or member.isblk():
                continue
            if name == f"{ROOT}/{PROMPT}":
                raise CaseError(case.workspace, PROMPT, "the workspace holds a PROMPT.md, where `bench setup` lays "
                                "the task", "rename the workspace's file")
            link = member.linkname[len(ROOT) + 1:] if member.islnk() else member.linkname
            members.append(member.replace(name=name[len(ROOT) + 1:], linkname=link, uid=os.getuid(), gid=os.getgid(),
                                          uname="", gname="", deep=False))  # the folder is the user's
        archive.extractall(target, members=members, filter="tar")
