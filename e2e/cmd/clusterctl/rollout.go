package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// surgeName records the new replica while a rollout runs; once the old one is gone the new one
// is recorded as deployedName.
const surgeName = "kuota-surge"

// rolloutPortShift moves every port of a replica of odd generation, so that it and the replica
// it replaces (of even generation, on the chart's ports) can run side by side on this machine as
// two pods of a Deployment do on their own addresses.
const rolloutPortShift = 100

// replicaState is what `rollout` keeps of the replica serving now.
type replicaState struct {
	Generation int    `json:"generation"`
	Log        string `json:"log"`
}

// rollout replaces the controller `deploy` started by a new replica the way a Deployment's
// rolling update (maxSurge 1, maxUnavailable 0) and the endpointslice controller do it: the new
// replica starts and becomes ready, its endpoints are added to the webhook and visibility
// Services beside the old one's; then the old pod is deleted: its endpoints turn not ready
// (terminating), its preStop sleep runs, it gets SIGTERM and the rest of its grace period to
// exit (SIGKILL after), and its endpoints go.
func rollout(l layout) error {
	old, ok := readRecord(l, deployedName)
	if !ok || !old.alive() {
		return errors.New("kuota is not deployed; run 'e2e/cluster deploy' first")
	}
	kuotaBin := os.Getenv("KUOTA_BIN")
	if kuotaBin == "" {
		kuotaBin = old.exe
	}
	var current replicaState
	if err := readJSON(l.deployed("replica.json"), &current); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	next := current.Generation + 1
	_, client, err := clusterAdmin(l)
	if err != nil {
		return err
	}
	r := releaseFromEnv()
	found, err := findReleaseParts(client, r)
	if err != nil {
		return err
	}
	shift := rolloutPortShift * (next % 2)
	configuration, err := replicaConfiguration(found.configuration, shift)
	if err != nil {
		return err
	}
	config := l.deployed(fmt.Sprintf("config-%d.yaml", next))
	if err := os.WriteFile(config, []byte(configuration), 0o644); err != nil {
		return err
	}
	health, err := healthPort(configuration)
	if err != nil {
		return err
	}
	hostIP, err := hostAddress()
	if err != nil {
		return err
	}
	env := append(found.env,
		"KUBECONFIG="+l.deployed("kubeconfig"),
		"POD_NAMESPACE="+r.namespace,
		fmt.Sprintf("POD_NAME=%s-local-%d", r.name, next),
	)
	logName := fmt.Sprintf("%s-%d", deployedName, next)
	began := time.Now()
	c, err := launchLogged(l, surgeName, logName, kuotaBin, localArgs(found.args, config), env, os.O_TRUNC)
	if err != nil {
		return err
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	if err := waitHealthy(l, c, 90*time.Second, httpCheck(&http.Client{Timeout: 3 * time.Second}, readyz, "")); err != nil {
		return err
	}
	ready := time.Since(began)
	ports := shiftedPorts(found.containerPorts, shift)
	for _, route := range found.routes {
		if err := routeService(client, r, ports, route, sliceName(r, route, next), hostIP); err != nil {
			return err
		}
	}
	for _, route := range found.routes {
		path := endpointSlicesPath(r.namespace) + "/" + sliceName(r, route, current.Generation)
		if err := client.mergePatch(path, terminatingEndpoint(hostIP)); err != nil {
			return fmt.Errorf("mark the old replica's endpoint terminating: %w", err)
		}
	}
	time.Sleep(found.preStopSleep)
	exited, stopErr := terminate(old, found.gracePeriod-found.preStopSleep)
	for _, route := range found.routes {
		path := endpointSlicesPath(r.namespace) + "/" + sliceName(r, route, current.Generation)
		if err := client.delete(path); err != nil && !isNotFound(err) {
			return err
		}
	}
	if err := os.WriteFile(l.pid(deployedName), []byte(fmt.Sprintf("%d\n%s\n", c.pid, kuotaBin)), 0o644); err != nil {
		return err
	}
	_ = os.Remove(l.pid(surgeName))
	if err := writeJSON(l.deployed("replica.json"), replicaState{Generation: next, Log: l.log(logName)}); err != nil {
		return err
	}
	if stopErr != nil {
		return stopErr
	}
	if err := waitAPIServicesAvailable(client, found.apiServices, 60*time.Second); err != nil {
		return componentFailure(l, logName, err.Error())
	}
	fmt.Printf("e2e/cluster: kuota rolled out: replica %d (pid %d, log %s) ready after %.1fs; "+
		"replica %d (pid %d) exited %.1fs after SIGTERM\n",
		next, c.pid, l.log(logName), ready.Seconds(), current.Generation, old.pid, exited.Seconds())
	return nil
}

// terminate sends SIGTERM and waits up to `grace` (at least 2 s, as kubelet gives) for the
// process to exit; a process still running then is killed, and that is an error: a replica must
// answer its calls and exit within its grace period.
func terminate(p recordedProcess, grace time.Duration) (time.Duration, error) {
	grace = max(grace, 2*time.Second)
	began := time.Now()
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return 0, fmt.Errorf("signal kuota (pid %d): %w", p.pid, err)
	}
	for time.Since(began) < grace {
		if !p.alive() {
			return time.Since(began), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.stop(0); err != nil {
		return time.Since(began), err
	}
	return time.Since(began), fmt.Errorf("kuota (pid %d) did not exit within %s of SIGTERM and was killed", p.pid, grace)
}

// replicaConfiguration is the configuration file with every port it binds moved by `shift`:
// the health probes', the metrics', the webhooks' and the visibility server's (each at Kueue's
// default when the file leaves it out), and pprof's when it is on.
func replicaConfiguration(configuration string, shift int) (string, error) {
	var config map[string]any
	if err := yaml.Unmarshal([]byte(configuration), &config); err != nil {
		return "", fmt.Errorf("the release's configuration file: %w", err)
	}
	if config == nil {
		config = map[string]any{}
	}
	section := func(name string) map[string]any {
		s, ok := config[name].(map[string]any)
		if !ok {
			s = map[string]any{}
			config[name] = s
		}
		return s
	}
	health := section("health")
	address, err := shiftAddress(stringOr(health["healthProbeBindAddress"], ":8081"), shift)
	if err != nil {
		return "", fmt.Errorf("health.healthProbeBindAddress: %w", err)
	}
	health["healthProbeBindAddress"] = address
	metrics := section("metrics")
	if address := stringOr(metrics["bindAddress"], ":8443"); address != "0" {
		if metrics["bindAddress"], err = shiftAddress(address, shift); err != nil {
			return "", fmt.Errorf("metrics.bindAddress: %w", err)
		}
	}
	if address, ok := config["pprofBindAddress"].(string); ok && address != "" && address != "0" {
		if config["pprofBindAddress"], err = shiftAddress(address, shift); err != nil {
			return "", fmt.Errorf("pprofBindAddress: %w", err)
		}
	}
	webhook := section("webhook")
	webhook["port"] = numberOr(webhook["port"], 9443) + shift
	visibility := section("visibilityServer")
	visibility["bindPort"] = numberOr(visibility["bindPort"], 8082) + shift
	out, err := yaml.Marshal(config)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func stringOr(value any, fallback string) string {
	if s, ok := value.(string); ok && s != "" {
		return s
	}
	return fallback
}

func numberOr(value any, fallback int) int {
	if n, ok := value.(float64); ok {
		return int(n)
	}
	return fallback
}

// shiftAddress is host:port with the port moved by `shift`.
func shiftAddress(address string, shift int) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("port %q of %q: %w", port, address, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(n+shift)), nil
}

// shiftedPorts are the pod's named container ports moved by `shift`: the chart takes each of
// them from the configuration file.
func shiftedPorts(containerPorts map[string]int32, shift int) map[string]int32 {
	shifted := make(map[string]int32, len(containerPorts))
	for name, port := range containerPorts {
		shifted[name] = port + int32(shift)
	}
	return shifted
}
