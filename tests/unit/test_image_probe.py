"""verify-provenance reads image IDs from a record a forger may have edited: every form is named, none crashes."""

from __future__ import annotations

import pytest
from docker.errors import APIError, ImageNotFound

from bench.paths import Project
from bench.provenance import _ImageProbe

GOOD = "sha256:" + "ab" * 32


class _Images:
    def __init__(self, error: Exception | None) -> None:
        self.error, self.asked = error, []

    def get(self, image_id: str):
        self.asked.append(image_id)
        if self.error:
            raise self.error
        return object()


class _Client:
    def __init__(self, error: Exception | None = None) -> None:
        self.images = _Images(error)


def probe(client: _Client, tmp_path) -> _ImageProbe:
    made = _ImageProbe(Project(tmp_path))
    made._client = client
    return made


@pytest.mark.parametrize("image_id", [
    "sha256:3cf`54b038f93fe5df03072a36cc4e2ecf30ea5ee5a68ee51495239b86e11334",  # one flipped bit (CI saw it)
    "sha256:" + "AB" * 32, "sha256:" + "ab" * 31, "", "bench/base:latest", "sha256:" + "ab" * 32 + "\n",
])
def test_a_malformed_id_is_named_and_never_sent_to_the_engine(image_id, tmp_path):
    client = _Client()
    problem = probe(client, tmp_path).check("bench/hello:x", image_id)
    assert problem and "not of the form sha256:<64 hex digits>" in problem
    assert client.images.asked == []


def test_a_well_formed_id_the_engine_lacks_is_named(tmp_path):
    problem = probe(_Client(ImageNotFound("no such image")), tmp_path).check("bench/hello:x", GOOD)
    assert problem == f"image {GOOD} is not present on this engine (rebuild or load it)"


def test_an_engine_refusal_is_a_difference_not_a_crash(tmp_path):
    problem = probe(_Client(APIError("400", explanation="invalid reference format")), tmp_path).check("t", GOOD)
    assert problem == f"the engine refused to look up image {GOOD}: invalid reference format"


def test_a_present_image_is_no_problem(tmp_path):
    client = _Client()
    assert probe(client, tmp_path).check("t", GOOD) is None
    assert client.images.asked == [GOOD]
