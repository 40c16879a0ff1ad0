// Command clusterctl runs kuota's local Kubernetes control plane: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok as processes on loopback, with generated
// certificates, a kubeconfig, logs and recorded pids under one state folder.
//
// It is started by the `e2e/cluster` script, which builds the component binaries first and
// passes their folder in KUOTA_E2E_BIN.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const usage = `usage: e2e/cluster <command>

commands:
  up [--nodes BxRxH]   build what is missing, start the control plane, create fake nodes
                       (default 1x2x2: blocks x racks x hosts; 0 for none) and wait until healthy
  down                 stop the processes that up started (by recorded pid) and clean the state
  status               print each component's pid and health; exit 1 unless all are healthy
  env                  print the KUBECONFIG export for this cluster
  restart [--kill] [--down DURATION] COMPONENT
                       stop one component (SIGTERM, or SIGKILL with --kill), wait DURATION, start
                       it again with the same flags and wait until it is healthy; etcd keeps its
                       data, so a restarted kube-apiserver serves the same objects
  nodes create [flags] create kwok nodes with a topology (see 'e2e/cluster nodes help')
  nodes not-ready NAME make a node fail: kwok stops reporting it and its Ready condition is False
  nodes ready NAME     give a not-ready node back to kwok
  nodes taint NAME KEY[=VALUE]:EFFECT
  nodes delete NAME
  deploy [HELM ARGS]   helm install charts/kuota (release $KUOTA_RELEASE, default kuota, in
                       $KUOTA_NAMESPACE, default kuota-system; extra args such as --set or -f go
                       to helm), run the kuota controller here under the chart's ServiceAccount
                       and route the chart's webhook and visibility Services to it; returns once
                       it is ready and the release's APIServices are Available
  rollout              replace the deployed controller by a new replica as a Deployment's rolling
                       update does: start it on other ports, route the Services to it once ready,
                       mark the old endpoints terminating, wait the chart's preStop sleep, SIGTERM
                       the old replica and wait for it to exit (SIGKILL and fail after its grace
                       period), then remove its endpoints
  undeploy             stop that controller, helm uninstall the release (CRDs stay) and remove
                       the routes
  kubectl ARGS...      run the pinned kubectl against this cluster

environment:
  KUOTA_E2E_STATE      state folder (default: e2e/.state beside this script)
  KUOTA_BIN            the kuota binary deploy runs (default: built with cargo)
  KUOTA_IMAGE          an OCI image layout (scripts/image.sh OUT writes OUT/oci): deploy unpacks it
                       and runs its entrypoint chrooted in it as the image's user, with the pod's
                       in-cluster ServiceAccount files (needs root; takes precedence over KUOTA_BIN)
`

func main() {
	if err := run(os.Args[1:]); err != nil {
		var exit exitCode
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		fmt.Fprintf(os.Stderr, "e2e/cluster: %v\n", err)
		os.Exit(1)
	}
}

// exitCode lets a command choose its exit status after it has printed its own report.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitCode(2)
	}
	layout, err := newLayout()
	if err != nil {
		return err
	}
	switch args[0] {
	case "up":
		return up(layout, args[1:])
	case "down":
		return down(layout)
	case "status":
		return status(layout)
	case "env":
		return printEnv(layout)
	case "restart":
		return restart(layout, args[1:])
	case "nodes":
		return nodesCommand(layout, args[1:])
	case "deploy":
		return deploy(layout, args[1:])
	case "rollout":
		return rollout(layout)
	case "undeploy":
		return undeploy(layout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// layout names every file the cluster owns.
type layout struct {
	src   string
	bin   string
	state string
}

func newLayout() (layout, error) {
	src := os.Getenv("KUOTA_E2E_DIR")
	bin := os.Getenv("KUOTA_E2E_BIN")
	state := os.Getenv("KUOTA_E2E_STATE")
	if src == "" || bin == "" || state == "" {
		return layout{}, errors.New("KUOTA_E2E_DIR, KUOTA_E2E_BIN and KUOTA_E2E_STATE must be set; run this through e2e/cluster")
	}
	absState, err := filepath.Abs(state)
	if err != nil {
		return layout{}, fmt.Errorf("state folder %q: %w", state, err)
	}
	return layout{src: src, bin: bin, state: absState}, nil
}

func (l layout) source() string            { return l.src }
func (l layout) binary(name string) string { return filepath.Join(l.bin, name) }
func (l layout) pki(name string) string    { return filepath.Join(l.state, "pki", name) }
func (l layout) logs() string              { return filepath.Join(l.state, "logs") }
func (l layout) log(name string) string    { return filepath.Join(l.logs(), name+".log") }
func (l layout) pids() string              { return filepath.Join(l.state, "pids") }
func (l layout) pid(name string) string    { return filepath.Join(l.pids(), name+".pid") }
func (l layout) kubeconfig() string        { return filepath.Join(l.state, "kubeconfig") }
func (l layout) componentKubeconfig(name string) string {
	return filepath.Join(l.state, "kubeconfigs", name+".kubeconfig")
}
func (l layout) ports() string    { return filepath.Join(l.state, "ports.json") }
func (l layout) etcdData() string { return filepath.Join(l.state, "etcd-data") }

func printEnv(l layout) error {
	if _, err := os.Stat(l.kubeconfig()); err != nil {
		return fmt.Errorf("no kubeconfig at %s: is the cluster up? (e2e/cluster up)", l.kubeconfig())
	}
	fmt.Printf("export KUBECONFIG=%s\n", l.kubeconfig())
	return nil
}
