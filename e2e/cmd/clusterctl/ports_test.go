package main

import (
	"math/rand"
	"testing"
)

func TestEphemeralRangeIsReadOrLinuxsDefault(t *testing.T) {
	if lo, hi := ephemeralRange("32768\t60999\n"); lo != 32768 || hi != 60999 {
		t.Fatalf("read %d-%d", lo, hi)
	}
	if lo, hi := ephemeralRange("1024 65000"); lo != 1024 || hi != 65000 {
		t.Fatalf("read %d-%d", lo, hi)
	}
	if lo, hi := ephemeralRange(""); lo != 32768 || hi != 60999 {
		t.Fatalf("default %d-%d", lo, hi)
	}
}

func TestCandidatesAvoidTheEphemeralRangeAndTheFixedPorts(t *testing.T) {
	candidates := portCandidates(32768, 60999, rand.New(rand.NewSource(1)))
	if len(candidates) != (32768-lowestPort)+(65535-60999) {
		t.Fatalf("%d candidates", len(candidates))
	}
	for _, p := range candidates {
		if p >= 32768 && p <= 60999 || p < lowestPort || p > 65535 {
			t.Fatalf("candidate %d lies in the ephemeral range or below %d", p, lowestPort)
		}
	}
	if got := portCandidates(1024, 65535, rand.New(rand.NewSource(1))); len(got) != 0 {
		t.Fatalf("no port is outside a range that covers them all: %v", got[:3])
	}
}

func TestChosenPortsAreFreeDistinctAndOutsideTheRange(t *testing.T) {
	p, err := choosePorts()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range []int{p.EtcdClient, p.EtcdPeer, p.APIServer, p.ControllerManager, p.Scheduler, p.Kwok} {
		if seen[port] || port < lowestPort {
			t.Fatalf("port %d repeated or too low: %+v", port, p)
		}
		seen[port] = true
	}
}
