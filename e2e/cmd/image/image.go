package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's one file and its owner: distroless's "nonroot" user by number, so the chart's
// `runAsNonRoot` holds without a passwd file to look the name up in.
const (
	entrypoint = "/kuota"
	nonRoot    = 65532
)

// spec is everything the image is made of: the same spec gives the same bytes, and so the same
// digest.
type spec struct {
	// The statically linked kuota executable.
	binary []byte
	// The version the labels carry (Cargo's package version).
	version string
	// The source revision the binary was built from; empty leaves its label out.
	revision string
	// The one timestamp in the image: the config's and the history's creation time and the
	// file's modification time (SOURCE_DATE_EPOCH, or the Unix epoch).
	created time.Time
}

// buildImage is an OCI image with no base: one layer holding /kuota, owned by the non-root user
// it runs as.
func buildImage(s spec) (v1.Image, error) {
	if err := checkStatic(s.binary); err != nil {
		return nil, err
	}
	created := s.created.UTC()
	layerBytes, err := layerTar(s.binary, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerBytes)), nil },
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.BestCompression),
	)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":    "kuota",
		"org.opencontainers.image.version":  s.version,
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if s.revision != "" {
		labels["org.opencontainers.image.revision"] = s.revision
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{entrypoint},
			Cmd:        []string{"controller"},
			User:       fmt.Sprintf("%d:%d", nonRoot, nonRoot),
			WorkingDir: "/",
			Labels:     labels,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "kuota " + s.version + ": the static executable as " + entrypoint,
		},
	})
}

// checkStatic refuses an executable the image could not run: one for another machine, or one
// that names a program interpreter (the dynamic loader), since the image has no loader or libc.
func checkStatic(binary []byte) error {
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		return fmt.Errorf("the executable is not an ELF file: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("the executable is a %s %s %s file, the image is for linux/amd64", f.Class, f.Machine, f.Type)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(prog.Open())
			return fmt.Errorf("the executable is dynamically linked (its loader is %s): the image has no loader or libc; build it for x86_64-unknown-linux-musl",
				strings.TrimRight(string(interp), "\x00"))
		}
	}
	return nil
}

// layerTar is the layer's uncompressed archive: the executable alone, 0755, owned by the
// non-root user, with the image's one timestamp.
func layerTar(binary []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	header := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     entrypoint[1:],
		Mode:     0o755,
		Uid:      nonRoot,
		Gid:      nonRoot,
		Size:     int64(len(binary)),
		ModTime:  created,
		Format:   tar.FormatPAX,
	}
	if err := w.WriteHeader(header); err != nil {
		return nil, err
	}
	if _, err := w.Write(binary); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLayout writes the image as an OCI image layout in dir, which must be absent or empty,
// its index naming the image by ref (the `org.opencontainers.image.ref.name` annotation, as
// skopeo and crane read it).
func writeLayout(dir string, img v1.Image, ref name.Tag) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: an OCI layout is written into an empty folder", dir)
	}
	path, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return path.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(),
		"io.containerd.image.name":          ref.Name(),
	}))
}

// writeTarball writes the image as `docker load` reads it, tagged ref.
func writeTarball(file string, img v1.Image, ref name.Tag) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(file, ref, img)
}
