package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// writeKubeconfigs writes the admin kubeconfig (the one `env` exports) and one per component,
// each with its certificates inline so that the file alone is enough to connect.
func writeKubeconfigs(l layout, server string) error {
	if err := writeKubeconfig(l.kubeconfig(), l, server, "admin"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.componentKubeconfig("x")), 0o700); err != nil {
		return err
	}
	for _, id := range clientIdentities {
		if id.file == "admin" {
			continue
		}
		if err := writeKubeconfig(l.componentKubeconfig(id.file), l, server, id.file); err != nil {
			return err
		}
	}
	return nil
}

func writeKubeconfig(path string, l layout, server, identity string) error {
	ca, err := readBase64(l.pki("ca.crt"))
	if err != nil {
		return err
	}
	cert, err := readBase64(l.pki(identity + ".crt"))
	if err != nil {
		return err
	}
	key, err := readBase64(l.pki(identity + ".key"))
	if err != nil {
		return err
	}
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kuota-e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: kuota-e2e
  context:
    cluster: kuota-e2e
    user: %s
current-context: kuota-e2e
`, server, ca, identity, cert, key, identity)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

func readBase64(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return base64.StdEncoding.EncodeToString(data), nil
}
