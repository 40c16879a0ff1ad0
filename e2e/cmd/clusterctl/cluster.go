package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const serviceClusterFirstIP = "10.96.0.1"

// Components in start order; `down` stops them in reverse.
var componentNames = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// ports are the loopback ports of one running cluster, chosen free at `up`.
type ports struct {
	EtcdClient        int `json:"etcdClient"`
	EtcdPeer          int `json:"etcdPeer"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
}

func (p ports) server() string { return fmt.Sprintf("https://127.0.0.1:%d", p.APIServer) }

func up(l layout, args []string) error {
	flags := flag.NewFlagSet("up", flag.ContinueOnError)
	nodeShape := flags.String("nodes", "1x2x2", "fake nodes to create: BLOCKSxRACKSxHOSTS, or 0 for none")
	if err := flags.Parse(args); err != nil {
		return err
	}
	shape, err := parseShape(*nodeShape)
	if err != nil {
		return err
	}
	if running := runningComponents(l); len(running) > 0 {
		return fmt.Errorf("a cluster from %s is already running (%s); run 'e2e/cluster down' first",
			l.state, strings.Join(running, ", "))
	}
	began := time.Now()
	if err := resetState(l); err != nil {
		return err
	}
	p, err := choosePorts()
	if err != nil {
		return err
	}
	if err := writeJSON(l.ports(), p); err != nil {
		return err
	}
	if err := writePKI(l); err != nil {
		return err
	}
	if err := writeKubeconfigs(l, p.server()); err != nil {
		return err
	}
	fmt.Printf("e2e/cluster: logs in %s\n", l.logs())
	if err := startAll(l, p); err != nil {
		stopAll(l)
		return err
	}
	client, err := newAdminClient(l, p.server())
	if err != nil {
		stopAll(l)
		return err
	}
	if err := waitForDefaultServiceAccount(client, 60*time.Second); err != nil {
		stopAll(l)
		return componentFailure(l, "kube-controller-manager", err.Error())
	}
	if shape.count() > 0 {
		spec := defaultNodeSpec()
		spec.shape = shape
		if err := createNodes(client, spec); err != nil {
			stopAll(l)
			return err
		}
		if err := waitNodesReady(client, spec.names(), 60*time.Second); err != nil {
			stopAll(l)
			return componentFailure(l, "kwok", err.Error())
		}
	}
	fmt.Printf("e2e/cluster: up in %.1fs: API server %s, %d fake nodes\n",
		time.Since(began).Seconds(), p.server(), shape.count())
	fmt.Printf("e2e/cluster: export KUBECONFIG=%s\n", l.kubeconfig())
	return nil
}

// resetState removes what a previous cluster left (never its running processes: up refuses
// to start while any of them runs) and prepares empty folders.
func resetState(l layout) error {
	if err := os.RemoveAll(l.state); err != nil {
		return fmt.Errorf("clean state folder %s: %w", l.state, err)
	}
	for _, dir := range []string{l.logs(), l.pids(), l.etcdData()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func startAll(l layout, p ports) error {
	for _, name := range componentNames {
		c, err := start(l, name, componentArgs(l, p, name))
		if err != nil {
			return err
		}
		if err := waitHealthy(l, c, 90*time.Second, healthCheck(l, p, name)); err != nil {
			return err
		}
		fmt.Printf("e2e/cluster: %-24s healthy (pid %d)\n", name, c.pid)
	}
	return nil
}

func componentArgs(l layout, p ports, name string) []string {
	loop := "127.0.0.1"
	switch name {
	case "etcd":
		peer := fmt.Sprintf("http://%s:%d", loop, p.EtcdPeer)
		client := fmt.Sprintf("http://%s:%d", loop, p.EtcdClient)
		return []string{
			"--name=kuota-e2e",
			"--data-dir=" + l.etcdData(),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=kuota-e2e=" + peer,
			// A throwaway test store: durability across power loss buys nothing here.
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		}
	case "kube-apiserver":
		return []string{
			"--bind-address=" + loop,
			"--advertise-address=" + loop,
			fmt.Sprintf("--secure-port=%d", p.APIServer),
			fmt.Sprintf("--etcd-servers=http://%s:%d", loop, p.EtcdClient),
			"--client-ca-file=" + l.pki("ca.crt"),
			"--tls-cert-file=" + l.pki("apiserver.crt"),
			"--tls-private-key-file=" + l.pki("apiserver.key"),
			"--authorization-mode=Node,RBAC",
			"--requestheader-client-ca-file=" + l.pki("front-proxy-ca.crt"),
			"--requestheader-allowed-names=" + frontProxyClientName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file=" + l.pki("front-proxy-client.crt"),
			"--proxy-client-key-file=" + l.pki("front-proxy-client.key"),
			// Added to the release's default plugins (which already include both webhook plugins).
			"--enable-admission-plugins=NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota,Priority",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + l.pki("sa.pub"),
			"--service-account-signing-key-file=" + l.pki("sa.key"),
			"--service-cluster-ip-range=10.96.0.0/16",
			"--allow-privileged=true",
			// Endpoints may not name a loopback address, and nothing here routes to the service.
			"--endpoint-reconciler-type=none",
			// Webhook calls go to a Service's EndpointSlices (there is no kube-proxy for cluster
			// IPs), so `deploy` can point the chart's webhook Service at the controller process.
			"--enable-aggregator-routing=true",
		}
	case "kube-controller-manager":
		kc := l.componentKubeconfig("controller-manager")
		return []string{
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=" + loop,
			fmt.Sprintf("--secure-port=%d", p.ControllerManager),
			"--cert-dir=" + filepath.Join(l.state, "controller-manager-serving"),
			"--leader-elect=false",
			"--controllers=*",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + l.pki("sa.key"),
			"--root-ca-file=" + l.pki("ca.crt"),
		}
	case "kube-scheduler":
		kc := l.componentKubeconfig("scheduler")
		return []string{
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=" + loop,
			fmt.Sprintf("--secure-port=%d", p.Scheduler),
			"--cert-dir=" + filepath.Join(l.state, "scheduler-serving"),
			"--leader-elect=false",
		}
	case "kwok":
		return []string{
			"--kubeconfig=" + l.componentKubeconfig("kwok"),
			"--config=" + filepath.Join(l.source(), "kwok", "stages.yaml"),
			"--manage-nodes-with-annotation-selector=" + kwokManagedAnnotation + "=fake",
			"--disregard-status-with-annotation-selector=" + failedNodeAnnotation + "=true",
			"--node-lease-duration-seconds=40",
			fmt.Sprintf("--server-address=%s:%d", loop, p.Kwok),
		}
	}
	return nil
}

func healthCheck(l layout, p ports, name string) func() error {
	insecure := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		// The controller manager and scheduler serve health on self-signed certificates.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	switch name {
	case "etcd":
		return httpCheck(insecure, fmt.Sprintf("http://127.0.0.1:%d/health", p.EtcdClient), `"health":"true"`)
	case "kube-apiserver":
		return func() error {
			client, err := newAdminClient(l, p.server())
			if err != nil {
				return err
			}
			return client.get("/readyz", nil)
		}
	case "kube-controller-manager":
		return httpCheck(insecure, fmt.Sprintf("https://127.0.0.1:%d/healthz", p.ControllerManager), "ok")
	case "kube-scheduler":
		return httpCheck(insecure, fmt.Sprintf("https://127.0.0.1:%d/healthz", p.Scheduler), "ok")
	case "kwok":
		return httpCheck(insecure, fmt.Sprintf("http://127.0.0.1:%d/healthz", p.Kwok), "ok")
	}
	return func() error { return fmt.Errorf("no health check for %s", name) }
}

func httpCheck(client *http.Client, url, want string) func() error {
	return func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			return fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return nil
	}
}

// waitForDefaultServiceAccount waits for the service-account controller to create the
// default ServiceAccount: until then pods cannot be admitted.
func waitForDefaultServiceAccount(c *apiClient, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := c.get("/api/v1/namespaces/default/serviceaccounts/default", nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("did not create ServiceAccount default/default within %s: %v", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func down(l layout) error {
	stopped, err := stopAll(l)
	if err != nil {
		return err
	}
	// Keep the logs of the last cluster for a post-mortem; everything else goes.
	entries, err := os.ReadDir(l.state)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.Name() == "logs" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(l.state, e.Name())); err != nil {
			return err
		}
	}
	fmt.Printf("e2e/cluster: stopped %d processes; logs kept in %s\n", stopped, l.logs())
	return nil
}

// stopAll stops every recorded process in reverse start order and removes its pid file.
func stopAll(l layout) (int, error) {
	stopped := 0
	var errs []error
	// A deployed controller first: it talks to the components.
	names := []string{surgeName, deployedName}
	for i := len(componentNames) - 1; i >= 0; i-- {
		names = append(names, componentNames[i])
	}
	for _, name := range names {
		rec, ok := readRecord(l, name)
		if !ok {
			continue
		}
		if rec.alive() {
			if err := rec.stop(15 * time.Second); err != nil {
				errs = append(errs, err)
				continue
			}
			stopped++
		}
		_ = os.Remove(l.pid(name))
	}
	return stopped, errors.Join(errs...)
}

func runningComponents(l layout) []string {
	var running []string
	for _, name := range componentNames {
		if rec, ok := readRecord(l, name); ok && rec.alive() {
			running = append(running, fmt.Sprintf("%s pid %d", name, rec.pid))
		}
	}
	return running
}

func status(l layout) error {
	var p ports
	if err := readJSON(l.ports(), &p); err != nil {
		fmt.Printf("no cluster state in %s\n", l.state)
		return exitCode(1)
	}
	healthy := true
	for _, name := range componentNames {
		rec, ok := readRecord(l, name)
		switch {
		case !ok:
			fmt.Printf("%-24s not started\n", name)
			healthy = false
		case !rec.alive():
			fmt.Printf("%-24s pid %d not running (log: %s)\n", name, rec.pid, l.log(name))
			healthy = false
		default:
			if err := healthCheck(l, p, name)(); err != nil {
				fmt.Printf("%-24s pid %d unhealthy: %v\n", name, rec.pid, err)
				healthy = false
			} else {
				fmt.Printf("%-24s pid %d healthy\n", name, rec.pid)
			}
		}
	}
	fmt.Printf("API server %s; KUBECONFIG=%s; logs in %s\n", p.server(), l.kubeconfig(), l.logs())
	if !healthy {
		return exitCode(1)
	}
	return nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
