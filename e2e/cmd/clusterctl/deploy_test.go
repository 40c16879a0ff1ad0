package main

import (
	"strings"
	"testing"
)

func TestHealthPortReadsTheConfigurationOrKueuesDefault(t *testing.T) {
	cases := []struct {
		config string
		want   int
	}{
		{"apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nhealth:\n  healthProbeBindAddress: :8081\n", 8081},
		{"kind: Configuration\nhealth:\n  healthProbeBindAddress: \"127.0.0.1:18081\"\n", 18081},
		{"kind: Configuration\n", 8081},
	}
	for _, c := range cases {
		got, err := healthPort(c.config)
		if err != nil || got != c.want {
			t.Errorf("healthPort(%q) = %d, %v; want %d", c.config, got, err, c.want)
		}
	}
	if _, err := healthPort("health:\n  healthProbeBindAddress: nonsense\n"); err == nil {
		t.Error("an address without a port is an error")
	}
}

func TestLocalArgsPointTheConfigurationAtTheLocalCopy(t *testing.T) {
	got := localArgs([]string{"controller", "--config=/controller_manager_config.yaml", "--feature-gates=PartialAdmission=false"}, "/state/config.yaml")
	want := []string{"controller", "--config=/state/config.yaml", "--feature-gates=PartialAdmission=false"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("localArgs = %q; want %q", got, want)
	}
	got = localArgs([]string{"controller", "--config", "/c.yaml"}, "/state/config.yaml")
	if strings.Join(got, " ") != "controller --config /state/config.yaml" {
		t.Errorf("localArgs with a separate value = %q", got)
	}
}
