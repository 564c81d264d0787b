// Package image builds COIN's OCI container image without a Docker daemon, with
// go-containerregistry: a scratch image of two layers, the root filesystem skeleton
// (rootfs/: /etc/passwd and /etc/group naming the non-root user, /etc/coin/coin.conf, an empty
// /data owned by that user) and the six static executables in /usr/local/bin.
//
// deploy/Dockerfile builds the same image for people with Docker; the constants below are
// what both say (user, paths, ports, entrypoint), and a test holds the Dockerfile to them.
package image

import (
	"archive/tar"
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is; deploy/Dockerfile says the same (TestDockerfileMatchesBuilder).
const (
	// UID and GID of the user "coin" every process of the image runs as.
	UID = 10001
	GID = 10001
	// BinDir holds the executables.
	BinDir = "/usr/local/bin"
	// DataDir is the volume of the chain data (one directory per network, see ConfPath).
	DataDir = "/data"
	// ConfPath is the configuration file every tool is given with --conf.
	ConfPath = "/etc/coin/coin.conf"
)

// Tools are the executables the image holds, the six of cmd/.
var Tools = []string{"coin-node", "coin-cli", "coin-miner", "coin-wallet", "coin-faucetd", "coin-faucet"}

// Ports the image exposes: P2P and RPC of mainnet, testnet and regtest (lib/params), the
// metrics port the chart gives --metrics-bind, and coin-faucetd's page.
var Ports = []string{"18332/tcp", "18333/tcp", "28332/tcp", "28333/tcp", "38332/tcp", "38333/tcp", "9332/tcp", "8080/tcp"}

// Entrypoint and Cmd: a bare `docker run IMAGE` starts a mainnet node with the image's
// configuration; any other tool is `--entrypoint coin-cli` (or the chart's command).
var (
	Entrypoint = []string{BinDir + "/coin-node"}
	Cmd        = []string{"--conf", ConfPath}
	Env        = []string{"PATH=" + BinDir, "HOME=" + DataDir}
)

// rootfs is the skeleton copied to / (the Dockerfile COPYs the same directory).
//
//go:embed rootfs
var rootfs embed.FS

// Options say what goes into the image.
type Options struct {
	// BinDir holds the six static executables (CGO_ENABLED=0 go build -trimpath).
	BinDir string
	// Version is the image's org.opencontainers.image.version label ("" leaves it out).
	Version string
	// Created is the time written into the image and its files; the zero time (1970) makes
	// the image reproducible: the same executables give the same digest.
	Created time.Time
}

// Build assembles the image for linux/amd64 or the GOARCH the executables were built for
// (arch).
func Build(o Options, arch string) (v1.Image, error) {
	skel, err := skeletonLayer(o.Created)
	if err != nil {
		return nil, err
	}
	bins, err := binariesLayer(o.BinDir, o.Created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, skel, bins)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: o.Created.UTC()}
	cf.Config.User = strconv.Itoa(UID) + ":" + strconv.Itoa(GID)
	cf.Config.Entrypoint = Entrypoint
	cf.Config.Cmd = Cmd
	cf.Config.Env = Env
	cf.Config.WorkingDir = DataDir
	cf.Config.Volumes = map[string]struct{}{DataDir: {}}
	cf.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range Ports {
		cf.Config.ExposedPorts[p] = struct{}{}
	}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "coin",
		"org.opencontainers.image.description": "COIN toolkit: coin-node, coin-cli, coin-miner, coin-wallet, coin-faucetd, coin-faucet",
		"org.opencontainers.image.source":      "https://github.com/cointoolkit/coin",
	}
	if o.Version != "" {
		cf.Config.Labels["org.opencontainers.image.version"] = o.Version
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// entry is one file or directory of a layer.
type entry struct {
	name     string // without leading slash
	mode     int64
	uid, gid int
	data     []byte // nil for a directory
}

// skeletonLayer holds rootfs/ (owned by root, read-only to the user) and /data (owned by the
// user, the only place it writes).
func skeletonLayer(created time.Time) (v1.Layer, error) {
	var es []entry
	err := fs.WalkDir(rootfs, "rootfs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "rootfs" {
			return err
		}
		name := p[len("rootfs/"):]
		if d.IsDir() {
			es = append(es, entry{name: name, mode: 0o755})
			return nil
		}
		b, err := rootfs.ReadFile(p)
		if err != nil {
			return err
		}
		es = append(es, entry{name: name, mode: 0o644, data: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	es = append(es, entry{name: DataDir[1:], mode: 0o755, uid: UID, gid: GID})
	return layer(es, created)
}

// binariesLayer holds the executables of dir in BinDir.
func binariesLayer(dir string, created time.Time) (v1.Layer, error) {
	es := []entry{{name: "usr", mode: 0o755}, {name: "usr/local", mode: 0o755}, {name: BinDir[1:], mode: 0o755}}
	for _, t := range Tools {
		b, err := os.ReadFile(filepath.Join(dir, t))
		if err != nil {
			return nil, fmt.Errorf("executable %s: %w (build them with CGO_ENABLED=0 go build -trimpath)", t, err)
		}
		es = append(es, entry{name: path.Join(BinDir[1:], t), mode: 0o755, data: b})
	}
	return layer(es, created)
}

// layer writes es as an uncompressed tar (parents before children) and makes an OCI layer of
// it (gzip-compressed by go-containerregistry).
func layer(es []entry, created time.Time) (v1.Layer, error) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].name < es[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: created.UTC(), Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
		tarball.WithMediaType(types.OCILayer))
}
