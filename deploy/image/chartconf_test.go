package image

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestImageRunsChartConf starts a node from the image's root filesystem with the coin.conf the
// chart renders for node-0 (default values) at /etc/coin/coin.conf and the arguments of the
// chart's StatefulSet (--conf, --externalip with the pod's IP on loopback), as a pod runs it, with the rpcauth line in COIN_RPC_AUTH as the chart's Secret gives it: what the
// chart deploys is a configuration the node accepts. Only the binds are moved to free loopback
// ports (flags override the file). It skips while the image's coin-node lacks a flag the file
// uses (--conf and the P2P flags land on other branches).
func TestImageRunsChartConf(t *testing.T) {
	unshare := needNamespaces(t)
	conf, args := chartNode(t)

	// The executables that go into the image, asked before the image is built.
	help, err := exec.Command(filepath.Join(staticBinaries(t), "coin-node"), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("coin-node --help: %v\n%s", err, help)
	}
	var missing []string
	for _, k := range append(flagNames(args), confKeys(conf)...) {
		if !regexp.MustCompile(`--` + regexp.QuoteMeta(k) + `\b`).Match(help) {
			missing = append(missing, "--"+k)
		}
	}
	if len(missing) > 0 {
		t.Skipf("this coin-node has no %s yet: the chart's coin.conf cannot run on it", strings.Join(missing, ", "))
	}
	root := unpack(t, buildLayout(t))
	if err := os.WriteFile(filepath.Join(root, ConfPath), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	// The Secret's credentials: the node gets the rpcauth line, the client the password.
	const user, password, salt = "coin", "chart-conf-test-password", "00112233445566778899aabbccddeeff"
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(password))
	auth := user + ":" + salt + "$" + hex.EncodeToString(m.Sum(nil))
	rpcUser, rpcPassword = user, password
	t.Cleanup(func() { rpcUser, rpcPassword = "", "" })

	rpcPort := freePort(t)
	node := inImage(unshare, root, "coin-node", append(args,
		"--rpc-bind", "127.0.0.1:"+strconv.Itoa(rpcPort), "--p2p-bind", "127.0.0.1:"+strconv.Itoa(freePort(t)),
		"--metrics-bind", "127.0.0.1:"+strconv.Itoa(freePort(t)))...)
	node.Env = append(node.Env, "COIN_RPC_AUTH="+auth)
	log := &syncBuffer{}
	node.Stdout, node.Stderr = log, log
	node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- node.Wait() }()
	count, err := waitCount(rpcPort, exited)
	if err != nil {
		_ = syscall.Kill(-node.Process.Pid, syscall.SIGKILL)
		t.Fatalf("node with the chart's coin.conf: %v\n%s", err, log.String())
	}
	defer stopNode(t, rpcPort, node, exited)
	if count != 0 {
		t.Fatalf("fresh regtest node has %d blocks", count)
	}
	// The chain went where the chart's file says, on the volume.
	if st := statOwner(t, filepath.Join(root, DataDir, "regtest")); st != [2]int{UID, GID} {
		t.Fatalf("/data/regtest owned by %v", st)
	}
}

// chartNode renders the chart with its default values and returns node-0's coin.conf and the
// arguments of the StatefulSet's coin-node container, with the pod's IP ($(POD_IP)) on
// loopback.
func chartNode(t *testing.T) (string, []string) {
	t.Helper()
	cm, sts, _ := renderNodes(t, "", "lab")
	c, ok := cm.Data["node-0.conf"]
	if !ok {
		t.Fatalf("no node-0.conf in %v", cm.Data)
	}
	ctr := sts.Spec.Template.Spec.Containers[0]
	if strings.Join(ctr.Command, " ") != BinDir+"/coin-node" {
		t.Fatalf("the chart's node command %q is not the image's coin-node", ctr.Command)
	}
	var args []string
	for _, a := range ctr.Args {
		args = append(args, strings.ReplaceAll(a, "$(POD_IP)", "127.0.0.1"))
	}
	if !strings.Contains(strings.Join(args, " "), "--conf "+ConfPath) {
		t.Fatalf("the chart's node args %q do not name %s", args, ConfPath)
	}
	return c, args
}

// flagNames are the --names among args.
func flagNames(args []string) []string {
	var ns []string
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			n, _, _ := strings.Cut(a[2:], "=")
			ns = append(ns, n)
		}
	}
	return ns
}

// confKeys are the distinct keys of a coin.conf.
func confKeys(conf string) []string {
	seen := map[string]bool{}
	var ks []string
	for _, l := range strings.Split(conf, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		k, _, _ := strings.Cut(l, "=")
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	return ks
}

// renderNodes renders the chart with values (YAML; "" for the defaults) as release
// coin-network in namespace, and decodes strictly the nodes' ConfigMap and StatefulSet; the
// render values come back too.
func renderNodes(t *testing.T, values, namespace string) (corev1.ConfigMap, appsv1.StatefulSet, chartutil.Values) {
	t.Helper()
	ch, err := loader.Load(filepath.Join("..", "helm", "coin-network"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "coin-network", Namespace: namespace, IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(files["coin-network/templates/configmap.yaml"]), &cm); err != nil {
		t.Fatal(err)
	}
	var sts appsv1.StatefulSet
	if err := yaml.UnmarshalStrict([]byte(files["coin-network/templates/statefulset.yaml"]), &sts); err != nil {
		t.Fatal(err)
	}
	return cm, sts, rv
}
