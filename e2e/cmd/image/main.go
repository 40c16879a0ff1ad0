// Command image writes kuota's container image without a container engine or a base image: one
// layer holding the statically linked executable, the same bytes (and digest) for the same
// executable, version, revision and SOURCE_DATE_EPOCH. scripts/image.sh builds the executable
// and runs it.
//
//	image --binary target/x86_64-unknown-linux-musl/release/kuota --version 0.1.0 \
//	      --layout out/oci [--tarball out/kuota.tar] [--repository ghcr.io/kuota/kuota]
//
// It prints the manifest's digest, the one a registry serves the image under when it is copied
// there unchanged (skopeo copy oci:out/oci docker://..., crane push out/oci ...).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("image", flag.ContinueOnError)
	binary := flags.String("binary", "", "the statically linked kuota executable")
	version := flags.String("version", "", "the version the image's tag and labels carry")
	revision := flags.String("revision", "", "the source revision (a label; optional)")
	repository := flags.String("repository", "ghcr.io/kuota/kuota", "the repository the image is tagged in")
	layoutDir := flags.String("layout", "", "write an OCI image layout into this folder (absent or empty)")
	tarballFile := flags.String("tarball", "", "also write a `docker load` archive to this file")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *version == "" || *layoutDir == "" {
		return errors.New("--binary, --version and --layout are required")
	}
	created, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	executable, err := os.ReadFile(*binary)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(*repository + ":" + *version)
	if err != nil {
		return fmt.Errorf("--repository %q with --version %q: %w", *repository, *version, err)
	}
	img, err := buildImage(spec{binary: executable, version: *version, revision: *revision, created: created})
	if err != nil {
		return err
	}
	if err := writeLayout(*layoutDir, img, ref); err != nil {
		return err
	}
	if *tarballFile != "" {
		if err := writeTarball(*tarballFile, img, ref); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, digest.String())
	return err
}

// sourceDate is the image's timestamp: SOURCE_DATE_EPOCH (seconds since the Unix epoch, as
// reproducible builds define it), or the epoch itself when it is unset.
func sourceDate(epoch string) (time.Time, error) {
	if epoch == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	seconds, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || seconds < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a count of seconds since the Unix epoch", epoch)
	}
	return time.Unix(seconds, 0).UTC(), nil
}
