"""Publish the JSON Schema of every record, so other tools can read results without us."""

from __future__ import annotations

import json
from pathlib import Path

from .answers import AnswerSpec
from .archive import SavedImages
from .authoring_metrics import AuthoringMetrics
from .assessment import Assessment, OperatorFile
from .gatespec import GateSpec
from .image_spec import ImageSpec, InputsLock
from .models import ImageLock, Manifest, Provenance, RunRecord
from .case_spec import CaseSpec
from .result_models import TrialResult
from .stat_models import Summary

PUBLISHED = {
    "case": CaseSpec,
    "answer": AnswerSpec,
    "gate": GateSpec,
    "image": ImageSpec,
    "result": TrialResult,
    "assessment": Assessment,
    "assessment-input": OperatorFile,
    "provenance": Provenance,
    "manifest": Manifest,
    "summary": Summary,
    "images-lock": ImageLock,
    "inputs-lock": InputsLock,
    "run": RunRecord,
    "saved-images": SavedImages,
    "authoring-metrics": AuthoringMetrics,
}


def rendered() -> dict[str, str]:
    """File name -> schema text, exactly as it is written to disk."""
    return {
        f"{name}.schema.json": json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"
        for name, model in PUBLISHED.items()
    }


def export(directory: Path, write: bool = True) -> list[str]:
    """The schema files that differ from the models; written when ``write`` (a check makes no folder)."""
    if write:
        directory.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, text in rendered().items():
        path = directory / name
        if not path.is_file() or path.read_text() != text:
            stale.append(name)
            if write:
                path.write_text(text)
    return stale
