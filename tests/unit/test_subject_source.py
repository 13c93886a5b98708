"""--subject GIT_URL@COMMIT: nothing git could read as an option ever reaches git."""

from __future__ import annotations

import subprocess

import pytest

from bench import subject
from bench.errors import UsageError


@pytest.fixture()
def no_git(monkeypatch, tmp_path):
    """Any subprocess is a failure: refusal must come before git runs. HOME is scratch (the subject cache)."""
    monkeypatch.setenv("HOME", str(tmp_path))

    def refuse(*args, **kwargs):
        raise AssertionError(f"a subprocess ran: {args}")

    monkeypatch.setattr(subprocess, "run", refuse)


@pytest.mark.parametrize("text", [
    "--upload-pack=touch /tmp/x@abc",
    "--upload-pack=touch${IFS}/tmp/x@host:repo@abcdef0",
    "-oProxyCommand=touch@host:repo@abcdef0",
    "ssh://-oProxyCommand=touch/repo@abcdef0",
    "ext::sh -c touch@abcdef0",
    "https://example.com/a b@abcdef0",
    "https://example.com/repo.git",  # no commit
])
def test_an_option_shaped_url_is_refused_before_any_git(no_git, tmp_path, monkeypatch, text):
    monkeypatch.chdir(tmp_path)  # so the text is never an existing path
    with pytest.raises(UsageError, match="is neither a file, a folder, nor GIT_URL@COMMIT"):
        subject._from_source("shallot", text, None)
    assert not list((tmp_path / ".cache").rglob("bench-subject-*"))  # refused before the cache was touched


@pytest.mark.parametrize("text, url", [
    ("https://github.com/a/b.git@abcdef0", "https://github.com/a/b.git"),
    ("git@github.com:a/b.git@0123456789abcdef0123456789abcdef01234567", "git@github.com:a/b.git"),
    ("file:///srv/repo@abcdef0", "file:///srv/repo"),
])
def test_plain_urls_are_accepted(text, url):
    assert subject.git_source(text)[0] == url


def test_git_gets_the_url_and_commit_after_double_dash(monkeypatch, tmp_path):
    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        return subprocess.CompletedProcess(command, 128, "", "fatal: no such repository")

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(UsageError, match="failed: fatal: no such repository"):
        subject._pack_git("https://example.com/r.git", "abcdef0", tmp_path, None)
    clone = calls[0]
    assert clone[:2] == ["git", "clone"] and clone.index("--") < clone.index("https://example.com/r.git")
