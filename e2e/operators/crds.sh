#!/usr/bin/env bash
# Copies the CRDs that kuota's e2e tests install but no operator built here serves, from the Go
# modules that ship them, at the versions pinned in crds/go.mod: the cluster autoscaler's
# ProvisioningRequest (k8s.io/autoscaler/cluster-autoscaler/apis, at the version Kueue's go.mod
# pins), for the provisioning admission check, whose tests play the autoscaler. The manifests go
# into $KUOTA_OPERATORS_ROOT/crds/<module>@<version>/ (default ~/.cache/kuota/operators), one
# folder per module version: a folder already there is reused, and a pin moved to another version
# copies into a new folder.
#
#   e2e/operators/crds.sh          copy what is missing, print the folder of each module
#   e2e/operators/crds.sh --dir    print the folders without copying
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/crds"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"

root="${KUOTA_OPERATORS_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kuota/operators}/crds"

# module <module path> <name> <glob of CRD manifests in the module>: the module's folder, filled.
module() {
  local path="$1" name="$2" pattern="$3" version dir source_dir staging file copied=0
  version="$(go list -m -f '{{.Version}}' "$path")"
  dir="$root/$name@$version"
  if [[ "$only_dir" == 1 || -f "$dir/.complete" ]]; then
    echo "$dir"
    return
  fi
  mkdir -p "$root"
  go mod download "$path"
  source_dir="$(go list -m -f '{{.Dir}}' "$path")"
  staging="$(mktemp -d "$dir.partial.XXXXXX")"
  for file in "$source_dir"/$pattern; do
    [[ -f "$file" ]] || continue
    cp "$file" "$staging/"
    copied=$((copied + 1))
  done
  if [[ "$copied" == 0 ]]; then
    rm -rf "$staging"
    echo "e2e/operators/crds.sh: no CRD manifests in $source_dir ($pattern)" >&2
    exit 1
  fi
  chmod -R u+w "$staging"
  touch "$staging/.complete"
  if [[ -f "$dir/.complete" ]]; then
    rm -rf "$staging"
  else
    rm -rf "$dir"
    mv "$staging" "$dir"
  fi
  echo "$dir"
}

only_dir=0
if [[ "${1:-}" == "--dir" ]]; then
  only_dir=1
fi
module k8s.io/autoscaler/cluster-autoscaler/apis provisioning-request 'config/crd/*.yaml'
