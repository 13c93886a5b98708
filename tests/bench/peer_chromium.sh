#!/bin/sh
# Stands in for Playwright's `chromium` channel inside the project image, for peer_verify.py:
# `shallot verify` launches `channel: "chromium"` and Playwright cannot download its browser
# here, so this file sits where Playwright looks for it and runs the seat's Debian Chromium
# with the SwiftShader WebGPU flags (PLATFORM-NOTES: drop any and the device is lost).
# Chromium keeps only the last --enable-features it is given, and Playwright and
# `shallot verify` pass their own, so theirs are merged into ours rather than replacing Vulkan.
features=Vulkan
for arg do
  shift
  case "$arg" in
    --enable-features=*) features="$features,${arg#--enable-features=}" ;;
    *) set -- "$@" "$arg" ;;
  esac
done
exec /usr/bin/chromium --enable-unsafe-webgpu --enable-unsafe-swiftshader --use-angle=swiftshader \
  --use-vulkan=swiftshader --no-sandbox --disable-dev-shm-usage "--enable-features=$features" "$@"
