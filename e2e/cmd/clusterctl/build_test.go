package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeGo stands in for `go build` in build.sh: it counts its runs, takes a moment (so two builds
// overlap), and writes every binary into the -o folder.
const fakeGo = `#!/usr/bin/env bash
set -euo pipefail
echo run >>"$FAKE_GO_RUNS"
sleep 1
out=""
while [[ $# -gt 0 ]]; do
  if [[ "$1" == "-o" ]]; then out="$2"; shift; fi
  shift
done
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm; do
  printf '#!/bin/sh\n' >"$out/$b"
  chmod +x "$out/$b"
done
`

// Two builds at once on one machine share one build: neither deletes the other's staging folder,
// both print the same complete folder, and the Go build runs once.
func TestConcurrentBuildsShareOneBuild(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock is missing; builds then only stage privately")
	}
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	runs := filepath.Join(root, "runs")
	script, err := filepath.Abs(filepath.Join("..", "..", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, 2)
	failures := make([]error, 2)
	var wg sync.WaitGroup
	for i := range outputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("bash", script)
			cmd.Env = append(os.Environ(),
				"PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"),
				"KUOTA_E2E_BIN_ROOT="+filepath.Join(root, "bin"),
				"FAKE_GO_RUNS="+runs)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			outputs[i] = strings.TrimSpace(string(out))
			if err != nil {
				failures[i] = &buildError{err, stderr.String()}
			}
		}()
	}
	wg.Wait()
	for i, err := range failures {
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
	}
	if outputs[0] == "" || outputs[0] != outputs[1] {
		t.Fatalf("builds printed %q and %q; want one folder", outputs[0], outputs[1])
	}
	for _, name := range []string{".complete", "etcd", "helm"} {
		if _, err := os.Stat(filepath.Join(outputs[0], name)); err != nil {
			t.Errorf("built folder lacks %s: %v", name, err)
		}
	}
	counted, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(counted), "run"); n != 1 {
		t.Errorf("go build ran %d times; want 1", n)
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, "bin", "*.partial*"))
	if len(leftovers) > 0 {
		t.Errorf("staging folders left behind: %v", leftovers)
	}
}

type buildError struct {
	err    error
	stderr string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.stderr }
