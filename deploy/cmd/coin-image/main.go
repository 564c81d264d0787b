// coin-image builds COIN's container image without a Docker daemon (package image) from six
// static executables and writes it as an OCI image layout directory and, with -tar, as a
// docker-archive tarball (docker load, kind load image-archive, k3s ctr images import).
//
//	CGO_ENABLED=0 go build -trimpath -o bin/static/ ./cmd/...
//	cd deploy && go run ./cmd/coin-image -bin ../bin/static -oci ../bin/image -tar ../bin/coin-image.tar
//
// make image does both steps (docs/deploy.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cointoolkit/coin/deploy/image"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "coin-image:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("bin", "", "`DIR` holding the six static executables (required)")
	oci := flag.String("oci", "", "write an OCI image layout to `DIR` (replaced if it exists)")
	tarPath := flag.String("tar", "", "write a docker-archive tarball to `FILE`")
	tag := flag.String("tag", "cointoolkit/coin:dev", "image `NAME:TAG` written into the layout and the tarball")
	version := flag.String("version", "", "org.opencontainers.image.version label")
	arch := flag.String("arch", runtime.GOARCH, "architecture the executables were built for")
	flag.Parse()
	if *bin == "" || (*oci == "" && *tarPath == "") || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("-tag: %w", err)
	}
	// The full name as containerd and Docker spell it (docker.io, not index.docker.io).
	reg := ref.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	full := reg + "/" + ref.RepositoryStr() + ":" + ref.TagStr()
	img, err := image.Build(image.Options{BinDir: *bin, Version: *version, Created: time.Unix(0, 0)}, *arch)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if *oci != "" {
		if err := os.RemoveAll(*oci); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		p, err := layout.Write(*oci, empty.Index)
		if err != nil {
			return err
		}
		// ref.name is the tag (skopeo copy oci:DIR:dev), io.containerd.image.name the full name
		// (ctr images import of the layout).
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref.TagStr(), "io.containerd.image.name": full})); err != nil {
			return err
		}
		fmt.Printf("OCI layout %s: %s %s\n", *oci, full, digest)
	}
	if *tarPath != "" {
		if err := tarball.WriteToFile(*tarPath, ref, img); err != nil {
			return err
		}
		fmt.Printf("docker archive %s: %s %s\n", *tarPath, full, digest)
	}
	return nil
}
