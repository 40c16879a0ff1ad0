#!/usr/bin/env bash
# Builds Kueue's manager (sigs.k8s.io/kueue/cmd/kueue) and its kubectl plugin (kubectl-kueue, from
# sigs.k8s.io/kueue/cmd/kueuectl) from its Go module, for the side-by-side benchmark
# (e2e/bench/versus_kueue.rs) and the visibility API tests (e2e/tests/deploy/visibility.rs), into
# $KUOTA_KUEUE_ROOT/<version>/ and prints that folder.
# The folder holds `manager`, `kubectl-kueue` and `crds/` (Kueue's own CRD manifests, from the same
# module). The root defaults to ~/.cache/kuota/kueue, outside any clone, like e2e/build.sh's e2e-bin;
# a folder whose `.complete` marker lists all of these is reused, any other is built again.
#
# The version is $KUEUE_VERSION, else the module's newest release tag as the Go proxy reports it.
# The build runs in an empty module of its own: Kueue's k8s.io versions are not e2e/go.mod's.
#
#   e2e/kueue-build.sh          build what is missing, print the folder
#   e2e/kueue-build.sh --dir    print the folder without building
set -euo pipefail
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

root="${KUOTA_KUEUE_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kuota/kueue}"
mkdir -p "$root"
work="$(mktemp -d "$root/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
go mod init kuota.local/kueue-build >/dev/null 2>&1

version="${KUEUE_VERSION:-}"
if [[ -z "$version" ]]; then
  version="$(go list -m -f '{{.Version}}' sigs.k8s.io/kueue@latest)"
fi
dir="$root/$version"
# What a complete folder holds, written into its marker: a folder built when it held less is rebuilt.
contents="manager kubectl-kueue crds"
complete() { [[ "$(cat "$dir/.complete" 2>/dev/null)" == "$contents" ]]; }
if [[ "${1:-}" == "--dir" ]]; then
  echo "$dir"
  exit 0
fi
if complete; then
  echo "$dir"
  exit 0
fi

if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/.lock"
  if ! flock -n 9; then
    echo "e2e/kueue-build.sh: waiting for another build in $root" >&2
    flock 9
  fi
  if complete; then
    echo "$dir"
    exit 0
  fi
fi

log="$root/build.log"
staging="$(mktemp -d "$dir.partial.XXXXXX")"
trap 'rm -rf "$work" "$staging"' EXIT
echo "e2e/kueue-build.sh: building Kueue $version into $dir (log: $log)" >&2
started=$SECONDS
if ! { go get "sigs.k8s.io/kueue@$version" &&
  go build -trimpath -ldflags "-s -w" -o "$staging/manager" sigs.k8s.io/kueue/cmd/kueue &&
  go build -trimpath -ldflags "-s -w" -o "$staging/kubectl-kueue" sigs.k8s.io/kueue/cmd/kueuectl; } >"$log" 2>&1; then
  echo "e2e/kueue-build.sh: build failed after $((SECONDS - started))s; last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
module_dir="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
mkdir -p "$staging/crds"
cp "$module_dir"/config/components/crd/bases/*.yaml "$staging/crds/"
chmod -R u+w "$staging/crds"
echo "$contents" >"$staging/.complete"
rm -rf "$dir"
mv "$staging" "$dir"
echo "e2e/kueue-build.sh: built in $((SECONDS - started))s" >&2
echo "$dir"
