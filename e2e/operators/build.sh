#!/usr/bin/env bash
# Builds the job kinds' own operators (JobSet, LeaderWorkerSet, the Kubeflow training-operator and
# trainer, the MPI operator, KubeRay, AppWrapper) from the Go modules pinned here, for the e2e tests
# that run them as local processes beside the control plane. The binaries go into
# $KUOTA_OPERATORS_ROOT/<hash of the pins>/ (default ~/.cache/kuota/operators, outside any clone),
# with each operator's CRD manifests, copied from the same module, in crds/<operator>/. A folder that
# is already complete is reused; a changed pin gives a new folder and the old ones are removed.
#
# The operators do not agree on their k8s.io versions, so they are built in one Go invocation per
# module whose pins agree: this folder's go.mod (Kubernetes 0.36: JobSet, LWS, training-operator,
# trainer), k8s-0.35/go.mod (MPI operator, AppWrapper) and kuberay/go.mod (KubeRay, whose
# controller-runtime 0.22 API the others' 0.23 does not build). Each module lists its operators as
# `tool` packages.
#
# Concurrent runs share the root like e2e/build.sh: one builds under a lock while the others wait,
# each build stages in a private folder and renames it into place.
#
#   e2e/operators/build.sh          build what is missing, print the folder
#   e2e/operators/build.sh --dir    print the folder without building
set -euo pipefail
OPERATORS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$OPERATORS_DIR"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"

pins_hash="$(cat go.mod go.sum k8s-0.35/go.mod k8s-0.35/go.sum kuberay/go.mod kuberay/go.sum build.sh | sha256sum | cut -c1-12)"
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

log="$root/build.log"
: >"$log"
staging="$(mktemp -d "$dir.partial.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
started=$SECONDS

# build_module <module dir> <package=binary>...: one `go build` for the module's operators, each
# binary renamed from its package's last path element (LWS and AppWrapper keep theirs in `cmd`).
build_module() {
  local module="$1"
  shift
  local out="$staging/.out-${module//\//-}" packages=() spec
  for spec in "$@"; do
    packages+=("${spec%%=*}")
  done
  mkdir -p "$out"
  echo "e2e/operators/build.sh: building ${packages[*]} in $module (log: $log)" >&2
  if ! (cd "$module" && go build -trimpath -ldflags "-s -w" -o "$out/" "${packages[@]}") >>"$log" 2>&1; then
    echo "e2e/operators/build.sh: go build in $module failed after $((SECONDS - started))s; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  for spec in "$@"; do
    local built="$out/${spec%%=*}"
    built="$out/${built##*/}"
    if [[ ! -x "$built" ]]; then
      echo "e2e/operators/build.sh: go build in $module did not produce ${spec%%=*}" >&2
      exit 1
    fi
    mv "$built" "$staging/${spec#*=}"
  done
  rm -rf "$out"
}

# copy_crds <module dir> <module path> <operator> <glob of CRD manifests in the module>...
copy_crds() {
  local module="$1" path="$2" operator="$3" source_dir pattern file copied=0
  shift 3
  source_dir="$(cd "$module" && go list -m -f '{{.Dir}}' "$path")"
  mkdir -p "$staging/crds/$operator"
  for pattern in "$@"; do
    for file in "$source_dir"/$pattern; do
      [[ -f "$file" ]] || continue
      cp "$file" "$staging/crds/$operator/"
      copied=$((copied + 1))
    done
  done
  if [[ "$copied" == 0 ]]; then
    echo "e2e/operators/build.sh: no CRD manifests for $operator in $source_dir ($*)" >&2
    exit 1
  fi
  chmod -R u+w "$staging/crds/$operator"
}

build_module . \
  sigs.k8s.io/jobset=jobset \
  sigs.k8s.io/lws/cmd=lws \
  github.com/kubeflow/training-operator/cmd/training-operator.v1=training-operator \
  github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager=trainer
build_module k8s-0.35 \
  github.com/kubeflow/mpi-operator/cmd/mpi-operator=mpi-operator \
  github.com/project-codeflare/appwrapper/cmd=appwrapper
build_module kuberay github.com/ray-project/kuberay/ray-operator=kuberay

copy_crds . sigs.k8s.io/jobset jobset 'config/components/crd/bases/*.yaml'
copy_crds . sigs.k8s.io/lws lws 'config/crd/bases/leaderworkerset.x-k8s.io_*.yaml'
# The training-operator's own v1 MPIJob CRD is left out: MPIJobs are the MPI operator's (v2beta1),
# as in Kueue's tests, and the training-operator runs without its MPI scheme.
copy_crds . github.com/kubeflow/training-operator training-operator \
  'manifests/base/crds/kubeflow.org_[!m]*.yaml'
copy_crds . github.com/kubeflow/trainer/v2 trainer 'manifests/base/crds/trainer.kubeflow.org_*.yaml'
copy_crds k8s-0.35 github.com/kubeflow/mpi-operator mpi-operator 'manifests/base/kubeflow.org_*.yaml'
copy_crds k8s-0.35 github.com/project-codeflare/appwrapper appwrapper 'config/crd/bases/*.yaml'
copy_crds kuberay github.com/ray-project/kuberay/ray-operator kuberay 'config/crd/bases/*.yaml'

touch "$staging/.complete"
if [[ ! -f "$dir/.complete" ]]; then
  rm -rf "$dir"
  mv "$staging" "$dir"
fi
echo "e2e/operators/build.sh: built in $((SECONDS - started))s" >&2
# Only folders of this layout (binaries beside crds/) are this script's to remove.
for old in "$root"/*; do
  if [[ -d "$old" && "$old" != "$dir" && -x "$old/jobset" && -d "$old/crds" ]]; then
    rm -rf "$old"
  fi
done
echo "$dir"
