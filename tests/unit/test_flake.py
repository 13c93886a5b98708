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
    removeSuffix = suffix: s:
      let n = builtins.stringLength s; k = builtins.stringLength suffix; in
      if k <= n && builtins.substring (n - k) k s == suffix then builtins.substring 0 (n - k) s else s;
    escapeShellArg = s: "'" + s + "'";
    makeBinPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/bin") ps);
    getExe = p: "/nix/store/stub-${p.pname}/bin/${p.meta.mainProgram}";
    fileset = { unions = xs: xs; toSource = args: "/nix/store/stub-source"; };
  };
  # A package is its name and a store path; builders return their arguments, so Nix forces
  # (and the test reads) exactly what each output would be built from.
  pkg = name: { inherit name; pname = name; outPath = "/nix/store/stub-${name}"; };
  names = [ "git" "mmdebstrap" "bashInteractive" "coreutils" "findutils" "gnugrep" "gnused" "gnutar" "gzip"
            "gnumake" "gcc" "binutils" "chromium" "liberation_ttf" "dejavu_fonts" "nodejs" "glibc" "bun" "zig"
            "docker-client" "unzip" ];
  python = (pkg "python3") // { sitePackages = "lib/python3.11/site-packages"; withPackages = f: pkg "python3-env"; };
  pkgsFor = system: lib.genAttrs names pkg // {
    inherit system;
    python3 = python;
    python3Packages = { buildPythonApplication = args: args; hatchling = pkg "hatchling"; };
    fetchurl = args: args // { outPath = "/nix/store/stub-fetched-${args.hash or args.sha256}"; };
    runCommand = name: env: script: { inherit name script; outPath = "/nix/store/stub-${name}"; };
    makeFontsConf = args: pkg "fonts.conf";
    mkShell = args: args;
    dockerTools = {
      buildLayeredImage = args: args;
      binSh = pkg "binSh"; usrBinEnv = pkg "usrBinEnv"; caCertificates = pkg "caCertificates";
      fakeNss = (pkg "fakeNss") // { override = args: pkg "fakeNss"; };
    };
  };
  flake = import ./flake.nix;
  self = out // { rev = "0123456789abcdef0123456789abcdef01234567"; };
  out = flake.outputs { inherit self; nixpkgs = { inherit lib; legacyPackages = lib.genAttrs [ %s ] pkgsFor; }; };
  sys = "x86_64-linux";
  harness = out.packages.${sys}.bench;
  imageNames = builtins.filter (n: n != "bench" && n != "default") (builtins.attrNames out.packages.${sys});
in {
  inputs = builtins.attrNames flake.inputs;
  systems = builtins.attrNames out.packages;
  packages = builtins.attrNames out.packages.${sys};
  apps = builtins.mapAttrs (name: app: app.program) out.apps.${sys};
  shells = builtins.attrNames out.devShells.${sys};
  shellPackages = map (p: p.name) out.devShells.${sys}.default.packages;
  pname = harness.pname;
  version = harness.version;
  mainProgram = harness.meta.mainProgram;
  postInstall = harness.postInstall;
  images = lib.genAttrs imageNames (name: let i = out.packages.${sys}.${name}; in {
    inherit (i) name tag created fakeRootCommands;
    labels = i.config.Labels;
    contents = map (p: p.name) i.contents;
    fetched = map (p: p.script or "") i.contents;
  });
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


def test_every_image_output_evaluates_with_a_fixed_time_and_its_own_labels(outputs):
    images = outputs["images"]
    assert sorted(images) == sorted(image_names_in_text())
    for name, image in images.items():
        assert image["name"] == f"bench/{name}" and image["created"] == "2025-01-01T00:00:00Z", name
        assert image["labels"]["bench.image"] == name and image["labels"]["bench.builder"] == "dockertools"


def test_agent_and_toolchain_images_pin_what_images_pins():
    """The flake reads the same URL and integrity from images/<name>/image.toml: one pin, two builders."""
    done = subprocess.run(
        [nix_instantiate(), "--eval", "--strict", "--json", "-E",
         STUB.replace("in {\n  inputs", "in {\n  fetches = map (n: (builtins.head (builtins.fromTOML "
                      "(builtins.readFile (./images + \"/${n}/image.toml\"))).fetch).integrity) "
                      "[ \"claude-code\" \"codex\" \"shallot\" ];\n  inputs", 1)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    for name, integrity in zip(("claude-code", "codex", "shallot"), data["fetches"]):
        spec = tomllib.loads((ROOT / "images" / name / "image.toml").read_text())
        assert integrity == spec["fetch"][0]["integrity"]
        assert spec.get("labels", {}).items() <= data["images"][name]["labels"].items()
    assert data["images"]["claude-code"]["labels"]["bench.agent.version"] == "2.1.332"
    assert {"nodejs", "bun", "zig"} <= set(data["shellPackages"])


def test_the_zig_image_unzips_the_wheel_images_zig_pins_and_reports_every_toolchain(outputs):
    """One pin, two builders: the flake unzips the very wheel (by SHA-256) images/zig installs, on the node
    recipe, and labels the image with node's toolchains as well as zig's, as the layer image inherits them."""
    spec = tomllib.loads((ROOT / "images" / "zig" / "image.toml").read_text())
    node = tomllib.loads((ROOT / "images" / "node" / "image.toml").read_text())
    image = outputs["images"]["zig"]
    (unzip,) = [script for script in image["fetched"] if "unzip" in script]
    assert f"/nix/store/stub-fetched-{spec['fetch'][0]['sha256']}" in unzip and "ziglang/zig" in unzip
    assert {**node["labels"], **spec["labels"]}.items() <= image["labels"].items()
    assert image["labels"]["bench.toolchain.zig"] == "0.16.0"
    assert set(outputs["images"]["node"]["contents"]) < set(image["contents"])


def test_an_installed_harness_names_the_commit_it_was_built_from(outputs, tmp_path):
    """postInstall writes bench/_source.json from self.rev; the harness reads it where git has nothing."""
    from bench.harness import SOURCE_FILE, built_from, git_state

    assert f"bench/{SOURCE_FILE}" in outputs["postInstall"]
    written = re.search(r"echo '(\{.*\})'", outputs["postInstall"]).group(1)
    assert json.loads(written) == {"git_sha": "0123456789abcdef0123456789abcdef01234567", "dirty": False}
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / SOURCE_FILE).write_text(written)
    assert git_state(tmp_path) == built_from(tmp_path) == ("0123456789abcdef0123456789abcdef01234567", False)
    assert built_from(tmp_path / "elsewhere") == (None, False)
