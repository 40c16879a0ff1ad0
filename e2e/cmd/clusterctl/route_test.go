package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func servicePorts(t *testing.T, text string) []servicePort {
	t.Helper()
	var ports []servicePort
	if err := json.Unmarshal([]byte(text), &ports); err != nil {
		t.Fatal(err)
	}
	return ports
}

func TestTargetPortFollowsNamedAndNumberedTargets(t *testing.T) {
	ports := servicePorts(t, `[
		{"name": "https", "port": 443, "targetPort": "visibility"},
		{"name": "metrics", "port": 8443, "targetPort": 18443}]`)
	containerPorts := map[string]int32{"visibility": 8082, "webhook-server": 9443}
	name, target, err := targetPort("ns", "svc", ports, 443, containerPorts)
	if err != nil || name != "https" || target != 8082 {
		t.Errorf("named target: %q %d %v; want https 8082", name, target, err)
	}
	name, target, err = targetPort("ns", "svc", ports, 8443, containerPorts)
	if err != nil || name != "metrics" || target != 18443 {
		t.Errorf("numbered target: %q %d %v; want metrics 18443", name, target, err)
	}
	_, _, err = targetPort("ns", "svc", ports, 443, map[string]int32{"webhook-server": 9443})
	if err == nil || !strings.Contains(err.Error(), `Service ns/svc: port 443 targets "visibility"`) {
		t.Errorf("a target no container port is named: %v", err)
	}
	_, _, err = targetPort("ns", "svc", ports, 80, containerPorts)
	if err == nil || !strings.Contains(err.Error(), "Service ns/svc has no port 80") {
		t.Errorf("a port the Service lacks: %v", err)
	}
}

func TestEndpointSliceSendsTheServiceToThisMachine(t *testing.T) {
	r := release{name: "team", namespace: "team-system"}
	route := serviceRoute{purpose: "visibility", service: "team-kuota-visibility-server", port: 443}
	data, err := json.Marshal(endpointSlice(r, route, sliceName(r, route, 0), "https", 8082, "10.0.0.5"))
	if err != nil {
		t.Fatal(err)
	}
	var slice struct {
		Metadata struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Endpoints []struct {
			Addresses []string `json:"addresses"`
		} `json:"endpoints"`
		Ports []struct {
			Name string `json:"name"`
			Port int32  `json:"port"`
		} `json:"ports"`
	}
	if err := json.Unmarshal(data, &slice); err != nil {
		t.Fatal(err)
	}
	if slice.Metadata.Name != "team-local-visibility" || slice.Metadata.Namespace != "team-system" {
		t.Errorf("slice %s/%s", slice.Metadata.Namespace, slice.Metadata.Name)
	}
	if slice.Metadata.Labels["kubernetes.io/service-name"] != "team-kuota-visibility-server" ||
		slice.Metadata.Labels["endpointslice.kubernetes.io/managed-by"] != endpointSliceManager {
		t.Errorf("labels %v", slice.Metadata.Labels)
	}
	if len(slice.Endpoints) != 1 || !reflect.DeepEqual(slice.Endpoints[0].Addresses, []string{"10.0.0.5"}) {
		t.Errorf("endpoints %+v", slice.Endpoints)
	}
	if len(slice.Ports) != 1 || slice.Ports[0].Name != "https" || slice.Ports[0].Port != 8082 {
		t.Errorf("ports %+v", slice.Ports)
	}
}

func TestAPIServicesThroughNameEveryVersionServedByTheService(t *testing.T) {
	var items []apiService
	if err := json.Unmarshal([]byte(`[
		{"metadata": {"name": "v1beta2.visibility.kueue.x-k8s.io"},
		 "spec": {"service": {"name": "kuota-visibility-server", "namespace": "kuota-system"}}},
		{"metadata": {"name": "v1.apps"}, "spec": {}},
		{"metadata": {"name": "v1beta1.metrics.k8s.io"},
		 "spec": {"service": {"name": "metrics-server", "namespace": "kube-system"}}},
		{"metadata": {"name": "v1beta1.visibility.kueue.x-k8s.io"},
		 "spec": {"service": {"name": "kuota-visibility-server", "namespace": "kuota-system"}}},
		{"metadata": {"name": "v1beta1.visibility.kueue.x-k8s.io.other"},
		 "spec": {"service": {"name": "kuota-visibility-server", "namespace": "other"}}}]`), &items); err != nil {
		t.Fatal(err)
	}
	got := apiServicesThrough(items, "kuota-system", "kuota-visibility-server")
	want := []string{"v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("apiServicesThrough = %q; want %q", got, want)
	}
}

func TestAvailabilityReadsTheAvailableCondition(t *testing.T) {
	cases := []struct {
		status    string
		available bool
		why       string
	}{
		{`{"conditions": [{"type": "Available", "status": "True", "reason": "Passed"}]}`, true, ""},
		{`{"conditions": [{"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck",
		   "message": "failing or missing response from https://10.0.0.5:8082"}]}`, false,
			"Available=False (FailedDiscoveryCheck): failing or missing response from https://10.0.0.5:8082"},
		{`{}`, false, "no Available condition yet"},
	}
	for _, c := range cases {
		var a apiService
		if err := json.Unmarshal([]byte(`{"status": `+c.status+`}`), &a); err != nil {
			t.Fatal(err)
		}
		available, why := availability(a)
		if available != c.available || why != c.why {
			t.Errorf("availability(%s) = %v %q; want %v %q", c.status, available, why, c.available, c.why)
		}
	}
}
