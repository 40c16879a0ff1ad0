package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func archive(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range entries {
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ociLayout writes an image of one layer (layerTar) with the given User into a new OCI layout.
func ociLayout(t *testing.T, layerTar []byte, user string) (string, v1.Image) {
	t.Helper()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		RootFS: v1.RootFS{Type: "layers"},
		Config: v1.Config{Entrypoint: []string{"/kuota"}, User: user, Env: []string{"FROM_IMAGE=1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := ocilayout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	return dir, img
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unpacking an image gives its files their owners, which needs root")
	}
}

func TestUnpackImageGivesTheFilesTheirModesAndOwners(t *testing.T) {
	needRoot(t)
	dir, img := ociLayout(t, archive(t,
		&tar.Header{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: "kuota", Mode: 0o755, Uid: 65532, Gid: 65532, Size: 5},
	), "65532:65533")
	root := filepath.Join(t.TempDir(), "rootfs")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "stale"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := unpackImage(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	if got.digest != digest.String() || got.uid != 65532 || got.gid != 65533 ||
		strings.Join(got.entrypoint, " ") != "/kuota" || strings.Join(got.env, " ") != "FROM_IMAGE=1" {
		t.Errorf("unpacked %+v; want digest %s, user 65532:65533, entrypoint /kuota", got, digest)
	}
	info, err := os.Stat(filepath.Join(root, "kuota"))
	if err != nil {
		t.Fatal(err)
	}
	owner := info.Sys().(*syscall.Stat_t)
	if info.Mode().Perm() != 0o755 || owner.Uid != 65532 || owner.Gid != 65532 || info.Size() != 5 {
		t.Errorf("/kuota unpacked with mode %o owner %d:%d size %d", info.Mode().Perm(), owner.Uid, owner.Gid, info.Size())
	}
	if dirInfo, err := os.Stat(filepath.Join(root, "etc")); err != nil || !dirInfo.IsDir() {
		t.Errorf("/etc not unpacked as a folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "stale")); !os.IsNotExist(err) {
		t.Error("a file left in the root before unpacking survived it")
	}
}

func TestUnpackImageRefusesADamagedLayer(t *testing.T) {
	needRoot(t)
	dir, img := ociLayout(t, archive(t,
		&tar.Header{Typeflag: tar.TypeReg, Name: "kuota", Mode: 0o755, Size: 64},
	), "65532")
	layers, _ := img.Layers()
	layerDigest, _ := layers[0].Digest()
	blob := filepath.Join(dir, "blobs", layerDigest.Algorithm, layerDigest.Hex)
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = unpackImage(dir, filepath.Join(t.TempDir(), "rootfs"))
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a layer that does not match its digest: %v, want a refusal", err)
	}
}

func TestUntarRefusesPathsLeavingTheRootAndLinks(t *testing.T) {
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeReg, Name: "../escape", Mode: 0o644},
		{Typeflag: tar.TypeReg, Name: "bin/../../escape", Mode: 0o644},
		{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "/etc/passwd", Mode: 0o777},
	} {
		root := t.TempDir()
		if err := untar(bytes.NewReader(archive(t, h)), root); err == nil || !strings.Contains(err.Error(), h.Name) {
			t.Errorf("entry %q (type %q): %v, want a refusal naming it", h.Name, h.Typeflag, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(root), "escape")); err == nil {
			t.Errorf("entry %q wrote outside the root", h.Name)
		}
	}
}

func TestNumericUserIsANonRootUidAndGroup(t *testing.T) {
	for user, want := range map[string][2]uint32{"65532:65532": {65532, 65532}, "1000": {1000, 1000}, "1000:0": {1000, 0}} {
		uid, gid, err := numericUser(user)
		if err != nil || uid != want[0] || gid != want[1] {
			t.Errorf("numericUser(%q) = %d, %d, %v; want %v", user, uid, gid, err, want)
		}
	}
	for _, user := range []string{"", "nonroot", "0", "0:0", "65532:nonroot"} {
		if _, _, err := numericUser(user); err == nil {
			t.Errorf("numericUser(%q) accepted", user)
		}
	}
}

func TestConfigPathIsTheContainersConfigArgument(t *testing.T) {
	if got := configPath([]string{"controller", "--config=/controller_manager_config.yaml"}); got != "/controller_manager_config.yaml" {
		t.Errorf("--config=: %q", got)
	}
	if got := configPath([]string{"controller", "--config", "/c.yaml", "--feature-gates=A=true"}); got != "/c.yaml" {
		t.Errorf("--config VALUE: %q", got)
	}
	if got := configPath([]string{"controller"}); got != "" {
		t.Errorf("no --config: %q", got)
	}
}
