#!/usr/bin/env bash
# Builds the local control plane's binaries from the versions pinned in e2e/go.mod into
# $KUOTA_E2E_BIN_ROOT/<kubernetes version>-<hash of the pins>/ and prints that folder. The root
# defaults to ~/.cache/kuota/e2e-bin, outside any clone, so every checkout and every CI run on this
# machine reuses one build. A folder that is already complete is reused; a changed pin (go.mod,
# go.sum, the etcd main, this script) gives a new folder and the old ones are removed. Output of the
# Go build goes to $KUOTA_E2E_BIN_ROOT/build.log.
#
# Runs at once on one machine (two checkouts, a test run beside a benchmark) share the root: one
# builds while the others wait on a lock, then reuse its folder. Each build stages in a private
# folder and renames it into place, so no run ever sees or deletes another's half-built folder.
#
#   e2e/build.sh          build what is missing, print the folder
#   e2e/build.sh --dir    print the folder without building
set -euo pipefail
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$E2E_DIR"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -buildvcs=false"

k8s_version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }
                    $1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' go.mod)"
if [[ -z "$k8s_version" ]]; then
  echo "e2e/build.sh: no k8s.io/kubernetes requirement in $E2E_DIR/go.mod" >&2
  exit 1
fi
pins_hash="$(cat go.mod go.sum cmd/etcd/main.go build.sh | sha256sum | cut -c1-12)"
bin_root="${KUOTA_E2E_BIN_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kuota/e2e-bin}"
bin_dir="$bin_root/$k8s_version-$pins_hash"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm)

if [[ "${1:-}" == "--dir" ]]; then
  echo "$bin_dir"
  exit 0
fi
if [[ -f "$bin_dir/.complete" ]]; then
  echo "$bin_dir"
  exit 0
fi

mkdir -p "$bin_root"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin_root/.lock"
  if ! flock -n 9; then
    echo "e2e/build.sh: waiting for another build in $bin_root" >&2
    flock 9
  fi
  if [[ -f "$bin_dir/.complete" ]]; then
    echo "$bin_dir"
    exit 0
  fi
fi

minor="${k8s_version#v1.}"
minor="${minor%%.*}"
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  version_flags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  version_flags+=" -X $pkg.gitTreeState=clean"
done

log="$bin_root/build.log"
staging="$(mktemp -d "$bin_dir.partial.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "e2e/build.sh: building ${binaries[*]} for Kubernetes $k8s_version into $bin_dir (log: $log)" >&2
started=$SECONDS
# One invocation, so that packages shared by the binaries are compiled once.
if ! go build -trimpath -ldflags "-s -w$version_flags" -o "$staging/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl \
  ./cmd/etcd \
  sigs.k8s.io/kwok/cmd/kwok \
  helm.sh/helm/v4/cmd/helm >"$log" 2>&1; then
  echo "e2e/build.sh: go build failed after $((SECONDS - started))s; last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
for b in "${binaries[@]}"; do
  if [[ ! -x "$staging/$b" ]]; then
    echo "e2e/build.sh: go build did not produce $b" >&2
    exit 1
  fi
done
touch "$staging/.complete"
if [[ ! -f "$bin_dir/.complete" ]]; then
  rm -rf "$bin_dir"
  mv "$staging" "$bin_dir"
fi
echo "e2e/build.sh: built in $((SECONDS - started))s" >&2
for old in "$bin_root"/v*; do
  if [[ -d "$old" && "$old" != "$bin_dir" && "$old" != "$bin_dir".partial.* ]]; then
    rm -rf "$old"
  fi
done
echo "$bin_dir"
