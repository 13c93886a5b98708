"""The trial page, rendered from hand-made trial folders: what the agent wrote is shown as text, tool calls
are folded, regions sit on their frames at the recorded fractions, links in the workspace are listed, not read."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from PIL import Image

from bench.cases import load_case
from bench.init import init_project
from bench.paths import Project
from bench.view.trial import render_trial
from bench.view.workspace_view import diff_trees, read_tar

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
SCRIPT = "<script>alert('pwned')</script>"


def _result(**extra) -> dict:
    base = {"schema_version": 1, "run_id": "r1", "label": "lbl", "case": "demo", "arm": "bare", "trial": 1,
            "agent": "claude-code", "verdict": "FAIL", "reason": "check 'Red Box' failed",
            "started_at": "2026-11-29T11:56:00+00:00", "checks": []}
    return {**base, **extra}


def _trial(tmp: Path, result: dict) -> Path:
    folder = tmp / "results" / "lbl" / "demo" / "bare" / "trial-1"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(result))
    return folder


def _render(folder: Path, tmp: Path, **context) -> str:
    out = tmp / "site" / "label" / "lbl" / "demo" / "bare" / "trial-1.html"
    render_trial(folder, out, {"root": "../../../../", "banner": None, **context})
    return out.read_text()


def _claude_line(role: str, content: list) -> str:
    return json.dumps({"type": role, "message": {"role": role, "content": content}})


def test_claude_transcript_is_a_conversation_with_tools_folded_and_scripts_as_text(tmp_path):
    folder = _trial(tmp_path, _result())
    lines = [
        _claude_line("assistant", [{"type": "text", "text": f"I will add {SCRIPT} to the page."}]),
        _claude_line("assistant", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls /x"}}]),
        _claude_line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md\n" + "y" * 9000}]),
        json.dumps({"type": "result", "subtype": "success", "num_turns": 2, "total_cost_usd": 0.5}),
    ]
    (folder / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    html = _render(folder, tmp_path)
    assert SCRIPT not in html
    assert "I will add &lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt; to the page." in html
    tool = re.search(r'<details class="tool">(.*?)</details>', html, re.S).group(1)
    assert "tool: Bash" in tool and "ls /x" in tool and "README.md" in tool  # the result folded into its call
    assert "more characters not shown" in tool
    assert "run ended: success, 2 turns, $0.5" in html


def test_codex_and_plain_transcripts(tmp_path):
    folder = _trial(tmp_path, _result())
    shutil.copy(FIXTURES / "codex-completed.jsonl", folder / "transcript.jsonl")
    html = _render(folder, tmp_path)
    assert "Created hello.txt." in html and '<details class="tool"><summary>tool: shell' in html
    (folder / "transcript.jsonl").unlink()
    (folder / "transcript.log").write_text(f"plain output {SCRIPT}\n")
    html = _render(folder, tmp_path)
    assert "<pre>plain output &lt;script&gt;" in html and SCRIPT not in html


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 36), (200, 30, 30)).save(path)


def test_browser_frames_carry_each_predicates_region_as_a_box(tmp_path):
    predicates = [
        {"name": "red", "kind": "region", "passed": True, "values": {"r": 200.0}, "frames": ["shot"],
         "detail": "red: holds", "region": [0.1, 0.2, 0.35, 0.6]},
        {"name": "lit", "kind": "contrast", "passed": False, "values": {"delta": 3.0}, "frames": ["shot"],
         "detail": "lit: FAILS", "region": [0, 0, 0.5, 1], "against": [0.5, 0, 1, 1]},
    ]
    check = {"name": "Red Box", "kind": "browser", "gating": True, "passed": False, "predicates": predicates,
             "seat": {"class": "fallback", "adapter": "SwiftShader"}, "timings": {"launch": 1.5}}
    folder = _trial(tmp_path, _result(checks=[check]))
    _png(folder / "artifacts" / "red-box" / "shot.png")
    html = _render(folder, tmp_path)
    assert '<img src="trial-1.files/red-box/shot.png"' in html
    assert (tmp_path / "site/label/lbl/demo/bare/trial-1.files/red-box/shot.png").is_file()
    assert 'class="region pass" style="left:10%;top:20%;width:25%;height:40%"' in html
    assert 'class="region fail" style="left:0%;top:0%;width:50%;height:100%"' in html
    assert 'class="region fail against" style="left:50%;top:0%;width:50%;height:100%"' in html
    assert '<span style="top:0em">red: holds</span>' in html and "lit: FAILS</span>" in html
    assert "SwiftShader" in html and "launch 1.50 s" in html


def test_compile_diagnostics_metrics_and_review(tmp_path):
    check = {"name": "types", "kind": "compile", "gating": True, "passed": False, "detail": "2 errors",
             "diagnostics": [{"code": "TS2322", "file": "src/<a>.ts", "line": 3, "column": 7,
                              "message": "Type 'string' is not assignable to type 'number'."}]}
    harness = {"name": "tests", "kind": "harness", "gating": True, "passed": True, "metrics": {"recall": 0.75, "fp": 2},
               "directions": {"fp": "lower"}, "bounds": {"recall": 0.8, "fp": 3},
               "review": {"missed": ["test_<b>_edge"]}}
    skipped = {"name": "judge", "kind": "judge", "gating": False, "passed": False, "skipped": True}
    folder = _trial(tmp_path, _result(checks=[check, harness, skipped]))
    html = _render(folder, tmp_path)
    assert "TS2322 (error)" in html and "src/&lt;a&gt;.ts:3:7" in html and "Type &#39;string&#39;" in html
    assert "<td>recall</td><td>0.75</td><td>higher</td>" in html and "floor 0.8" in html
    assert '<td>fp</td><td>2</td><td>lower</td>' in html and "ceiling 3" in html
    assert '<span class="s-fail">outside</span>' in html and '<span class="s-pass">within</span>' in html
    assert "test_&lt;b&gt;_edge" in html and '<span class="s-skipped">skipped</span> judge' in html


def _workspace_tar(path: Path) -> None:
    with tarfile.open(path, "w") as archive:
        for name, data in (("workspace/hello.txt", b"Hello, world!\n"), (f"workspace/{SCRIPT}.txt", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("workspace/secrets")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive.addfile(link)


def test_workspace_lists_links_as_links_and_escapes_names(tmp_path):
    folder = _trial(tmp_path, _result())
    _workspace_tar(folder / "workspace.tar")
    html = _render(folder, tmp_path)
    assert "<td>secrets</td><td>symlink → /etc/shadow</td>" in html
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;.txt" in html and SCRIPT not in html
    assert "<td>hello.txt</td><td>file</td><td>14</td>" in html
    assert "the starting workspace is not available" in html  # no project above results/ here


def _project_trial(tmp: Path, visible_hash: str | None = None, setup: bool = False) -> Path:
    """A trial of the template project's hello case, its results inside the project as `bench run` writes them."""
    project = tmp / "proj"
    init_project(project)
    if setup:
        toml = project / "cases" / "hello" / "case.toml"
        toml.write_text('setup = ["touch /workspace/made-by-setup"]\n' + toml.read_text())
    case = load_case(Project(project), "hello")
    folder = project / "results" / "lbl" / "hello" / "bare" / "trial-1"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(_result(case="hello")))
    provenance = {"case": {"id": "hello", "visible_hash": visible_hash or case.visible_hash()}, "arm": "bare"}
    (folder / "provenance.json").write_text(json.dumps(provenance))
    _workspace_tar(folder / "workspace.tar")
    return folder


def test_the_diff_is_from_the_cases_workspace_while_its_hash_matches(tmp_path):
    folder = _project_trial(tmp_path)
    html = _render(folder, tmp_path)
    assert "<summary>removed: README.md</summary>" in html  # the case's workspace/README.md, gone at the end
    assert "<summary>added: hello.txt</summary>" in html and "+Hello, world!" in html
    assert "secrets" not in html.split("Changes from the starting workspace")[1]  # a link is no file to diff
    changed = _render(_project_trial(tmp_path / "again", visible_hash="sha256:0"), tmp_path / "again")
    assert "the starting workspace is not available: case hello changed since this trial" in changed
    staged = _render(_project_trial(tmp_path / "setup", setup=True), tmp_path / "setup")
    assert "case hello builds it inside its image (setup commands)" in staged and "removed: README.md" not in staged
    assert '+++ end/hello.txt</span>\n<span' in html  # one diff line per line, even with trim_blocks


def test_diff_against_the_start():
    entries, contents, problem = read_tar_from_bytes()
    assert not problem and {e.name for e in entries} == {"a.txt", "new.txt"}
    start = {"a.txt": b"one\ntwo\n", "gone.txt": b"x", "same.txt": b"s"}
    diffs, unchanged = diff_trees(start, {**contents, "same.txt": b"s"}, {"a.txt", "new.txt", "same.txt"})
    assert unchanged == 1
    by_name = {d.name: d for d in diffs}
    assert by_name["gone.txt"].status == "removed" and by_name["new.txt"].status == "added"
    assert "-two" in by_name["a.txt"].diff and "+three" in by_name["a.txt"].diff


def read_tar_from_bytes():
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.tar"
        with tarfile.open(path, "w") as archive:
            for name, data in (("workspace/a.txt", b"one\nthree\n"), ("workspace/new.txt", b"n\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return read_tar(path)


def test_banner_gate_log_and_seat_in_provenance(tmp_path):
    folder = _trial(tmp_path, _result())
    (folder / "gate.log").write_text(f"--- check 'x'\n{SCRIPT}\n")
    (folder / "provenance.json").write_text(json.dumps({"arm": "bare", "seat": {"class": "real", "adapter": "H200"},
                                                         "lane": "gpu-seat"}))
    html = _render(folder, tmp_path, banner="attestation signature does not verify")
    assert 'role="alert"><strong>This label does not verify:</strong> attestation signature does not verify' in html
    assert "&lt;script&gt;alert" in html and SCRIPT not in html
    assert '<span class="seat">  &#34;seat&#34;: {</span>\n<span class="seat">    &#34;class&#34;: &#34;real&#34;,</span>' in html
    assert '\n  &#34;lane&#34;: &#34;gpu-seat&#34;\n}\n</pre>' in html and "<strong>class</strong> real" in html
    assert '<a href="trial-1.files/raw/result.json">result.json</a>' in html


@pytest.mark.parametrize("bad", ["{not json", json.dumps({"verdict": "MAYBE"})])
def test_a_broken_result_still_renders_a_page(tmp_path, bad):
    folder = tmp_path / "results" / "lbl" / "demo" / "bare" / "trial-1"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(bad)
    html = _render(folder, tmp_path)
    assert "result.json unreadable" in html
