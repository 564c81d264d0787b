package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestImageStartsNode builds the image from freshly built static executables, writes it as an
// OCI layout and reads it back, unpacks its layers into a root filesystem and runs from it,
// in a mount and PID namespace (unshare) under chroot as the image's user: coin-node
// --version, a regtest node, and coin-cli asking that node getblockcount over loopback. The
// image is proven to start, not only to build.
func TestImageStartsNode(t *testing.T) {
	unshare := needNamespaces(t)
	root := unpack(t, buildLayout(t))

	// The user exists and owns /data; everything else is root's.
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), fmt.Sprintf("coin:x:%d:%d:", UID, GID)) {
		t.Fatalf("/etc/passwd has no coin user %d: %q %v", UID, passwd, err)
	}
	if st := statOwner(t, filepath.Join(root, DataDir)); st != [2]int{UID, GID} {
		t.Fatalf("/data owned by %v, want %d:%d", st, UID, GID)
	}
	if st := statOwner(t, filepath.Join(root, BinDir, "coin-node")); st != [2]int{0, 0} {
		t.Fatalf("coin-node owned by %v, want root", st)
	}
	if _, err := os.Stat(filepath.Join(root, ConfPath)); err != nil {
		t.Fatalf("no %s in the image: %v", ConfPath, err)
	}

	// --version (or, in a build whose coin-node has no --version, --help: either way the
	// executable starts in the image's filesystem and prints its name).
	out, err := inImage(unshare, root, "coin-node", "--version").CombinedOutput()
	if err != nil {
		if !strings.Contains(string(out), "--version") {
			t.Fatalf("coin-node --version in the image: %v\n%s", err, out)
		}
		t.Logf("coin-node --version: %v: %s (this build has no --version; trying --help)", err, out)
		if out, err = inImage(unshare, root, "coin-node", "--help").CombinedOutput(); err != nil {
			t.Fatalf("coin-node --help in the image: %v\n%s", err, out)
		}
	}
	if !strings.Contains(string(out), "coin-node") {
		t.Fatalf("coin-node in the image printed %q", out)
	}

	// A regtest node from the image, its RPC on loopback (unshare without --net keeps the
	// host's network namespace, so the test reaches it).
	var node *exec.Cmd
	var log *syncBuffer
	var rpcPort int
	for attempt := 0; ; attempt++ {
		rpcPort = freePort(t)
		node = inImage(unshare, root, "coin-node", "--network", "regtest", "--data-dir", DataDir+"/regtest",
			"--rpc-bind", "127.0.0.1:"+strconv.Itoa(rpcPort), "--p2p-port", strconv.Itoa(freePort(t)))
		log = &syncBuffer{}
		node.Stdout, node.Stderr = log, log
		node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- node.Wait() }()
		count, err := waitCount(rpcPort, exited)
		if err == nil {
			if count != 0 {
				t.Fatalf("a fresh regtest node has %d blocks", count)
			}
			t.Cleanup(func() { stopNode(t, rpcPort, node, exited) })
			break
		}
		if attempt < 3 && strings.Contains(log.String(), "address already in use") {
			continue // a port drawn by freePort was taken before the node bound it
		}
		_ = syscall.Kill(-node.Process.Pid, syscall.SIGKILL)
		t.Fatalf("node from the image: %v\n%s", err, log.String())
	}

	// The image's coin-cli talks to the node too.
	out, err = inImage(unshare, root, "coin-cli", "--network", "regtest",
		"--rpc", "http://127.0.0.1:"+strconv.Itoa(rpcPort), "getblockcount").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("coin-cli getblockcount in the image: %v %q", err, out)
	}
	// The node wrote its chain under /data as the image's user.
	if st := statOwner(t, filepath.Join(root, DataDir, "regtest")); st != [2]int{UID, GID} {
		t.Fatalf("/data/regtest owned by %v, want %d:%d", st, UID, GID)
	}
}

// TestImageConfig checks the image's configuration: user, entrypoint, volume, ports, and that
// the same executables give the same digest (the build is reproducible).
func TestImageConfig(t *testing.T) {
	bin := staticBinaries(t)
	a, err := Build(Options{BinDir: bin, Created: time.Unix(0, 0)}, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(Options{BinDir: bin, Created: time.Unix(0, 0)}, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("two builds of the same executables: %s and %s", da, db)
	}
	cf, err := a.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "10001:10001" || c.WorkingDir != "/data" || len(c.Volumes) != 1 || c.Entrypoint[0] != "/usr/local/bin/coin-node" ||
		strings.Join(c.Cmd, " ") != "--conf /etc/coin/coin.conf" || cf.OS != "linux" {
		t.Fatalf("image config: %+v", c)
	}
	for _, p := range []string{"18333/tcp", "28333/tcp", "38333/tcp", "38332/tcp", "9332/tcp", "8080/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	if _, err := Build(Options{BinDir: t.TempDir()}, runtime.GOARCH); err == nil {
		t.Fatal("Build without executables succeeded")
	}
}

// needNamespaces skips unless the test can make namespaces (root, util-linux unshare and
// chroot) and returns unshare's path.
func needNamespaces(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("namespaces are Linux's")
	}
	if os.Geteuid() != 0 {
		t.Skip("unshare and chroot need root (run the deploy tests as root to start the image)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux) on PATH")
	}
	if chrootPath, err = exec.LookPath("chroot"); err != nil {
		t.Skip("no chroot on PATH")
	}
	if out, err := exec.Command(unshare, "--mount", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare --mount --pid fails here (a container without CAP_SYS_ADMIN?): %v %s", err, out)
	}
	return unshare
}

// chrootPath is chroot's path on the host (the tools run with the image's PATH).
var chrootPath string

// inImage runs tool of the image's BinDir inside a new mount and PID namespace, chrooted to
// root, as the image's user. --kill-child ends the tool when unshare is killed.
func inImage(unshare, root, tool string, args ...string) *exec.Cmd {
	a := []string{"--mount", "--pid", "--fork", "--kill-child=SIGTERM", chrootPath,
		fmt.Sprintf("--userspec=%d:%d", UID, GID), root, filepath.Join(BinDir, tool)}
	cmd := exec.Command(unshare, append(a, args...)...)
	cmd.Env = append(Env, "COIN_NO_COLOR=1")
	return cmd
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// staticBinaries builds the six executables as make image does (CGO_ENABLED=0, -trimpath),
// once per test binary; COIN_IMAGE_BIN names a directory built already instead.
func staticBinaries(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("COIN_IMAGE_BIN"); d != "" {
		return d
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "coin-image-bin-")
		if binErr != nil {
			return
		}
		args := []string{"build", "-trimpath", "-o", binDir + string(filepath.Separator)}
		for _, tool := range Tools {
			args = append(args, "./cmd/"+tool)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = filepath.Join("..", "..") // the main module
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildLayout builds the image, writes it as an OCI layout and returns the image read back
// from that layout (what make image leaves in bin/image).
func buildLayout(t *testing.T) v1.Image {
	t.Helper()
	img, err := Build(Options{BinDir: staticBinaries(t), Created: time.Unix(0, 0)}, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("layout index: %+v %v", m, err)
	}
	back, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// unpack extracts the image's flattened filesystem into a new directory, keeping modes and
// owners, and returns it.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			t.Fatalf("layer entry %q leaves the root", h.Name)
		}
		p := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode).Perm()); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected layer entry %q type %c", h.Name, h.Typeflag)
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, os.FileMode(h.Mode).Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func statOwner(t *testing.T, p string) [2]int {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return [2]int{int(st.Uid), int(st.Gid)}
}

// freePort is a loopback TCP port free a moment ago, drawn below Linux's ephemeral range so
// that parallel tests' outgoing connections do not take it.
func freePort(t *testing.T) int {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	t.Fatal("no free TCP port in 20000-31999")
	return 0
}

// rpcUser and rpcPassword, when set, are sent as HTTP Basic credentials.
var rpcUser, rpcPassword string

// call is one JSON-RPC request to the node on loopback.
func call(ctx context.Context, port int, method string) (json.RawMessage, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":[]}`, method)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/", port), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if rpcUser != "" {
		req.SetBasicAuth(rpcUser, rpcPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
	}
	return r.Result, nil
}

// waitCount waits until the node answers getblockcount (or exits, or a minute passes: the
// machine may be loaded).
func waitCount(port int, exited <-chan error) (int64, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		res, err := call(ctx, port, "getblockcount")
		cancel()
		if err == nil {
			var n int64
			if err := json.Unmarshal(res, &n); err != nil {
				return 0, fmt.Errorf("getblockcount result %s: %w", res, err)
			}
			return n, nil
		}
		select {
		case werr := <-exited:
			return 0, fmt.Errorf("node exited: %v", werr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no RPC answer in a minute: %w", err)
		}
	}
}

// stopNode asks the node to stop and waits for it; a node that does not stop in time is
// killed with its process group (unshare, chroot, coin-node).
func stopNode(t *testing.T, port int, node *exec.Cmd, exited <-chan error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := call(ctx, port, "stop")
	cancel()
	if err != nil {
		t.Logf("stop RPC: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-node.Process.Pid, syscall.SIGKILL)
		<-exited
		t.Error("the node did not stop in 30 s after the stop RPC")
	}
}

// syncBuffer is a bytes.Buffer that a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
