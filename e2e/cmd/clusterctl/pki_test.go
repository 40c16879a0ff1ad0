package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

func TestPKIServesLoopbackAndIdentifiesClients(t *testing.T) {
	l := layout{state: t.TempDir()}
	if err := writePKI(l); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(l.pki("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)

	serving, err := tls.LoadX509KeyPair(l.pki("apiserver.crt"), l.pki("apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(serving.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving certificate not valid for %s: %v", host, err)
		}
	}

	admin, err := tls.LoadX509KeyPair(l.pki("admin.crt"), l.pki("admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	adminLeaf, err := x509.ParseCertificate(admin.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := adminLeaf.Verify(opts); err != nil {
		t.Errorf("admin certificate is not a client certificate of the CA: %v", err)
	}
	if len(adminLeaf.Subject.Organization) != 1 || adminLeaf.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin groups = %v, want system:masters", adminLeaf.Subject.Organization)
	}
	if _, err := os.Stat(l.pki("sa.key")); err != nil {
		t.Errorf("no service-account signing key: %v", err)
	}
}
