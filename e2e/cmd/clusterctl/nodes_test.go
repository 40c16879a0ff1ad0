package main

import (
	"strings"
	"testing"
)

func TestParseShape(t *testing.T) {
	for text, want := range map[string]shape{"1x2x2": {1, 2, 2}, "3x1x8": {3, 1, 8}, "0": {}} {
		got, err := parseShape(text)
		if err != nil || got != want {
			t.Errorf("parseShape(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "1x2", "1x0x2", "ax1x1", "1x1x101", "-1x1x1"} {
		_, err := parseShape(bad)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("parseShape(%q) error = %v; want a rejection quoting the input", bad, err)
		}
	}
}

func TestNodeObjectsCarryTopologyAndResources(t *testing.T) {
	spec := defaultNodeSpec()
	spec.shape = shape{2, 2, 1}
	spec.gpu = "8"
	placed := spec.layout()
	if len(placed) != 4 {
		t.Fatalf("layout has %d nodes, want 4", len(placed))
	}
	last := spec.object(placed[3])
	meta := last["metadata"].(map[string]any)
	labels := meta["labels"].(map[string]string)
	if meta["name"] != "kwok-b1-r1-h0" {
		t.Errorf("name = %v", meta["name"])
	}
	want := map[string]string{defaultBlockLabel: "b1", defaultRackLabel: "b1-r1", hostnameLabel: "kwok-b1-r1-h0"}
	for k, v := range want {
		if labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, labels[k], v)
		}
	}
	if meta["annotations"].(map[string]string)[kwokManagedAnnotation] != "fake" {
		t.Errorf("node is not annotated for kwok: %v", meta["annotations"])
	}
	allocatable := last["status"].(map[string]any)["allocatable"].(map[string]string)
	if allocatable["nvidia.com/gpu"] != "8" || allocatable["cpu"] != "8" || allocatable["pods"] != "110" {
		t.Errorf("allocatable = %v", allocatable)
	}

	spec.gpu = "0"
	noGPU := spec.object(placed[0])["status"].(map[string]any)["allocatable"].(map[string]string)
	if _, ok := noGPU["nvidia.com/gpu"]; ok {
		t.Errorf("a node without GPUs lists nvidia.com/gpu: %v", noGPU)
	}
}
