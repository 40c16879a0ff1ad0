package main

import (
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
)

// The lowest port chosen: clear of the fixed ports tests use (an operator's 8080, the chart's
// 9443) and of the usual well-known ones.
const lowestPort = 15000

// ephemeralRange is the range the kernel takes outgoing connections' local ports from
// (net.ipv4.ip_local_port_range). A component's port must lie outside it: chosen inside, a client
// connecting anywhere could be given it as its local port while the component restarts, and the
// restart would find it taken.
func ephemeralRange(text string) (int, int) {
	fields := strings.Fields(text)
	if len(fields) == 2 {
		lo, errLo := strconv.Atoi(fields[0])
		hi, errHi := strconv.Atoi(fields[1])
		if errLo == nil && errHi == nil && lo <= hi {
			return lo, hi
		}
	}
	// Linux's default.
	return 32768, 60999
}

// portCandidates are the ports below and above the ephemeral range, the run of them starting at a
// random place so that clusters started together rarely try the same ports first.
func portCandidates(lo, hi int, rng *rand.Rand) []int {
	var free []int
	for p := lowestPort; p < lo && p <= 65535; p++ {
		free = append(free, p)
	}
	for p := max(hi+1, lowestPort); p <= 65535; p++ {
		free = append(free, p)
	}
	if len(free) == 0 {
		return nil
	}
	start := rng.Intn(len(free))
	return append(free[start:], free[:start]...)
}

func choosePorts() (ports, error) {
	text, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	lo, hi := ephemeralRange(string(text))
	var chosen []int
	var listeners []net.Listener
	defer func() {
		for _, ln := range listeners {
			ln.Close()
		}
	}()
	for _, p := range portCandidates(lo, hi, rand.New(rand.NewSource(int64(os.Getpid())))) {
		if len(chosen) == 6 {
			break
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		listeners = append(listeners, ln)
		chosen = append(chosen, p)
	}
	if len(chosen) < 6 {
		return ports{}, fmt.Errorf("find 6 free loopback ports outside the ephemeral range %d-%d: found %d", lo, hi, len(chosen))
	}
	return ports{
		EtcdClient: chosen[0], EtcdPeer: chosen[1], APIServer: chosen[2],
		ControllerManager: chosen[3], Scheduler: chosen[4], Kwok: chosen[5],
	}, nil
}
