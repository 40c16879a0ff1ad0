package main

import (
	"fmt"
	"net/url"
	"sort"
	"time"
)

// endpointSliceManager marks the EndpointSlices `deploy` writes, so the endpointslice
// controller leaves them alone and `undeploy` finds them.
const endpointSliceManager = "e2e.kuota.dev"

// visibilityAPIService is the APIService whose Service `deploy` routes to the local controller
// for Kueue's visibility API; the release's other versions of the API go through the same Service.
const visibilityAPIService = "v1beta2.visibility.kueue.x-k8s.io"

// serviceRoute is one of the release's Services whose port the local controller answers.
type serviceRoute struct {
	// What the Service is for ("webhook", "visibility"); it names the EndpointSlice.
	purpose string
	service string
	port    int32
}

// servicePort is one port of a Service, as read from the API server.
type servicePort struct {
	Name       string `json:"name"`
	Port       int32  `json:"port"`
	TargetPort any    `json:"targetPort"`
}

// apiService is the part of an APIService `deploy` reads.
type apiService struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Service *struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Port      *int32 `json:"port"`
		} `json:"service"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

func endpointSlicesPath(namespace string) string {
	return fmt.Sprintf("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices", namespace)
}

// targetPort is the name of the Service's port `port` and the container port it sends to: a
// number, or a name the Deployment's pod gives one of its container ports.
func targetPort(namespace, service string, ports []servicePort, port int32, containerPorts map[string]int32) (string, int32, error) {
	for _, sp := range ports {
		if sp.Port != port {
			continue
		}
		switch t := sp.TargetPort.(type) {
		case float64:
			return sp.Name, int32(t), nil
		case string:
			if target, ok := containerPorts[t]; ok {
				return sp.Name, target, nil
			}
			return "", 0, fmt.Errorf("Service %s/%s: port %d targets %q, which no container port of the Deployment's pod is named", namespace, service, port, t)
		}
	}
	return "", 0, fmt.Errorf("Service %s/%s has no port %d with a target port", namespace, service, port)
}

// sliceName names the EndpointSlice that sends the Service of `route` to replica `generation`
// (0 the one `deploy` starts, then one more for each `rollout`).
func sliceName(r release, route serviceRoute, generation int) string {
	name := r.name + "-local-" + route.purpose
	if generation > 0 {
		name += fmt.Sprintf("-%d", generation)
	}
	return name
}

// endpointSlice is the EndpointSlice `name` that sends the Service of `route` to `hostIP`, port
// `target`.
func endpointSlice(r release, route serviceRoute, name, portName string, target int32, hostIP string) map[string]any {
	return map[string]any{
		"apiVersion": "discovery.k8s.io/v1",
		"kind":       "EndpointSlice",
		"metadata": map[string]any{
			"name":      name,
			"namespace": r.namespace,
			"labels": map[string]string{
				"kubernetes.io/service-name":             route.service,
				"endpointslice.kubernetes.io/managed-by": endpointSliceManager,
			},
		},
		"addressType": "IPv4",
		"endpoints": []map[string]any{{
			"addresses":  []string{hostIP},
			"conditions": map[string]any{"ready": true},
		}},
		"ports": []map[string]any{{"name": portName, "port": target, "protocol": "TCP"}},
	}
}

// terminatingEndpoint is the merge patch the endpointslice controller's change amounts to when
// the pod behind an EndpointSlice's endpoint is being deleted: the endpoint stays, serving and
// terminating but no longer ready, so callers that pick ready endpoints (the API server's
// webhook and aggregator routing) stop choosing it while the pod's preStop hook runs.
func terminatingEndpoint(hostIP string) map[string]any {
	return map[string]any{
		"endpoints": []map[string]any{{
			"addresses":  []string{hostIP},
			"conditions": map[string]any{"ready": false, "serving": true, "terminating": true},
		}},
	}
}

// routeService writes the EndpointSlice `name` that sends the Service of `route` to this machine,
// on the container port its target port resolves to.
func routeService(c *apiClient, r release, containerPorts map[string]int32, route serviceRoute, name, hostIP string) error {
	var svc struct {
		Spec struct {
			Ports []servicePort `json:"ports"`
		} `json:"spec"`
	}
	if err := c.get(fmt.Sprintf("/api/v1/namespaces/%s/services/%s", r.namespace, route.service), &svc); err != nil {
		return err
	}
	portName, target, err := targetPort(r.namespace, route.service, svc.Spec.Ports, route.port, containerPorts)
	if err != nil {
		return err
	}
	slice := endpointSlice(r, route, name, portName, target, hostIP)
	path := endpointSlicesPath(r.namespace)
	if err := c.delete(path + "/" + name); err != nil && !isNotFound(err) {
		return err
	}
	return c.create(path, slice)
}

// unrouteServices removes every EndpointSlice `deploy` wrote in the release's namespace.
func unrouteServices(c *apiClient, r release) error {
	selector := url.QueryEscape("endpointslice.kubernetes.io/managed-by=" + endpointSliceManager)
	err := c.delete(endpointSlicesPath(r.namespace) + "?labelSelector=" + selector)
	if err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// findVisibilityRoute is the route of the Service the visibility APIService names, when the
// release registers one in its namespace, with the names of every APIService served through
// that Service (each version of the API).
func findVisibilityRoute(c *apiClient, r release) (*serviceRoute, []string, error) {
	var visibility apiService
	if err := c.get(apiServicesPath+"/"+visibilityAPIService, &visibility); err != nil {
		if isNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	s := visibility.Spec.Service
	if s == nil || s.Namespace != r.namespace {
		return nil, nil, nil
	}
	route := &serviceRoute{purpose: "visibility", service: s.Name, port: 443}
	if s.Port != nil {
		route.port = *s.Port
	}
	var all struct {
		Items []apiService `json:"items"`
	}
	if err := c.get(apiServicesPath, &all); err != nil {
		return nil, nil, err
	}
	return route, apiServicesThrough(all.Items, r.namespace, s.Name), nil
}

// apiServicesThrough names, sorted, the APIServices proxied to Service namespace/name.
func apiServicesThrough(items []apiService, namespace, name string) []string {
	var names []string
	for _, item := range items {
		if s := item.Spec.Service; s != nil && s.Namespace == namespace && s.Name == name {
			names = append(names, item.Metadata.Name)
		}
	}
	sort.Strings(names)
	return names
}

// availability says whether the APIService is Available and, when it is not, why, from its
// condition as the API server's availability controller wrote it.
func availability(a apiService) (bool, string) {
	for _, cond := range a.Status.Conditions {
		if cond.Type != "Available" {
			continue
		}
		if cond.Status == "True" {
			return true, ""
		}
		return false, fmt.Sprintf("Available=%s (%s): %s", cond.Status, cond.Reason, cond.Message)
	}
	return false, "no Available condition yet"
}

// waitAPIServicesAvailable waits until every named APIService is Available: until then the
// API server answers 503 for its group version and discovery reports it failed.
func waitAPIServicesAvailable(c *apiClient, names []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for {
			var a apiService
			why := ""
			if err := c.get(apiServicesPath+"/"+name, &a); err != nil {
				why = err.Error()
			} else {
				available, reason := availability(a)
				if available {
					break
				}
				why = reason
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("serves APIService %s, which is not Available after %s: %s", name, timeout, why)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}
