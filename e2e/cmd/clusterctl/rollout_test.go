package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestReplicaConfigurationMovesEveryBoundPort(t *testing.T) {
	chart := `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
`
	got, err := replicaConfiguration(chart, 100)
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Kind   string `json:"kind"`
		Health struct {
			Address string `json:"healthProbeBindAddress"`
		} `json:"health"`
		Metrics struct {
			Address string `json:"bindAddress"`
		} `json:"metrics"`
		Webhook struct {
			Port int `json:"port"`
		} `json:"webhook"`
		Visibility struct {
			Port int `json:"bindPort"`
		} `json:"visibilityServer"`
		LeaderElection struct {
			LeaderElect bool `json:"leaderElect"`
		} `json:"leaderElection"`
	}
	if err := yaml.Unmarshal([]byte(got), &config); err != nil {
		t.Fatal(err)
	}
	if config.Health.Address != ":8181" || config.Metrics.Address != ":8543" ||
		config.Webhook.Port != 9543 || config.Visibility.Port != 8182 {
		t.Errorf("ports not moved by 100 (the visibility port from Kueue's default 8082):\n%s", got)
	}
	if config.Kind != "Configuration" || !config.LeaderElection.LeaderElect {
		t.Errorf("the rest of the file changed:\n%s", got)
	}
	// The health port `rollout` waits on is read back from the file it writes.
	if port, err := healthPort(got); err != nil || port != 8181 {
		t.Errorf("healthPort = %d, %v; want 8181", port, err)
	}
}

func TestReplicaConfigurationKeepsDisabledServersOff(t *testing.T) {
	got, err := replicaConfiguration("metrics:\n  bindAddress: \"0\"\npprofBindAddress: \"0\"\n", 100)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `bindAddress: "0"`) || !strings.Contains(got, `pprofBindAddress: "0"`) {
		t.Errorf("a server turned off must stay off:\n%s", got)
	}
	if _, err := replicaConfiguration("health:\n  healthProbeBindAddress: nowhere\n", 100); err == nil ||
		!strings.Contains(err.Error(), "health.healthProbeBindAddress") {
		t.Errorf("an address without a port: %v", err)
	}
}

func TestRolloutSlicesAndTerminatingEndpoint(t *testing.T) {
	r := release{name: "kuota", namespace: "kuota-system"}
	route := serviceRoute{purpose: "webhook", service: "kuota-webhook-service", port: 443}
	if got := sliceName(r, route, 0); got != "kuota-local-webhook" {
		t.Errorf("the first replica's slice is the one deploy writes: %s", got)
	}
	if got := sliceName(r, route, 2); got != "kuota-local-webhook-2" {
		t.Errorf("slice of replica 2: %s", got)
	}
	patch := terminatingEndpoint("10.0.0.5")
	endpoints := patch["endpoints"].([]map[string]any)
	conditions := endpoints[0]["conditions"].(map[string]any)
	if len(endpoints) != 1 || conditions["ready"] != false || conditions["serving"] != true ||
		conditions["terminating"] != true {
		t.Errorf("a terminating endpoint is not ready, still serving: %v", patch)
	}
	shifted := shiftedPorts(map[string]int32{"webhook-server": 9443, "visibility": 8082}, 100)
	if shifted["webhook-server"] != 9543 || shifted["visibility"] != 8182 {
		t.Errorf("shiftedPorts = %v", shifted)
	}
}
