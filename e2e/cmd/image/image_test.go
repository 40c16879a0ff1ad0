package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// executable is a minimal linux/amd64 ELF file: a header and one loadable segment, which carries
// payload; with a non-empty interp it also names that program interpreter, as a dynamically
// linked executable does.
func executable(payload, interp string) []byte {
	progs := []elf.Prog64{{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Align: 0x1000}}
	if interp != "" {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Align: 1})
	}
	headerSize := uint64(binary.Size(elf.Header64{}) + len(progs)*binary.Size(elf.Prog64{}))
	size := headerSize + uint64(len(payload)+len(interp)+1)
	progs[0].Filesz, progs[0].Memsz = size, size
	if interp != "" {
		progs[1].Off = headerSize + uint64(len(payload))
		progs[1].Filesz = uint64(len(interp) + 1)
		progs[1].Memsz = progs[1].Filesz
	}
	header := elf.Header64{
		Ident:     [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)},
		Type:      uint16(elf.ET_DYN),
		Machine:   uint16(elf.EM_X86_64),
		Version:   uint32(elf.EV_CURRENT),
		Phoff:     uint64(binary.Size(elf.Header64{})),
		Ehsize:    uint16(binary.Size(elf.Header64{})),
		Phentsize: uint16(binary.Size(elf.Prog64{})),
		Phnum:     uint16(len(progs)),
	}
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, header)
	_ = binary.Write(&buf, binary.LittleEndian, progs)
	buf.WriteString(payload)
	buf.WriteString(interp)
	buf.WriteByte(0)
	return buf.Bytes()
}

// build runs the command on an executable holding content, in a new folder, and returns the
// digest it printed and the folder (oci/ and kuota.tar inside).
func build(t *testing.T, content, epoch string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	binary := filepath.Join(dir, "kuota")
	if err := os.WriteFile(binary, executable(content, ""), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", epoch)
	var out bytes.Buffer
	err := run([]string{
		"--binary", binary, "--version", "1.2.3", "--revision", "abc123",
		"--layout", filepath.Join(dir, "oci"), "--tarball", filepath.Join(dir, "kuota.tar"),
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), dir
}

// files are a folder's files by relative path.
func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	all := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		all[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func TestTheSameExecutableGivesTheSameBytesAndDigest(t *testing.T) {
	first, a := build(t, "kuota executable", "1700000000")
	second, b := build(t, "kuota executable", "1700000000")
	if !strings.HasPrefix(first, "sha256:") || len(first) != len("sha256:")+64 {
		t.Fatalf("printed %q, want a sha256 digest", first)
	}
	if first != second {
		t.Fatalf("two builds of one executable: digests %s and %s", first, second)
	}
	fa, fb := files(t, filepath.Join(a, "oci")), files(t, filepath.Join(b, "oci"))
	if len(fa) != len(fb) {
		t.Fatalf("layouts hold %d and %d files", len(fa), len(fb))
	}
	for path, data := range fa {
		if !bytes.Equal(data, fb[path]) {
			t.Errorf("%s differs between two builds of one executable", path)
		}
	}
	ta, _ := os.ReadFile(filepath.Join(a, "kuota.tar"))
	tb, _ := os.ReadFile(filepath.Join(b, "kuota.tar"))
	if len(ta) == 0 || !bytes.Equal(ta, tb) {
		t.Error("the docker archives of two builds of one executable differ")
	}

	if other, _ := build(t, "another executable", "1700000000"); other == first {
		t.Error("another executable gave the same digest")
	}
	if later, _ := build(t, "kuota executable", "1800000000"); later == first {
		t.Error("another SOURCE_DATE_EPOCH gave the same digest")
	}
}

func TestTheImageRunsTheExecutableAsTheNonRootUser(t *testing.T) {
	digest, dir := build(t, "kuota executable", "1700000000")
	path, err := layout.FromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	index, err := path.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 1 {
		t.Fatalf("the layout lists %d images, want 1", len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	if desc.Digest.String() != digest || desc.MediaType != types.OCIManifestSchema1 {
		t.Errorf("the layout lists %s (%s); printed %s", desc.Digest, desc.MediaType, digest)
	}
	if got := desc.Annotations["org.opencontainers.image.ref.name"]; got != "1.2.3" {
		t.Errorf("ref.name annotation %q, want the version", got)
	}
	img, err := path.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image fails validation: %v", err)
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(1700000000, 0).UTC()
	c := cfg.Config
	if strings.Join(c.Entrypoint, " ") != "/kuota" || strings.Join(c.Cmd, " ") != "controller" {
		t.Errorf("entrypoint %q, cmd %q; want [/kuota] [controller]", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.version":  "1.2.3",
		"org.opencontainers.image.revision": "abc123",
		"org.opencontainers.image.title":    "kuota",
		"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
	} {
		if c.Labels[label] != want {
			t.Errorf("label %s = %q, want %q", label, c.Labels[label], want)
		}
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || !cfg.Created.Time.Equal(created) {
		t.Errorf("platform %s/%s created %s", cfg.OS, cfg.Architecture, cfg.Created.Time)
	}
	if len(cfg.History) != 1 || !cfg.History[0].Created.Time.Equal(created) {
		t.Errorf("history %+v, want one entry created at SOURCE_DATE_EPOCH", cfg.History)
	}

	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want one", len(layers), err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
	entries := layerEntries(t, layers[0])
	if len(entries) != 1 {
		t.Fatalf("the layer holds %d entries, want /kuota alone", len(entries))
	}
	h := entries[0]
	if h.Name != "kuota" || h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 65532 || h.Gid != 65532 {
		t.Errorf("layer entry %s type %c mode %o owner %d:%d; want kuota, a file, 0755, 65532:65532",
			h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid)
	}
	if !h.ModTime.Equal(created) || !bytes.Equal(h.content, executable("kuota executable", "")) {
		t.Errorf("layer entry modified %s holding %q", h.ModTime, h.content)
	}

	// The docker archive holds the same image under the tag.
	tag, _ := name.NewTag("ghcr.io/kuota/kuota:1.2.3")
	loaded, err := tarball.ImageFromPath(filepath.Join(dir, "kuota.tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.ConfigName()
	if got, _ := loaded.ConfigName(); got != want {
		t.Errorf("the docker archive's config is %s, the layout's %s", got, want)
	}
}

type entry struct {
	*tar.Header
	content []byte
}

func layerEntries(t *testing.T, layer v1.Layer) []entry {
	t.Helper()
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var entries []entry
	r := tar.NewReader(rc)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, entry{h, content})
	}
}

func TestOnlyAStaticLinuxAmd64ExecutableIsTakenIn(t *testing.T) {
	if err := checkStatic(executable("static", "")); err != nil {
		t.Fatalf("a static executable is refused: %v", err)
	}
	dynamic := executable("dynamic", "/lib64/ld-linux-x86-64.so.2")
	if err := checkStatic(dynamic); err == nil || !strings.Contains(err.Error(), "/lib64/ld-linux-x86-64.so.2") {
		t.Errorf("a dynamically linked executable: %v, want a refusal naming its loader", err)
	}
	if _, err := buildImage(spec{binary: dynamic, version: "1"}); err == nil {
		t.Error("an image was built around a dynamically linked executable")
	}
	arm := executable("arm", "")
	arm[18] = byte(elf.EM_AARCH64)
	if err := checkStatic(arm); err == nil || !strings.Contains(err.Error(), "EM_AARCH64") {
		t.Errorf("an arm64 executable: %v, want a refusal naming its machine", err)
	}
	if err := checkStatic([]byte("#!/bin/sh\n")); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("a script: %v, want a refusal", err)
	}
}

func TestSourceDateEpochMustBeSeconds(t *testing.T) {
	if got, err := sourceDate(""); err != nil || !got.Equal(time.Unix(0, 0)) {
		t.Errorf("unset: %s, %v; want the epoch", got, err)
	}
	for _, bad := range []string{"yesterday", "-5", "1.5"} {
		if _, err := sourceDate(bad); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
			t.Errorf("SOURCE_DATE_EPOCH=%s: error %v, want one naming the variable", bad, err)
		}
	}
}
