package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// Where a pod finds its ServiceAccount's token and the cluster's CA (what kube-rs's in-cluster
// configuration reads).
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// unpackedImage is an image's root filesystem on this machine and what its config says to run.
type unpackedImage struct {
	digest     string
	root       string
	entrypoint []string
	env        []string
	uid, gid   uint32
}

// unpackImage reads the one image of the OCI layout in dir, checks every blob against its
// digest, and unpacks its layers into root (emptied first).
// Needs root, to give each file its owner.
func unpackImage(dir, root string) (unpackedImage, error) {
	if os.Geteuid() != 0 {
		return unpackedImage{}, errors.New("KUOTA_IMAGE needs root: the image's files keep their owners, and its entrypoint runs chrooted into them as the image's user")
	}
	p, err := ocilayout.FromPath(dir)
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: %w", dir, err)
	}
	index, err := p.ImageIndex()
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: %w", dir, err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: %w", dir, err)
	}
	if len(manifest.Manifests) != 1 {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: the layout lists %d images, want one", dir, len(manifest.Manifests))
	}
	digest := manifest.Manifests[0].Digest
	img, err := p.Image(digest)
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: image %s: %w", dir, digest, err)
	}
	if err := validate.Image(img); err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: image %s is damaged: %w", dir, digest, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: %w", dir, err)
	}
	if len(cfg.Config.Entrypoint) == 0 {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: the image's config has no Entrypoint", dir)
	}
	uid, gid, err := numericUser(cfg.Config.User)
	if err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: %w", dir, err)
	}
	if err := os.RemoveAll(root); err != nil {
		return unpackedImage{}, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return unpackedImage{}, err
	}
	flat := mutate.Extract(img)
	defer flat.Close()
	if err := untar(flat, root); err != nil {
		return unpackedImage{}, fmt.Errorf("KUOTA_IMAGE %s: unpacking into %s: %w", dir, root, err)
	}
	return unpackedImage{
		digest:     digest.String(),
		root:       root,
		entrypoint: cfg.Config.Entrypoint,
		env:        cfg.Config.Env,
		uid:        uid,
		gid:        gid,
	}, nil
}

// numericUser reads an image config's User as "uid:gid" numbers: the image has no passwd file
// to look a name up in, and the chart's runAsNonRoot needs a number.
func numericUser(user string) (uint32, uint32, error) {
	uidText, gidText, _ := strings.Cut(user, ":")
	uid, err := strconv.ParseUint(uidText, 10, 32)
	if err != nil || uid == 0 {
		return 0, 0, fmt.Errorf("the image's User %q is not a non-root uid[:gid] by number", user)
	}
	gid := uid
	if gidText != "" {
		if gid, err = strconv.ParseUint(gidText, 10, 32); err != nil {
			return 0, 0, fmt.Errorf("the image's User %q: group %q is not a number", user, gidText)
		}
	}
	return uint32(uid), uint32(gid), nil
}

// untar writes a flattened image's files and folders under root with their modes and owners;
// any other kind of entry, or a path leaving root, is refused.
func untar(r io.Reader, root string) error {
	archive := tar.NewReader(r)
	for {
		h, err := archive.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, part := range strings.Split(h.Name, "/") {
			if part == ".." {
				return fmt.Errorf("entry %q: a path leaving the image's root", h.Name)
			}
		}
		target := filepath.Join(root, path.Clean("/"+h.Name))
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, archive)
			if closeErr := f.Close(); err == nil {
				err = closeErr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: type %q is not unpacked here", h.Name, h.Typeflag)
		}
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
			return err
		}
	}
}

// startImage runs the image's entrypoint as the kubelet would run the chart's container: chrooted
// into the unpacked root, as the image's user, with the container's arguments, the chart's
// configuration file where the chart mounts it, the ServiceAccount's token and the cluster's CA
// where a pod finds them, and the API server named by KUBERNETES_SERVICE_HOST and _PORT, so kuota
// takes kube-rs's in-cluster configuration and reads nothing else from this machine.
func startImage(l layout, img unpackedImage, parts releaseParts, r release, env []string, token string, p ports) (*component, error) {
	config := configPath(parts.args)
	if config == "" {
		return nil, errors.New("the chart's container arguments name no --config file")
	}
	ca, err := os.ReadFile(l.pki("ca.crt"))
	if err != nil {
		return nil, err
	}
	files := []struct {
		path    string
		content string
		mode    os.FileMode
	}{
		{config, parts.configuration, 0o644},
		{path.Join(serviceAccountDir, "ca.crt"), string(ca), 0o644},
		{path.Join(serviceAccountDir, "namespace"), r.namespace, 0o644},
		{path.Join(serviceAccountDir, "token"), token, 0o600},
	}
	for _, f := range files {
		target := filepath.Join(img.root, f.path)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(target, []byte(f.content), f.mode); err != nil {
			return nil, err
		}
		if err := os.Chown(target, int(img.uid), int(img.gid)); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(img.entrypoint[0], append(img.entrypoint[1:], parts.args...)...)
	cmd.Dir = "/"
	cmd.Env = append(append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/",
		"KUBERNETES_SERVICE_HOST=127.0.0.1",
		fmt.Sprintf("KUBERNETES_SERVICE_PORT=%d", p.APIServer),
	}, img.env...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     img.root,
		Credential: &syscall.Credential{Uid: img.uid, Gid: img.gid, Groups: []uint32{}},
	}
	return launchCommand(l, deployedName, deployedName, filepath.Join(img.root, img.entrypoint[0]), cmd, os.O_TRUNC)
}

// configPath is the file the container's --config argument names.
func configPath(args []string) string {
	for i, arg := range args {
		if value, ok := strings.CutPrefix(arg, "--config="); ok {
			return value
		}
		if arg == "--config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
