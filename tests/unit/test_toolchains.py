"""An image's toolchains, as every ImageRecord reports them: read off its `bench.toolchain.<tool>` labels."""

from __future__ import annotations

import tomllib
from pathlib import Path

from bench.models import ImageRecord, toolchains_of

ROOT = Path(__file__).resolve().parents[2]


def test_only_toolchain_labels_count_and_the_tool_is_the_label_suffix():
    labels = {"bench.image": "zig", "bench.toolchain.zig": "0.16.0", "bench.toolchain.node": "24.19.0",
              "bench.toolchain.": "nameless", "bench.toolchainx.y": "1", "other.toolchain.z": "2"}
    assert toolchains_of(labels) == {"node": "24.19.0", "zig": "0.16.0"}
    assert toolchains_of(None) == {} and toolchains_of({}) == {}


def test_a_record_written_before_toolchains_existed_still_reads_back():
    old = {"name": "node", "tag": "bench/node:abc", "id": "sha256:1", "content_digest": None, "built_on": None}
    assert ImageRecord.model_validate(old).toolchains == {}


def test_the_node_and_zig_recipes_label_the_versions_their_install_scripts_check():
    """install.sh stops the build unless the installed tool prints the labelled version."""
    for name, tool, check in (("node", "node", 'test "$(node --version)" = v{}'),
                              ("node", "typescript", 'test "$(tsc --version)" = "Version {}"'),
                              ("node", "pnpm", 'test "$(HOME=/tmp pnpm --version)" = {}'),
                              ("zig", "zig", 'test "$(zig version)" = {}')):
        folder = ROOT / "images" / name
        version = tomllib.loads((folder / "image.toml").read_text())["labels"][f"bench.toolchain.{tool}"]
        assert check.format(version) in (folder / "install.sh").read_text(), (name, tool)
