package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const (
	// kwokManagedAnnotation marks the nodes kwok plays the kubelet for.
	kwokManagedAnnotation = "kwok.x-k8s.io/node"
	// failedNodeAnnotation makes kwok leave a node's status alone, so a test can fail it.
	failedNodeAnnotation = "e2e.kuota.dev/failed"
	// DefaultBlockLabel and DefaultRackLabel are the topology levels above kubernetes.io/hostname.
	defaultBlockLabel = "cloud.provider.com/topology-block"
	defaultRackLabel  = "cloud.provider.com/topology-rack"
	hostnameLabel     = "kubernetes.io/hostname"
)

// shape is blocks × racks per block × hosts per rack.
type shape struct{ blocks, racks, hosts int }

func (s shape) count() int { return s.blocks * s.racks * s.hosts }

func parseShape(text string) (shape, error) {
	if text == "0" {
		return shape{}, nil
	}
	parts := strings.Split(text, "x")
	if len(parts) != 3 {
		return shape{}, fmt.Errorf("node shape %q: want BLOCKSxRACKSxHOSTS such as 1x2x2, or 0", text)
	}
	var n [3]int
	for i, part := range parts {
		v, err := strconv.Atoi(part)
		if err != nil || v < 1 || v > 100 {
			return shape{}, fmt.Errorf("node shape %q: %q is not a count from 1 to 100", text, part)
		}
		n[i] = v
	}
	return shape{blocks: n[0], racks: n[1], hosts: n[2]}, nil
}

// nodeSpec describes a set of identical fake nodes laid out in a topology.
type nodeSpec struct {
	shape      shape
	prefix     string
	cpu        string
	memory     string
	pods       string
	gpu        string
	blockLabel string
	rackLabel  string
	labels     map[string]string
}

func defaultNodeSpec() nodeSpec {
	return nodeSpec{
		shape: shape{1, 2, 2}, prefix: "kwok", cpu: "8", memory: "32Gi", pods: "110", gpu: "0",
		blockLabel: defaultBlockLabel, rackLabel: defaultRackLabel, labels: map[string]string{},
	}
}

type placedNode struct {
	name, block, rack string
}

func (s nodeSpec) layout() []placedNode {
	var out []placedNode
	for b := 0; b < s.shape.blocks; b++ {
		for r := 0; r < s.shape.racks; r++ {
			for h := 0; h < s.shape.hosts; h++ {
				out = append(out, placedNode{
					name:  fmt.Sprintf("%s-b%d-r%d-h%d", s.prefix, b, r, h),
					block: fmt.Sprintf("b%d", b),
					rack:  fmt.Sprintf("b%d-r%d", b, r),
				})
			}
		}
	}
	return out
}

func (s nodeSpec) names() []string {
	var names []string
	for _, n := range s.layout() {
		names = append(names, n.name)
	}
	return names
}

func (s nodeSpec) object(n placedNode) map[string]any {
	labels := map[string]string{
		s.blockLabel:         n.block,
		s.rackLabel:          n.rack,
		hostnameLabel:        n.name,
		"kubernetes.io/os":   "linux",
		"kubernetes.io/arch": "amd64",
		"type":               "kwok",
	}
	for k, v := range s.labels {
		labels[k] = v
	}
	resources := map[string]string{"cpu": s.cpu, "memory": s.memory, "pods": s.pods}
	if s.gpu != "0" && s.gpu != "" {
		resources["nvidia.com/gpu"] = s.gpu
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata": map[string]any{
			"name":        n.name,
			"labels":      labels,
			"annotations": map[string]string{kwokManagedAnnotation: "fake"},
		},
		// A node's status may be set when it is created; kwok then keeps it Ready.
		"status": map[string]any{"capacity": resources, "allocatable": resources},
	}
}

func createNodes(c *apiClient, s nodeSpec) error {
	for _, n := range s.layout() {
		if err := c.create("/api/v1/nodes", s.object(n)); err != nil {
			if isConflictOrExists(err) {
				return fmt.Errorf("node %s already exists: delete it first or choose another --prefix", n.name)
			}
			return fmt.Errorf("create node %s: %w", n.name, err)
		}
	}
	return nil
}

type nodeStatus struct {
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
	Spec struct {
		Taints []struct {
			Key string `json:"key"`
		} `json:"taints"`
	} `json:"spec"`
}

// ready means Ready=True and no taint left from startup (node.kubernetes.io/not-ready), so the
// scheduler can use the node.
func (n nodeStatus) ready() bool {
	for _, t := range n.Spec.Taints {
		if t.Key == "node.kubernetes.io/not-ready" || t.Key == "node.kubernetes.io/unreachable" {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func waitNodesReady(c *apiClient, names []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for {
			var n nodeStatus
			err := c.get("/api/v1/nodes/"+name, &n)
			if err == nil && n.ready() {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s not Ready and untainted within %s (last: %+v, err %v)", name, timeout, n, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}

const nodesUsage = `usage:
  e2e/cluster nodes create [--shape BxRxH] [--prefix P] [--cpu Q] [--memory Q] [--pods N] [--gpu N]
                           [--block-label KEY] [--rack-label KEY] [--label KEY=VALUE ...]
  e2e/cluster nodes not-ready NAME
  e2e/cluster nodes ready NAME
  e2e/cluster nodes taint NAME KEY[=VALUE]:EFFECT
  e2e/cluster nodes delete NAME
`

func nodesCommand(l layout, args []string) error {
	if len(args) == 0 || args[0] == "help" {
		fmt.Print(nodesUsage)
		return nil
	}
	var p ports
	if err := readJSON(l.ports(), &p); err != nil {
		return fmt.Errorf("no running cluster in %s (e2e/cluster up): %w", l.state, err)
	}
	c, err := newAdminClient(l, p.server())
	if err != nil {
		return err
	}
	if args[0] == "create" {
		return nodesCreate(c, args[1:])
	}
	if len(args) < 2 {
		return fmt.Errorf("nodes %s: missing node name\n%s", args[0], nodesUsage)
	}
	name := args[1]
	path := "/api/v1/nodes/" + name
	switch args[0] {
	case "not-ready":
		return markNotReady(c, name)
	case "ready":
		return c.mergePatch(path, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{failedNodeAnnotation: nil}},
		})
	case "taint":
		if len(args) != 3 {
			return fmt.Errorf("nodes taint: want NAME KEY[=VALUE]:EFFECT\n%s", nodesUsage)
		}
		return addTaint(c, name, args[2])
	case "delete":
		return c.delete(path)
	}
	return fmt.Errorf("unknown nodes command %q\n%s", args[0], nodesUsage)
}

func nodesCreate(c *apiClient, args []string) error {
	spec := defaultNodeSpec()
	flags := flag.NewFlagSet("nodes create", flag.ContinueOnError)
	shapeText := flags.String("shape", "1x2x2", "BLOCKSxRACKSxHOSTS")
	flags.StringVar(&spec.prefix, "prefix", spec.prefix, "node name prefix")
	flags.StringVar(&spec.cpu, "cpu", spec.cpu, "allocatable cpu per node")
	flags.StringVar(&spec.memory, "memory", spec.memory, "allocatable memory per node")
	flags.StringVar(&spec.pods, "pods", spec.pods, "allocatable pods per node")
	flags.StringVar(&spec.gpu, "gpu", spec.gpu, "allocatable nvidia.com/gpu per node (0: none)")
	flags.StringVar(&spec.blockLabel, "block-label", spec.blockLabel, "label key of the block level")
	flags.StringVar(&spec.rackLabel, "rack-label", spec.rackLabel, "label key of the rack level")
	flags.Func("label", "extra KEY=VALUE label on every node (repeatable)", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("label %q: want KEY=VALUE", v)
		}
		spec.labels[k] = val
		return nil
	})
	if err := flags.Parse(args); err != nil {
		return err
	}
	sh, err := parseShape(*shapeText)
	if err != nil {
		return err
	}
	spec.shape = sh
	if err := createNodes(c, spec); err != nil {
		return err
	}
	if err := waitNodesReady(c, spec.names(), 60*time.Second); err != nil {
		return err
	}
	fmt.Printf("created %d Ready nodes: %s\n", len(spec.names()), strings.Join(spec.names(), " "))
	return nil
}

// markNotReady fails a node the way a dead kubelet shows: kwok stops reporting its status and
// its Ready condition turns False; the node-lifecycle controller then taints it.
func markNotReady(c *apiClient, name string) error {
	path := "/api/v1/nodes/" + name
	if err := c.mergePatch(path, map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{failedNodeAnnotation: "true"}},
	}); err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return c.strategicPatch(path+"/status", map[string]any{
		"status": map[string]any{"conditions": []map[string]string{{
			"type": "Ready", "status": "False", "reason": "KubeletStopped",
			"message":           "e2e/cluster marked this node as failed",
			"lastHeartbeatTime": now, "lastTransitionTime": now,
		}}},
	})
}

func addTaint(c *apiClient, name, text string) error {
	keyValue, effect, ok := strings.Cut(text, ":")
	if !ok || (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
		return fmt.Errorf("taint %q: want KEY[=VALUE]:EFFECT with effect NoSchedule, PreferNoSchedule or NoExecute", text)
	}
	key, value, _ := strings.Cut(keyValue, "=")
	var n struct {
		Spec struct {
			Taints []map[string]any `json:"taints"`
		} `json:"spec"`
	}
	if err := c.get("/api/v1/nodes/"+name, &n); err != nil {
		return err
	}
	taints := append(n.Spec.Taints, map[string]any{"key": key, "value": value, "effect": effect})
	return c.mergePatch("/api/v1/nodes/"+name, map[string]any{"spec": map[string]any{"taints": taints}})
}
