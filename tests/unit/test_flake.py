"""flake.nix parses, builds only images that images/ has, and runs the `bench` console script.

Nix cannot fetch nixpkgs on the project's machines (PLATFORM-NOTES.md), so the flake
is checked without it: its text always, and with `nix-instantiate` (Debian package
nix-bin) both `--parse` and an `--eval` of its outputs against a stub nixpkgs that has
just enough `lib` to list them — so Nix itself says which packages and apps exist.
In CI (CI=true) a missing nix-instantiate is a failure; on a laptop, a skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import bench

ROOT = Path(__file__).resolve().parents[2]
FLAKE = ROOT / "flake.nix"
SYSTEMS = ("x86_64-linux", "aarch64-linux")

# A stub nixpkgs: lib functions the flake calls while its outputs are listed, and packages
# whose builders return their arguments. Only what the assertions read is ever forced.
STUB = r"""
let
  lib = rec {
    genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
    splitString = sep: s: builtins.filter builtins.isString (builtins.split sep s);
    findFirst = pred: default: list:
      let hits = builtins.filter pred list; in if hits == [ ] then default else builtins.head hits;
    hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;
    getExe = p: "/nix/store/stub-${p.pname}/bin/${p.meta.mainProgram}";
  };
  pkgsFor = system: { inherit system; python3Packages.buildPythonApplication = args: args; };
  flake = import ./flake.nix;
  out = flake.outputs { self = out; nixpkgs = { inherit lib; legacyPackages = lib.genAttrs [ %s ] pkgsFor; }; };
  sys = "x86_64-linux";
  harness = out.packages.${sys}.bench;
in {
  inputs = builtins.attrNames flake.inputs;
  systems = builtins.attrNames out.packages;
  packages = builtins.attrNames out.packages.${sys};
  apps = builtins.mapAttrs (name: app: app.program) out.apps.${sys};
  shells = builtins.attrNames out.devShells.${sys};
  pname = harness.pname;
  version = harness.version;
  mainProgram = harness.meta.mainProgram;
}
""" % " ".join(f'"{s}"' for s in SYSTEMS)


def nix_instantiate() -> str:
    path = shutil.which("nix-instantiate")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI must check flake.nix: install nix-instantiate with `apt-get install -y nix-bin`")
        pytest.skip("nix-instantiate not installed (`apt-get install -y nix-bin` gives it)")
    return path


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def image_names_in_text() -> list[str]:
    """The `imageNames = [ ... ];` list: the flake builds exactly these image outputs."""
    match = re.search(r"^\s*imageNames\s*=\s*\[([^\]]*)\];", FLAKE.read_text(), re.M)
    assert match, "flake.nix must list its image outputs as `imageNames = [ ... ];`"
    return re.findall(r'"([^"]+)"', match.group(1))


@pytest.fixture(scope="module")
def outputs() -> dict:
    done = subprocess.run([nix_instantiate(), "--eval", "--strict", "--json", "-E", STUB],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_flake_parses():
    done = subprocess.run([nix_instantiate(), "--parse", str(FLAKE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_image_the_flake_names_is_a_folder_of_images():
    names = image_names_in_text()
    assert names, "flake.nix names no image"
    missing = [name for name in names if not (ROOT / "images" / name / "image.toml").is_file()]
    assert not missing, f"flake.nix builds images that images/ does not have: {missing}"


def test_image_outputs_evaluate_to_exactly_the_named_images(outputs):
    assert outputs["inputs"] == ["nixpkgs"]
    assert outputs["systems"] == sorted(SYSTEMS)
    assert sorted(outputs["packages"]) == sorted(["bench", "default", *image_names_in_text()])
    assert outputs["shells"] == ["default"]


def test_app_and_package_run_the_console_script(outputs):
    scripts = pyproject()["project"]["scripts"]
    assert list(scripts) == ["bench"]
    assert outputs["mainProgram"] in scripts
    assert outputs["pname"] == pyproject()["project"]["name"]
    assert outputs["version"] == bench.__version__
    assert set(outputs["apps"]) == {"bench", "default"}
    for program in outputs["apps"].values():
        assert program.endswith("/bin/bench"), program


def test_app_name_in_text_matches_the_console_script():
    """Without Nix, the text still has to say `bench` where `nix run .#bench` looks."""
    text = FLAKE.read_text()
    (script,) = pyproject()["project"]["scripts"]
    assert re.search(rf"\b{script}\s*=\s*app;", text), "apps.<system>.bench missing"
    assert f'meta.mainProgram = "{script}";' in text


def test_flake_lock_pins_nixpkgs_to_one_revision():
    lock = json.loads((ROOT / "flake.lock").read_text())
    assert lock["version"] == 7 and lock["root"] == "root"
    assert lock["nodes"]["root"]["inputs"] == {"nixpkgs": "nixpkgs"}
    node = lock["nodes"]["nixpkgs"]
    assert node["original"] == {"owner": "NixOS", "repo": "nixpkgs", "ref": "nixos-24.11", "type": "github"}
    locked = node["locked"]
    assert locked["type"] == "github" and locked["owner"] == "NixOS" and locked["repo"] == "nixpkgs"
    assert re.fullmatch(r"[0-9a-f]{40}", locked["rev"])
    assert re.fullmatch(r"sha256-[A-Za-z0-9+/]{43}=", locked["narHash"])
    assert isinstance(locked["lastModified"], int)
    assert 'inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";' in FLAKE.read_text()
