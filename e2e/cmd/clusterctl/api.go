package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// apiClient is a minimal REST client for the few calls the cluster tool makes itself.
type apiClient struct {
	server string
	http   *http.Client
}

func newAdminClient(l layout, server string) (*apiClient, error) {
	cert, err := tls.LoadX509KeyPair(l.pki("admin.crt"), l.pki("admin.key"))
	if err != nil {
		return nil, fmt.Errorf("load admin certificate: %w", err)
	}
	caPEM, err := os.ReadFile(l.pki("ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", l.pki("ca.crt"))
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}}
	return &apiClient{server: server, http: &http.Client{Transport: transport, Timeout: 15 * time.Second}}, nil
}

// apiError is a non-2xx answer, kept with the server's message.
type apiError struct {
	method, path string
	code         int
	message      string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.method, e.path, e.code, e.message)
}

func (c *apiClient) do(method, path, contentType string, body any) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.server+path, reader)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var status struct {
			Message string `json:"message"`
		}
		msg := string(data)
		if json.Unmarshal(data, &status) == nil && status.Message != "" {
			msg = status.Message
		}
		return nil, &apiError{method: method, path: path, code: resp.StatusCode, message: msg}
	}
	return data, nil
}

func (c *apiClient) get(path string, out any) error {
	data, err := c.do(http.MethodGet, path, "", nil)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func (c *apiClient) create(path string, obj any) error {
	_, err := c.do(http.MethodPost, path, "application/json", obj)
	return err
}

func (c *apiClient) mergePatch(path string, patch any) error {
	_, err := c.do(http.MethodPatch, path, "application/merge-patch+json", patch)
	return err
}

func (c *apiClient) strategicPatch(path string, patch any) error {
	_, err := c.do(http.MethodPatch, path, "application/strategic-merge-patch+json", patch)
	return err
}

func (c *apiClient) delete(path string) error {
	_, err := c.do(http.MethodDelete, path, "", nil)
	return err
}

func isNotFound(err error) bool {
	e, ok := err.(*apiError)
	return ok && e.code == http.StatusNotFound
}

func isConflictOrExists(err error) bool {
	e, ok := err.(*apiError)
	return ok && e.code == http.StatusConflict
}
