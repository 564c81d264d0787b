// Package helm holds the test of the coin-network chart: it renders the chart with Helm's own
// Go packages (no helm executable, no cluster) for several values and decodes every object
// strictly into the Kubernetes API types before checking the wiring.
package helm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "coin-network"
	release   = "coin-network" // the release name docs/deploy.md uses: fullname = release
	namespace = "lab"
	sts       = "coin-network-node"
	headless  = "coin-network-node"
	seed      = "coin-network-node.lab.svc.cluster.local"
)

// objects is one rendering, decoded.
type objects struct {
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	services     map[string]*corev1.Service
	pvcs         map[string]*corev1.PersistentVolumeClaim
	statefulSets map[string]*appsv1.StatefulSet
	deployments  map[string]*appsv1.Deployment
	raw          map[string]string // kind/name: the rendered YAML
}

// render renders the chart for the values (YAML) and decodes every document strictly into its
// API type (an unknown field or a wrong type fails).
func render(t *testing.T, values string) (*objects, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	o := &objects{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		services: map[string]*corev1.Service{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		statefulSets: map[string]*appsv1.StatefulSet{}, deployments: map[string]*appsv1.Deployment{}, raw: map[string]string{}}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasSuffix(n, "NOTES.txt") {
			continue
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(files[n], -1) {
			if !hasContent(doc) {
				continue
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", n, err, doc)
			}
			var obj any
			switch meta.APIVersion + " " + meta.Kind {
			case "v1 ConfigMap":
				v := &corev1.ConfigMap{}
				o.configMaps[meta.Metadata.Name], obj = v, v
			case "v1 Secret":
				v := &corev1.Secret{}
				o.secrets[meta.Metadata.Name], obj = v, v
			case "v1 Service":
				v := &corev1.Service{}
				o.services[meta.Metadata.Name], obj = v, v
			case "v1 PersistentVolumeClaim":
				v := &corev1.PersistentVolumeClaim{}
				o.pvcs[meta.Metadata.Name], obj = v, v
			case "apps/v1 StatefulSet":
				v := &appsv1.StatefulSet{}
				o.statefulSets[meta.Metadata.Name], obj = v, v
			case "apps/v1 Deployment":
				v := &appsv1.Deployment{}
				o.deployments[meta.Metadata.Name], obj = v, v
			default:
				t.Fatalf("%s: unexpected object %s %s", n, meta.APIVersion, meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: %s %s does not decode strictly: %v\n%s", n, meta.Kind, meta.Metadata.Name, err, doc)
			}
			key := meta.Kind + "/" + meta.Metadata.Name
			if _, dup := o.raw[key]; dup {
				t.Fatalf("two objects %s", key)
			}
			o.raw[key] = doc
		}
	}
	return o, nil
}

func hasContent(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

func mustRender(t *testing.T, values string) *objects {
	t.Helper()
	o, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return o
}

// conf parses a rendered coin.conf into its key=value lines, in order.
func conf(t *testing.T, s string) [][2]string {
	t.Helper()
	var kv [][2]string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("coin.conf line %q is not key=value", l)
		}
		kv = append(kv, [2]string{k, v})
	}
	return kv
}

func values(kv [][2]string, key string) []string {
	var vs []string
	for _, p := range kv {
		if p[0] == key {
			vs = append(vs, p[1])
		}
	}
	return vs
}

// podDNS is the DNS name and P2P port of node i of the StatefulSet.
func podDNS(i, port int) string { return fmt.Sprintf("%s-%d.%s:%d", sts, i, seed, port) }

// TestChartDefaults renders the default values: three regtest nodes in a ring, each seeded by
// the headless Service, RPC credentials only referenced, probes, volumes, annotations.
func TestChartDefaults(t *testing.T) {
	o := mustRender(t, "")
	if len(o.deployments) != 0 || len(o.secrets) != 0 || len(o.pvcs) != 0 {
		t.Fatalf("defaults render miners, faucet or secrets: %v", keys(o.raw))
	}
	s := o.statefulSets[sts]
	if s == nil {
		t.Fatalf("no StatefulSet %s: %v", sts, keys(o.raw))
	}
	if *s.Spec.Replicas != 3 || s.Spec.ServiceName != headless {
		t.Fatalf("StatefulSet replicas %d service %q", *s.Spec.Replicas, s.Spec.ServiceName)
	}

	// The headless Service is the StatefulSet's, lists nodes before they are ready and selects
	// exactly the node pods.
	h := o.services[headless]
	if h == nil || h.Spec.ClusterIP != corev1.ClusterIPNone || !h.Spec.PublishNotReadyAddresses {
		t.Fatalf("headless Service: %+v", h)
	}
	if !selects(h.Spec.Selector, s.Spec.Template.Labels) {
		t.Fatalf("headless Service selector %v does not select the nodes %v", h.Spec.Selector, s.Spec.Template.Labels)
	}

	// One PVC per node from the claim template, mounted at /data.
	if len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Fatalf("volumeClaimTemplates: %+v", s.Spec.VolumeClaimTemplates)
	}
	if q := s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "5Gi" {
		t.Fatalf("PVC size %s", q.String())
	}
	c := container(t, s.Spec.Template.Spec, "coin-node")
	if mountOf(c, "data") != "/data" {
		t.Fatalf("data volume mounted at %q", mountOf(c, "data"))
	}

	// The command: coin-node with the mounted coin.conf.
	if strings.Join(c.Command, " ") != "/usr/local/bin/coin-node" || !strings.Contains(strings.Join(c.Args, " "), "--conf /etc/coin/coin.conf") {
		t.Fatalf("command %q args %q", c.Command, c.Args)
	}
	checkConfMount(t, o, s, c)

	// Probes: readiness on the RPC port, liveness on the process's P2P port.
	if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil || c.ReadinessProbe.TCPSocket.Port.String() != "rpc" {
		t.Fatalf("readiness probe: %+v", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.TCPSocket == nil || c.LivenessProbe.TCPSocket.Port.String() != "p2p" {
		t.Fatalf("liveness probe: %+v", c.LivenessProbe)
	}
	if port(c, "rpc") != 38332 || port(c, "p2p") != 38333 || port(c, "metrics") != 9332 {
		t.Fatalf("container ports: %+v", c.Ports)
	}

	// Prometheus finds the metrics port.
	a := s.Spec.Template.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9332" || a["prometheus.io/path"] != "/metrics" {
		t.Fatalf("scrape annotations: %v", a)
	}

	// RPC credentials: --rpc-auth from the referenced Secret, never a literal.
	env := envOf(c)
	if r := env["COIN_RPC_AUTH"]; r.ValueFrom == nil || r.ValueFrom.SecretKeyRef == nil ||
		r.ValueFrom.SecretKeyRef.Name != "coin-rpc" || r.ValueFrom.SecretKeyRef.Key != "rpc-auth" || r.Value != "" {
		t.Fatalf("COIN_RPC_AUTH: %+v", r)
	}

	// Each node's coin.conf: the network, loopback-free binds, the DNS seed, no DNS seeds of
	// the internet, a ring of peers, metrics.
	cm := o.configMaps["coin-network-conf"]
	for i := range 3 {
		kv := conf(t, cm.Data[fmt.Sprintf("node-%d.conf", i)])
		want := map[string][]string{
			"network":      {"regtest"},
			"data-dir":     {"/data/regtest"},
			"rpc-bind":     {"0.0.0.0:38332"},
			"p2p-bind":     {"0.0.0.0:38333"},
			"metrics-bind": {"0.0.0.0:9332"},
			"dnsseed":      {"false"},
			"seednode":     {seed + ":38333"},
			"addnode":      {podDNS((i+1)%3, 38333)},
			// The names its clients call its RPC by: its RPC Service's, its pod's.
			"rpc-allow-host": {fmt.Sprintf("coin-network-rpc-%d", i), fmt.Sprintf("coin-network-rpc-%d.lab.svc.cluster.local", i),
				fmt.Sprintf("%s-%d.%s", sts, i, headless), fmt.Sprintf("%s-%d.%s.lab.svc.cluster.local", sts, i, headless)},
		}
		for k, w := range want {
			if got := values(kv, k); strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("node-%d.conf %s=%q, want %q", i, k, got, w)
			}
		}
	}
	// The seed is the headless Service's own DNS name.
	if !strings.HasPrefix(seed, h.Name+"."+namespace+".svc.") {
		t.Fatalf("seed %s is not the headless Service %s", seed, h.Name)
	}

	checkCommon(t, o)
}

// TestChartNetwork renders the example network.yaml (five nodes listing their peers, a miner,
// a faucet) with chart-made credentials: the peers, the miner's and faucet's wiring to their
// node, and that the password is in the Secret only.
func TestChartNetwork(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(chartDir, "examples", "network.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const password = "pw-Zq3v9s-never-elsewhere"
	const auth = "coin:0123456789abcdef$" + "4f5ad4e2f03c0bd6a5ac1e2d4b1d2a2f2e83c6b2e7f3d1c8a9b0c1d2e3f4a5b6"
	o := mustRender(t, string(example)+`
miners:
  - name: miner-0
    node: 0
    threads: 2
    address: coinrt1qexampleaddress
rpc:
  create: true
  user: coin
  password: `+password+`
  auth: '`+auth+`'
`)
	s := o.statefulSets[sts]
	if *s.Spec.Replicas != 5 {
		t.Fatalf("replicas %d, want the 5 nodes of network.yaml", *s.Spec.Replicas)
	}
	cm := o.configMaps["coin-network-conf"]
	peers := map[int][]int{0: {1, 2}, 1: {2, 3}, 2: {3, 4}, 3: {4, 0}, 4: {0}}
	for i, ps := range peers {
		var want []string
		for _, p := range ps {
			want = append(want, podDNS(p, 38333))
		}
		if got := values(conf(t, cm.Data[fmt.Sprintf("node-%d.conf", i)]), "addnode"); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("node-%d addnode %q, want %q", i, got, want)
		}
	}
	if got := values(conf(t, cm.Data["node-4.conf"]), "max-inbound"); len(got) != 1 || got[0] != "32" {
		t.Errorf("node-4's own config: max-inbound=%q", got)
	}
	if got := values(conf(t, cm.Data["node-3.conf"]), "max-inbound"); len(got) != 0 {
		t.Errorf("node-4's config leaked into node-3: %q", got)
	}

	// The Secret holds the credentials; no other object holds the password or the hash.
	sec := o.secrets["coin-network-rpc"]
	if sec == nil || sec.StringData["rpc-password"] != password || sec.StringData["rpc-auth"] != auth || sec.StringData["rpc-user"] != "coin" {
		t.Fatalf("rpc Secret: %+v", sec)
	}
	for k, doc := range o.raw {
		if !strings.HasPrefix(k, "Secret/") && (strings.Contains(doc, password) || strings.Contains(doc, "4f5ad4e2f03c0bd6")) {
			t.Errorf("%s holds an RPC credential", k)
		}
	}

	// The miner: coin-miner with its threads and address, on node-0's RPC Service by IP, with
	// the credentials from the Secret.
	m := o.deployments["coin-network-miner-0"]
	if m == nil {
		t.Fatalf("no miner Deployment: %v", keys(o.raw))
	}
	mc := container(t, m.Spec.Template.Spec, "coin-miner")
	args := strings.Join(mc.Args, " ")
	if mc.Command[0] != "/usr/local/bin/coin-miner" || !strings.Contains(args, "--threads 2") ||
		!strings.Contains(args, "--address coinrt1qexampleaddress") || !strings.Contains(args, "--conf /etc/coin/coin.conf") {
		t.Fatalf("miner command %q %q", mc.Command, mc.Args)
	}
	checkRPCClient(t, o, mc, 0)

	// The faucet: coin-faucetd on node-1, its mnemonic a file of the referenced Secret, its
	// page behind a Service, its claims on a volume of its own.
	f := o.deployments["coin-network-faucet"]
	if f == nil {
		t.Fatalf("no faucet Deployment: %v", keys(o.raw))
	}
	fc := container(t, f.Spec.Template.Spec, "coin-faucetd")
	fargs := strings.Join(fc.Args, " ")
	if !strings.Contains(fargs, "--mnemonic-file /run/secrets/coin-faucet/mnemonic") || !strings.Contains(fargs, "--listen 0.0.0.0:8080") ||
		!strings.Contains(fargs, "--data-dir /data/faucet") {
		t.Fatalf("faucet args %q", fc.Args)
	}
	if mountOf(fc, "wallet") != "/run/secrets/coin-faucet" || volume(t, f.Spec.Template.Spec, "wallet").Secret.SecretName != "coin-faucet" {
		t.Fatalf("faucet wallet volume: %+v", f.Spec.Template.Spec.Volumes)
	}
	if v := volume(t, f.Spec.Template.Spec, "data"); v.PersistentVolumeClaim == nil || o.pvcs[v.PersistentVolumeClaim.ClaimName] == nil {
		t.Fatalf("faucet data volume: %+v", v)
	}
	checkRPCClient(t, o, fc, 1)
	fs := o.services["coin-network-faucet"]
	if fs == nil || !selects(fs.Spec.Selector, f.Spec.Template.Labels) || fs.Spec.Ports[0].TargetPort.String() != "http" || port(fc, "http") != 8080 {
		t.Fatalf("faucet Service: %+v", fs)
	}
	if selects(fs.Spec.Selector, s.Spec.Template.Labels) || selects(o.services[headless].Spec.Selector, f.Spec.Template.Labels) {
		t.Fatal("the faucet's and the nodes' Services select each other's pods")
	}
	checkConfMount(t, o, s, container(t, s.Spec.Template.Spec, "coin-node"))
	checkCommon(t, o)
}

// TestChartToggles renders other values: metrics off, no persistence, testnet, an existing
// faucet secret name; what they switch off is gone.
func TestChartToggles(t *testing.T) {
	o := mustRender(t, `
global: {chain: testnet}
replicas: 1
metrics: {enabled: false}
persistence: {enabled: false}
rpc: {existingSecret: my-rpc}
faucet: {enabled: true, existingSecret: my-faucet, persistence: {enabled: false}}
`)
	s := o.statefulSets[sts]
	if len(s.Spec.VolumeClaimTemplates) != 0 || volume(t, s.Spec.Template.Spec, "data").EmptyDir == nil {
		t.Fatal("persistence off still claims a volume")
	}
	if _, ok := s.Spec.Template.Annotations["prometheus.io/scrape"]; ok {
		t.Fatal("metrics off still annotated for scraping")
	}
	c := container(t, s.Spec.Template.Spec, "coin-node")
	if port(c, "metrics") != 0 || port(c, "rpc") != 28332 || port(c, "p2p") != 28333 {
		t.Fatalf("ports %+v", c.Ports)
	}
	kv := conf(t, o.configMaps["coin-network-conf"].Data["node-0.conf"])
	if len(values(kv, "metrics-bind")) != 0 || len(values(kv, "addnode")) != 0 || values(kv, "network")[0] != "testnet" {
		t.Fatalf("node-0.conf: %v", kv)
	}
	if envOf(c)["COIN_RPC_AUTH"].ValueFrom.SecretKeyRef.Name != "my-rpc" {
		t.Fatal("rpc.existingSecret not used")
	}
	f := o.deployments["coin-network-faucet"]
	if volume(t, f.Spec.Template.Spec, "wallet").Secret.SecretName != "my-faucet" || len(o.pvcs) != 0 {
		t.Fatal("faucet secret or persistence toggle ignored")
	}
	checkCommon(t, o)
}

// TestChartRefuses checks that wrong values fail the rendering with a message saying what to
// fix, instead of a cluster that half works.
func TestChartRefuses(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		{"global: {chain: signet}", "want mainnet, testnet or regtest"},
		{"global: {chain: mainnet}\nfaucet: {enabled: true}", "refuses mainnet"},
		{"miners: [{threads: 1}]", "miners[0].address"},
		{"miners: [{address: x, node: 3}]", "there are 3 nodes"},
		{"config: |\n  rpc-password=hunter2\n", "credentials never go into the ConfigMap"},
		{"nodes: [{config: \"rpc-auth=a:b$c\"}]", "credentials never go into the ConfigMap"},
		{"nodes: [{name: node-0}, {name: node-7}]", `want "node-1"`},
		{"addnode: [bogus]", "want node-N"},
		{"topology: mesh", "want ring or none"},
		{"rpc: {create: true, user: coin}", "rpc.password"},
		{"rpc: {existingSecret: ''}", "rpc.existingSecret"},
	} {
		_, err := render(t, c.values)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %q: err %v, want %q", c.values, err, c.want)
		}
	}
}

// checkCommon holds for every rendering: every container has resource limits and runs as
// the image's non-root user on a read-only root, and no ConfigMap holds a credential key.
func checkCommon(t *testing.T, o *objects) {
	t.Helper()
	specs := map[string]corev1.PodSpec{}
	for n, s := range o.statefulSets {
		specs["StatefulSet/"+n] = s.Spec.Template.Spec
	}
	for n, d := range o.deployments {
		specs["Deployment/"+n] = d.Spec.Template.Spec
	}
	for n, ps := range specs {
		psc := ps.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 10001 || psc.FSGroup == nil || *psc.FSGroup != 10001 {
			t.Errorf("%s: pod security context %+v, want non-root uid 10001", n, psc)
		}
		for _, c := range ps.Containers {
			lim := c.Resources.Limits
			if lim.Cpu().IsZero() || lim.Memory().IsZero() {
				t.Errorf("%s/%s: no cpu and memory limits: %+v", n, c.Name, c.Resources)
			}
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s/%s: security context %+v", n, c.Name, sc)
			}
			if c.Image != "cointoolkit/coin:dev" {
				t.Errorf("%s/%s: image %s", n, c.Name, c.Image)
			}
			for _, e := range c.Env {
				if strings.Contains(e.Name, "PASSWORD") || strings.Contains(e.Name, "AUTH") {
					if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
						t.Errorf("%s/%s: %s is not only a Secret reference", n, c.Name, e.Name)
					}
				}
			}
			for _, a := range c.Args {
				if strings.Contains(a, "rpc-auth") || strings.Contains(a, "password") {
					t.Errorf("%s/%s: a credential flag in argv: %q", n, c.Name, c.Args)
				}
			}
		}
	}
	for n, cm := range o.configMaps {
		for k, v := range cm.Data {
			for _, p := range conf(t, v) {
				if strings.HasPrefix(p[0], "rpc-auth") || strings.HasPrefix(p[0], "rpc-password") || p[0] == "mnemonic" {
					t.Errorf("ConfigMap %s %s has %s", n, k, p[0])
				}
			}
		}
	}
}

// checkConfMount: every node mounts its own file of the ConfigMap as /etc/coin/coin.conf.
func checkConfMount(t *testing.T, o *objects, s *appsv1.StatefulSet, c corev1.Container) {
	t.Helper()
	var m *corev1.VolumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == "/etc/coin/coin.conf" {
			m = &c.VolumeMounts[i]
		}
	}
	if m == nil || m.SubPathExpr != "$(POD_NAME).conf" {
		t.Fatalf("coin.conf mount: %+v", m)
	}
	if e := envOf(c)["POD_NAME"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Fatalf("POD_NAME: %+v", e)
	}
	v := volume(t, s.Spec.Template.Spec, m.Name)
	cm := o.configMaps[v.ConfigMap.Name]
	if cm == nil {
		t.Fatalf("conf volume names ConfigMap %s, not rendered", v.ConfigMap.Name)
	}
	paths := map[string]bool{}
	for _, it := range v.ConfigMap.Items {
		if _, ok := cm.Data[it.Key]; !ok {
			t.Errorf("conf item %s: no such key", it.Key)
		}
		paths[it.Path] = true
	}
	for i := range int(*s.Spec.Replicas) {
		if p := fmt.Sprintf("%s-%d.conf", s.Name, i); !paths[p] {
			t.Errorf("pod %s-%d finds no %s in its conf volume: %v", s.Name, i, p, paths)
		}
	}
}

var serviceURL = regexp.MustCompile(`^http://([a-z0-9-]+):(\d+)$`)

// checkRPCClient: the container calls node i's RPC through a Service, by its DNS name, that
// selects exactly that node's pod, on the RPC port, with user and password from the Secret
// the nodes use; the node lists that name in rpc-allow-host (its RPC server refuses any other
// DNS name as the Host header).
func checkRPCClient(t *testing.T, o *objects, c corev1.Container, node int) {
	t.Helper()
	env := envOf(c)
	m := serviceURL.FindStringSubmatch(env["COIN_RPC"].Value)
	if m == nil {
		t.Fatalf("%s: COIN_RPC %q", c.Name, env["COIN_RPC"].Value)
	}
	svc := o.services[m[1]]
	if svc == nil {
		t.Fatalf("%s: COIN_RPC names no Service: %s", c.Name, m[1])
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.Selector["statefulset.kubernetes.io/pod-name"] != fmt.Sprintf("%s-%d", sts, node) ||
		fmt.Sprint(svc.Spec.Ports[0].Port) != m[2] || m[2] != "38332" {
		t.Fatalf("%s: RPC Service %s: %+v", c.Name, svc.Name, svc.Spec)
	}
	if hosts := values(conf(t, o.configMaps["coin-network-conf"].Data[fmt.Sprintf("node-%d.conf", node)]), "rpc-allow-host"); !slices.Contains(hosts, m[1]) {
		t.Fatalf("%s: node-%d.conf does not allow the Host %s its client sends (rpc-allow-host %q)", c.Name, node, m[1], hosts)
	}
	nodeEnv := envOf(container(t, o.statefulSets[sts].Spec.Template.Spec, "coin-node"))
	for _, k := range []string{"COIN_RPC_USER", "COIN_RPC_PASSWORD"} {
		r := env[k].ValueFrom
		if r == nil || r.SecretKeyRef == nil || r.SecretKeyRef.Name != nodeEnv["COIN_RPC_AUTH"].ValueFrom.SecretKeyRef.Name {
			t.Fatalf("%s: %s: %+v", c.Name, k, env[k])
		}
	}
}

func container(t *testing.T, ps corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range ps.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

func volume(t *testing.T, ps corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range ps.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s in %+v", name, ps.Volumes)
	return corev1.Volume{}
}

func mountOf(c corev1.Container, volume string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	return ""
}

func port(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// selects: every label of the selector is on the pod.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b bytes.Buffer
	b.WriteString(strings.Join(ks, " "))
	return b.String()
}
