"""What each case x arm runs in: its subject and the images built from it.

Why per arm: ``--arm base=subject:../shallot-a --arm cand=subject:../shallot-b`` trials
two versions of a case's package interleaved in one invocation, so the images a trial
runs and is graded in depend on its arm as well as its case. An arm's ``subject:``
replaces the subject of every case that pins one; the other arms keep the run's
--subject, else the pin. A case that pins no subject cannot honour ``subject:``, and
several pins cannot all be one source, so both are refused before anything is built.

Arms that name the same source share everything: Subjects packs each source once and
builds its project image once per tarball SHA-256, and each distinct (case, source) is
resolved, and its agent CLIs read, once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import docker

from .agents import Agent
from .agents.layer import installed_agents, resolve_agent_images
from .cases import Case
from .errors import UsageError
from .images import Images
from .models import AgentRecord, ArmSpec, ImageRecord, SubjectRecord
from .skills import Skill, Skills
from .subject import Subjects

Found = dict[tuple[str, str], "ArmInputs"]
"""(case, arm) -> what that arm's trials of the case run in."""


@dataclass(frozen=True)
class ArmInputs:
    images: dict[str, ImageRecord]  # by role: agent, grader, agent:<cli layer>
    installs: dict[str, AgentRecord]  # cli layer -> the CLI its image carries
    subject: SubjectRecord | None
    subject_tarball: Path | None = None  # the bytes subject.tarball_sha256 names, for checks that install it
    skills: tuple[Skill, ...] = ()  # the track's and the arm's skills, laid where the agent's CLI finds them


def track_skills(case: Case) -> list[str]:
    """The skills a track of a tracked case hands its agents (case.toml `tracks.<track>.skills`)."""
    return case.spec.tracks[case.track].skills if case.track else []


def check_subjects(cases: list[Case], arm_specs: dict[str, list[ArmSpec]], run_subject: str | None) -> None:
    """Refuse a source no case can take: `subject:` on a case without a pin, or one source for several pins."""
    for case in cases:
        for arm in arm_specs[case.id]:
            if arm.subject and not case.spec.subject:
                raise UsageError(f"arm {arm.name!r} sets subject:{arm.subject}, but case {case.id} pins no subject "
                                 "(case.toml `subject`) to replace — run that case without the arm")
    pinned = sorted({case.spec.subject for case in cases if case.spec.subject})
    arms = sorted({arm.name for specs in arm_specs.values() for arm in specs if arm.subject})
    if (run_subject or arms) and len(pinned) != 1:
        given = "--subject" if run_subject else f"the subject of arm(s) {', '.join(arms)}"
        raise UsageError(f"{given} replaces one pinned subject, and these cases use {pinned or 'none'}; "
                         "run the cases of each subject separately")


def resolve_arms(images: Images, client: docker.DockerClient, cases: list[Case], arm_specs: dict[str, list[ArmSpec]],
                 subjects: Subjects, agents: list[Agent], skills: Skills | None = None) -> Found:
    """Every case x arm's images, CLIs, subject and skills; each distinct (case, source) resolved once."""
    once: dict[tuple[str, str | None], ArmInputs] = {}
    found: Found = {}
    for case in cases:
        for arm in arm_specs[case.id]:
            key = (case.id, arm.subject or None)
            if key not in once:
                roles = resolve_agent_images(images, _roles(images, case, subjects, key[1]), agents)
                subject = subjects.get(case.spec.subject, key[1]) if case.spec.subject else None
                once[key] = ArmInputs(roles, installed_agents(client, roles), subject and subject.record,
                                      subject and subject.tarball)
            given = skills.for_trial(arm.skills, track_skills(case)) if skills else ()
            found[(case.id, arm.name)] = replace(once[key], skills=given)
    return found


def _roles(images: Images, case: Case, subjects: Subjects, source: str | None) -> dict[str, ImageRecord]:
    """A case with a subject runs (and is graded) in its project image: the subject installed."""
    if case.spec.subject is None:
        return {"agent": images.ensure(case.spec.image), "grader": images.ensure(case.grader_image)}
    project_image = subjects.image(case.spec.subject, source)
    grader = project_image if case.gate.image is None else images.ensure(case.gate.image)
    return {"agent": project_image, "grader": grader}


def recorded(case: str, arms: list[ArmSpec], found: Found) -> dict[str, Any]:
    """CaseInputs' images, subject_sha256 and subjects: what a resume must find unchanged.

    The arms without a subject of their own share the case's images, by role; an arm
    with one has its images as <role>@<arm> and its tarball under subjects, so a changed
    source is named by its arm.
    """
    shared = [found[(case, arm.name)] for arm in arms if not arm.subject][:1]
    own = {arm.name: found[(case, arm.name)] for arm in arms if arm.subject}
    images = {role: image.id for inputs in shared for role, image in inputs.images.items()}
    images |= {f"{role}@{arm}": image.id for arm, inputs in own.items() for role, image in inputs.images.items()}
    subject = next((inputs.subject.tarball_sha256 for inputs in shared if inputs.subject), None)
    given = {arm.name: {s.record.name: s.record.tarball_sha256 for s in found[(case, arm.name)].skills} for arm in arms}
    return {"images": images, "subject_sha256": subject, "skills": {arm: hashes for arm, hashes in given.items() if hashes},
            "subjects": {arm: inputs.subject.tarball_sha256 for arm, inputs in own.items() if inputs.subject}}
