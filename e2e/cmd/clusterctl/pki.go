package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

const frontProxyClientName = "front-proxy-client"

// clientIdentity is one client certificate the control plane's components and tests use.
type clientIdentity struct {
	file   string
	user   string
	groups []string
}

// The admin identity is in system:masters; the other components get the users the default RBAC
// bootstrap policy already binds, as in a kubeadm cluster.
var clientIdentities = []clientIdentity{
	{file: "admin", user: "kuota-e2e-admin", groups: []string{"system:masters"}},
	{file: "controller-manager", user: "system:kube-controller-manager"},
	{file: "scheduler", user: "system:kube-scheduler"},
	{file: "kwok", user: "kuota-e2e-kwok", groups: []string{"system:masters"}},
}

// certificateAuthority signs every certificate of one cluster; it lives as long as the state folder.
type certificateAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func writePKI(l layout) error {
	if err := os.MkdirAll(l.pki(""), 0o700); err != nil {
		return err
	}
	ca, err := newCA()
	if err != nil {
		return err
	}
	if err := writeCert(l.pki("ca"), ca.cert.Raw, ca.key); err != nil {
		return err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP(serviceClusterFirstIP)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := ca.issue(l.pki("apiserver"), serving); err != nil {
		return err
	}
	for _, id := range clientIdentities {
		client := &x509.Certificate{
			Subject:     pkix.Name{CommonName: id.user, Organization: id.groups},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := ca.issue(l.pki(id.file), client); err != nil {
			return err
		}
	}
	if err := writeFrontProxyPKI(l); err != nil {
		return err
	}
	return writeServiceAccountKey(l)
}

// writeFrontProxyPKI writes the separate CA and client certificate with which the API server's
// aggregation layer authenticates to extension API servers, as a kubeadm cluster has them.
func writeFrontProxyPKI(l layout) error {
	ca, err := newCA()
	if err != nil {
		return err
	}
	if err := writeCert(l.pki("front-proxy-ca"), ca.cert.Raw, ca.key); err != nil {
		return err
	}
	return ca.issue(l.pki("front-proxy-client"), &x509.Certificate{
		Subject:     pkix.Name{CommonName: frontProxyClientName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func newCA() (*certificateAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kuota-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certificateAuthority{cert: cert, key: key}, nil
}

// issue signs template with a fresh key and writes base.crt and base.key.
func (ca *certificateAuthority) issue(base string, template *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key for %s: %w", filepath.Base(base), err)
	}
	template.SerialNumber = serial()
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(30 * 24 * time.Hour)
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return fmt.Errorf("sign %s: %w", filepath.Base(base), err)
	}
	return writeCert(base, der, key)
}

func writeCert(base string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(base+".crt", "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(base+".key", "PRIVATE KEY", keyDER)
}

// writeServiceAccountKey writes the RSA key pair that signs and verifies service-account tokens.
func writeServiceAccountKey(l layout) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(l.pki("sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	return writePEM(l.pki("sa.pub"), "PUBLIC KEY", pub)
}

func writePEM(path, kind string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		// crypto/rand does not fail on Linux; a constant serial would still be valid for one CA.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
