package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The controller `deploy` runs, recorded like a component so that `undeploy` and `down` stop it.
const deployedName = "kuota"

// release is where `deploy` installs the chart.
type release struct {
	name, namespace string
}

func releaseFromEnv() release {
	r := release{name: os.Getenv("KUOTA_RELEASE"), namespace: os.Getenv("KUOTA_NAMESPACE")}
	if r.name == "" {
		r.name = "kuota"
	}
	if r.namespace == "" {
		r.namespace = "kuota-system"
	}
	return r
}

// clusterAdmin reads the running cluster's ports and opens an admin client to its API server.
func clusterAdmin(l layout) (ports, *apiClient, error) {
	var p ports
	if err := readJSON(l.ports(), &p); err != nil {
		return p, nil, fmt.Errorf("is the cluster up? %w", err)
	}
	client, err := newAdminClient(l, p.server())
	return p, client, err
}

func (l layout) deployed(name string) string { return filepath.Join(l.state, "deploy", name) }

// deploy installs charts/kuota with Helm, then runs `kuota controller` on this machine with the
// chart's configuration file and under the chart's ServiceAccount (a token the API server
// issues), and points the chart's webhook Service and visibility Service at it. The chart's
// Deployment keeps zero replicas: there is no container runtime here, the process stands in for
// its pod. Returns once the controller is ready, which it is only once its webhook certificate is
// trusted, and the release's APIServices are Available.
//
// With KUOTA_IMAGE naming an OCI image layout, the process is the image's entrypoint instead of
// KUOTA_BIN, run as the image would be (image.go), and the release names the image's digest.
func deploy(l layout, helmArgs []string) error {
	kuotaBin, imageLayout := os.Getenv("KUOTA_BIN"), os.Getenv("KUOTA_IMAGE")
	if kuotaBin == "" && imageLayout == "" {
		return errors.New("KUOTA_BIN must name the kuota binary (e2e/cluster builds it when unset), or KUOTA_IMAGE an OCI image layout")
	}
	if rec, ok := readRecord(l, deployedName); ok && rec.alive() {
		return fmt.Errorf("kuota is already deployed (pid %d); run 'e2e/cluster undeploy' first", rec.pid)
	}
	var image *unpackedImage
	if imageLayout != "" {
		unpacked, err := unpackImage(imageLayout, l.deployed("rootfs"))
		if err != nil {
			return err
		}
		image = &unpacked
		helmArgs = append([]string{"--set", "controllerManager.manager.image.digest=" + image.digest}, helmArgs...)
	}
	p, client, err := clusterAdmin(l)
	if err != nil {
		return err
	}
	r := releaseFromEnv()
	chart := filepath.Join(l.source(), "..", "charts", "kuota")
	args := append([]string{
		"upgrade", "--install", r.name, chart,
		"--namespace", r.namespace, "--create-namespace",
		"--kubeconfig", l.kubeconfig(),
		"--set", "controllerManager.replicas=0",
	}, helmArgs...)
	if out, err := exec.Command(l.binary("helm"), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	found, err := findReleaseParts(client, r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.deployed(""), 0o755); err != nil {
		return err
	}
	token, err := serviceAccountToken(client, r, found.serviceAccount)
	if err != nil {
		return err
	}
	if err := writeServiceAccountKubeconfig(l, p, r, found.serviceAccount, token); err != nil {
		return err
	}
	if err := os.WriteFile(l.deployed("config.yaml"), []byte(found.configuration), 0o644); err != nil {
		return err
	}
	health, err := healthPort(found.configuration)
	if err != nil {
		return err
	}
	hostIP, err := hostAddress()
	if err != nil {
		return err
	}
	for _, route := range found.routes {
		if err := routeService(client, r, found.containerPorts, route, sliceName(r, route, 0), hostIP); err != nil {
			return err
		}
	}
	env := append(found.env,
		"POD_NAMESPACE="+r.namespace,
		"POD_NAME="+r.name+"-local",
	)
	var c *component
	if image != nil {
		c, err = startImage(l, *image, found, r, env, token, p)
	} else {
		env = append(env, "KUBECONFIG="+l.deployed("kubeconfig"))
		c, err = startProgram(l, deployedName, kuotaBin, localArgs(found.args, l.deployed("config.yaml")), env)
	}
	if err != nil {
		return err
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	if err := waitHealthy(l, c, 90*time.Second, httpCheck(&http.Client{Timeout: 3 * time.Second}, readyz, "")); err != nil {
		return err
	}
	if err := waitAPIServicesAvailable(client, found.apiServices, 60*time.Second); err != nil {
		return componentFailure(l, deployedName, err.Error())
	}
	fmt.Printf("e2e/cluster: kuota deployed as release %s in %s (controller pid %d, log %s)\n",
		r.name, r.namespace, c.pid, l.log(deployedName))
	return nil
}

// undeploy stops the controller `deploy` (or `rollout`) started, uninstalls the release (its CRDs stay) and
// removes the EndpointSlices that routed its Services here.
func undeploy(l layout) error {
	for _, name := range []string{surgeName, deployedName} {
		if rec, ok := readRecord(l, name); ok {
			if rec.alive() {
				if err := rec.stop(15 * time.Second); err != nil {
					return err
				}
			}
			_ = os.Remove(l.pid(name))
		}
	}
	r := releaseFromEnv()
	args := []string{"uninstall", r.name, "--namespace", r.namespace, "--kubeconfig", l.kubeconfig(), "--ignore-not-found"}
	if out, err := exec.Command(l.binary("helm"), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	var p ports
	if err := readJSON(l.ports(), &p); err == nil {
		if client, err := newAdminClient(l, p.server()); err == nil {
			if err := unrouteServices(client, r); err != nil {
				return err
			}
		}
	}
	_ = os.RemoveAll(l.deployed(""))
	fmt.Printf("e2e/cluster: kuota undeployed (release %s in %s)\n", r.name, r.namespace)
	return nil
}

// releaseParts are what `deploy` reads back from the installed release.
type releaseParts struct {
	serviceAccount string
	configuration  string
	// The Services the local controller answers for: the webhook Service, and the visibility
	// Service when the release registers the visibility API.
	routes []serviceRoute
	// The APIServices served through those Services, which `deploy` waits for.
	apiServices []string
	// The pod's named ports, which a Service's targetPort may name.
	containerPorts map[string]int32
	// The manager container's arguments and its environment given as plain values; the process
	// runs with them, so values such as controllerManager.featureGates take effect.
	args []string
	env  []string
	// The pod's preStop sleep and its termination grace period (which includes the sleep), as
	// kubelet applies them when the pod is deleted.
	preStopSleep time.Duration
	gracePeriod  time.Duration
}

// localArgs are the container's arguments with the configuration file's path replaced by the
// local copy.
func localArgs(containerArgs []string, config string) []string {
	args := make([]string, 0, len(containerArgs)+1)
	for i := 0; i < len(containerArgs); i++ {
		arg := containerArgs[i]
		switch {
		case strings.HasPrefix(arg, "--config="):
			args = append(args, "--config="+config)
		case arg == "--config":
			args = append(args, "--config", config)
			i++
		default:
			args = append(args, arg)
		}
	}
	return args
}

// findReleaseParts reads the release's Deployment (its ServiceAccount and configuration
// ConfigMap), its validating webhook configuration (the Service webhooks are called on) and
// its visibility APIService (the Service the aggregated API is proxied to).
func findReleaseParts(c *apiClient, r release) (releaseParts, error) {
	selector := "app.kubernetes.io/instance%3D" + r.name
	var deployments struct {
		Items []struct {
			Spec struct {
				Template struct {
					Spec struct {
						ServiceAccountName            string `json:"serviceAccountName"`
						TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
						Containers                    []struct {
							Args      []string `json:"args"`
							Lifecycle *struct {
								PreStop *struct {
									Sleep *struct {
										Seconds int64 `json:"seconds"`
									} `json:"sleep"`
								} `json:"preStop"`
							} `json:"lifecycle"`
							Env []struct {
								Name      string          `json:"name"`
								Value     string          `json:"value"`
								ValueFrom json.RawMessage `json:"valueFrom"`
							} `json:"env"`
							Ports []struct {
								Name          string `json:"name"`
								ContainerPort int32  `json:"containerPort"`
							} `json:"ports"`
						} `json:"containers"`
						Volumes []struct {
							ConfigMap *struct {
								Name string `json:"name"`
							} `json:"configMap"`
						} `json:"volumes"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := c.get(fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments?labelSelector=%s", r.namespace, selector), &deployments); err != nil {
		return releaseParts{}, err
	}
	if len(deployments.Items) != 1 {
		return releaseParts{}, fmt.Errorf("release %s: want one Deployment labelled with it, found %d", r.name, len(deployments.Items))
	}
	pod := deployments.Items[0].Spec.Template.Spec
	parts := releaseParts{serviceAccount: pod.ServiceAccountName, containerPorts: map[string]int32{}}
	// Kubernetes' default grace period.
	parts.gracePeriod = 30 * time.Second
	if g := pod.TerminationGracePeriodSeconds; g != nil {
		parts.gracePeriod = time.Duration(*g) * time.Second
	}
	for _, container := range pod.Containers {
		for _, port := range container.Ports {
			parts.containerPorts[port.Name] = port.ContainerPort
		}
		if len(container.Args) > 0 && container.Args[0] == "controller" {
			parts.args = container.Args
			if l := container.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
				parts.preStopSleep = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
			}
			for _, e := range container.Env {
				if len(e.ValueFrom) == 0 {
					parts.env = append(parts.env, e.Name+"="+e.Value)
				}
			}
		}
	}
	if len(parts.args) == 0 {
		return releaseParts{}, fmt.Errorf("release %s: no container of the Deployment runs `controller`", r.name)
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if err := c.get(fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", r.namespace, v.ConfigMap.Name), &cm); err != nil {
			return releaseParts{}, err
		}
		for _, value := range cm.Data {
			if strings.Contains(value, "kind: Configuration") {
				parts.configuration = value
			}
		}
	}
	if parts.serviceAccount == "" || parts.configuration == "" {
		return releaseParts{}, fmt.Errorf("release %s: the Deployment names no ServiceAccount or no configuration ConfigMap", r.name)
	}
	var hooks struct {
		Items []struct {
			Webhooks []struct {
				ClientConfig struct {
					Service *struct {
						Name string `json:"name"`
						Port *int32 `json:"port"`
					} `json:"service"`
				} `json:"clientConfig"`
			} `json:"webhooks"`
		} `json:"items"`
	}
	if err := c.get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?labelSelector="+selector, &hooks); err != nil {
		return releaseParts{}, err
	}
	var webhook *serviceRoute
	for _, item := range hooks.Items {
		for _, hook := range item.Webhooks {
			if s := hook.ClientConfig.Service; s != nil {
				webhook = &serviceRoute{purpose: "webhook", service: s.Name, port: 443}
				if s.Port != nil {
					webhook.port = *s.Port
				}
			}
		}
	}
	if webhook == nil {
		return releaseParts{}, fmt.Errorf("release %s: no validating webhook names a Service", r.name)
	}
	parts.routes = append(parts.routes, *webhook)
	visibility, apiServices, err := findVisibilityRoute(c, r)
	if err != nil {
		return releaseParts{}, err
	}
	if visibility != nil {
		parts.routes = append(parts.routes, *visibility)
		parts.apiServices = apiServices
	}
	return parts, nil
}

// serviceAccountToken asks the API server for a token of the chart's ServiceAccount, so the
// controller has the chart's permissions only.
func serviceAccountToken(c *apiClient, r release, sa string) (string, error) {
	request := map[string]any{
		"apiVersion": "authentication.k8s.io/v1",
		"kind":       "TokenRequest",
		"spec":       map[string]any{"expirationSeconds": 86400},
	}
	path := fmt.Sprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", r.namespace, sa)
	data, err := c.do(http.MethodPost, path, "application/json", request)
	if err != nil {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: %w", r.namespace, sa, err)
	}
	var answer struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &answer); err != nil || answer.Status.Token == "" {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: no token in the answer", r.namespace, sa)
	}
	return answer.Status.Token, nil
}

// writeServiceAccountKubeconfig writes a kubeconfig that uses the ServiceAccount's token.
func writeServiceAccountKubeconfig(l layout, p ports, r release, sa, token string) error {
	ca, err := os.ReadFile(l.pki("ca.crt"))
	if err != nil {
		return err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: %s
  user: {token: %q}
contexts:
- name: %s
  context: {cluster: local, user: %s, namespace: %s}
current-context: %s
`, p.server(), base64.StdEncoding.EncodeToString(ca), sa, token, sa, sa, r.namespace, sa)
	return os.WriteFile(l.deployed("kubeconfig"), []byte(kubeconfig), 0o600)
}

// healthPort is the port of the configuration's health.healthProbeBindAddress (Kueue's
// default :8081 when the file leaves it out).
func healthPort(configuration string) (int, error) {
	for _, line := range strings.Split(configuration, "\n") {
		trimmed := strings.TrimSpace(line)
		if value, ok := strings.CutPrefix(trimmed, "healthProbeBindAddress:"); ok {
			value = strings.Trim(strings.TrimSpace(value), `"'`)
			_, port, err := net.SplitHostPort(value)
			if err != nil {
				return 0, fmt.Errorf("healthProbeBindAddress %q: %w", value, err)
			}
			var n int
			if _, err := fmt.Sscan(port, &n); err != nil {
				return 0, fmt.Errorf("healthProbeBindAddress %q: %w", value, err)
			}
			return n, nil
		}
	}
	return 8081, nil
}

// hostAddress is this machine's first non-loopback IPv4 address: EndpointSlices may not name
// a loopback address, and the API server runs here too.
func hostAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
			return ipnet.IP.String(), nil
		}
	}
	return "", errors.New("no non-loopback IPv4 address on this machine for the webhook endpoint")
}
