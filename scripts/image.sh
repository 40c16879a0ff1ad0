#!/usr/bin/env bash
# Builds kuota's container image without a container engine and without a base image, and prints
# its digest:
#
#   scripts/image.sh OUT
#
# writes OUT/oci/ (an OCI image layout: copy it to a registry with `skopeo copy oci:OUT/oci
# docker://REPO:TAG` or `crane push OUT/oci REPO:TAG`, which keep the digest) and
# OUT/kuota-<version>.tar (for `docker load`). The image is one layer holding /kuota, a statically
# linked (musl) release build, run as 65532:65532; docs/operations.md says why.
#
# The release build has its own target folder outside the clone, reused by every checkout on this
# machine: $KUOTA_IMAGE_TARGET_DIR, by default ~/.cache/kuota/image-target. The image's timestamp
# is SOURCE_DATE_EPOCH, by default the last commit's time, so the same commit built with the same
# toolchain gives the same digest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/image.sh OUT" >&2
  exit 2
fi
out="$(realpath -m "$1")"
target=x86_64-unknown-linux-musl
export CARGO_TARGET_DIR="${KUOTA_IMAGE_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kuota/image-target}"
export GOTOOLCHAIN=local

# ring's and jemalloc's C parts are compiled for musl with musl-gcc.
if ! command -v musl-gcc >/dev/null 2>&1; then
  echo "scripts/image.sh: installing musl-tools (musl-gcc)" >&2
  apt-get install -y musl-tools >/dev/null 2>&1 \
    || { apt-get update >/dev/null && apt-get install -y musl-tools >/dev/null; }
fi
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target" >&2
fi

cargo build --release --locked --target "$target" --bin kuota >&2
binary="$CARGO_TARGET_DIR/$target/release/kuota"

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
revision="$(git rev-parse HEAD 2>/dev/null || true)"
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
fi
export SOURCE_DATE_EPOCH

rm -rf "$out/oci" "$out/kuota-$version.tar"
mkdir -p "$out"
(cd e2e && go run -buildvcs=false ./cmd/image --binary "$binary" --version "$version" \
  --revision "$revision" --layout "$out/oci" --tarball "$out/kuota-$version.tar")
