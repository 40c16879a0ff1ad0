#!/usr/bin/env bash
# Builds the job kinds' own controllers (JobSet, LeaderWorkerSet, the Kubeflow training-operator
# and trainer, the MPI operator, AppWrapper, KubeRay) from their Go modules at the versions the
# modules below pin, and copies each one's CRD manifests from the same module. Each folder here
# is a module whose controllers agree on their Kubernetes libraries and are built in one Go
# invocation; its `operators` file lists binary name, package and CRD files (a glob in the
# package's module).
#
# The result goes to $KUOTA_OPERATORS_ROOT/<hash of the pins>/ (default
# ~/.cache/kuota/operators, outside any clone, like e2e/build.sh's e2e-bin): bin/<name> and
# crds/<name>/*.yaml. A complete folder is reused; a changed pin gives a new folder and the old
# ones are removed. Runs on one machine share the root under a lock; a build stages in a
# private folder and renames it into place.
#
#   e2e/operators/build.sh          build what is missing, print the folder
#   e2e/operators/build.sh --dir    print the folder without building
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$DIR"
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

modules=(k8s-v0.36 k8s-v0.35 kuberay)
pins_hash="$(cat build.sh "${modules[@]/%//go.mod}" "${modules[@]/%//go.sum}" \
  "${modules[@]/%//operators}" | sha256sum | cut -c1-12)"
root="${KUOTA_OPERATORS_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kuota/operators}"
dir="$root/$pins_hash"
if [[ "${1:-}" == "--dir" ]]; then
  echo "$dir"
  exit 0
fi
if [[ -f "$dir/.complete" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$root"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/.lock"
  if ! flock -n 9; then
    echo "e2e/operators/build.sh: waiting for another build in $root" >&2
    flock 9
  fi
  if [[ -f "$dir/.complete" ]]; then
    echo "$dir"
    exit 0
  fi
fi

stage="$(mktemp -d "$root/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/crds"
log="$root/build.log"
: >"$log"
for module in "${modules[@]}"; do
  names=()
  packages=()
  while read -r name package crds; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    names+=("$name")
    packages+=("$package")
    source_dir="$(cd "$module" && go list -f '{{.Module.Dir}}' "$package")"
    mkdir -p "$stage/crds/$name"
    # The glob is the module's own layout; no match is an error, not an empty folder.
    matched=0
    for crd in $source_dir/$crds; do
      [[ -f "$crd" ]] || continue
      cp "$crd" "$stage/crds/$name/"
      matched=1
    done
    if [[ "$matched" == 0 ]]; then
      echo "e2e/operators/build.sh: no CRD matches $crds in $source_dir" >&2
      exit 1
    fi
  done <"$module/operators"
  out="$stage/$module"
  mkdir -p "$out"
  echo "e2e/operators/build.sh: building ${names[*]} (log: $log)" >&2
  if ! (cd "$module" && go build -o "$out/" "${packages[@]}") >>"$log" 2>&1; then
    tail -20 "$log" >&2
    exit 1
  fi
  for i in "${!names[@]}"; do
    mv "$out/$(basename "${packages[$i]}")" "$stage/bin/${names[$i]}"
  done
  rmdir "$out"
done

touch "$stage/.complete"
for old in "$root"/*/; do
  [[ "${old%/}" != "$dir" ]] && rm -rf "${old%/}"
done
mv "$stage" "$dir"
trap - EXIT
echo "$dir"
