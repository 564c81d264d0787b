package image

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDockerfileMatchesBuilder holds deploy/Dockerfile to the daemon-less builder: the final
// stage names the same user, volume, working directory, environment, ports, entrypoint and
// command, copies the same root filesystem skeleton, and builds the same six executables
// statically into the same directory.
func TestDockerfileMatchesBuilder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(b), "\nFROM ")
	if len(stages) != 3 {
		t.Fatalf("want a build stage and a final stage, got %d stages", len(stages)-1)
	}
	build, final := stages[1], instructions(stages[2])
	if !strings.HasPrefix(stages[2], "scratch") {
		t.Errorf("final stage is %q, want scratch", strings.SplitN(stages[2], "\n", 2)[0])
	}

	var goBuild string
	for _, l := range strings.Split(build, "\n") {
		if strings.Contains(l, "go build") {
			goBuild = l
		}
	}
	if !strings.Contains(goBuild, "CGO_ENABLED=0") || !strings.Contains(goBuild, "-trimpath") {
		t.Errorf("the Dockerfile's go build is not static and -trimpath: %q", goBuild)
	}
	for _, tool := range Tools {
		if !strings.Contains(goBuild, "./cmd/"+tool) {
			t.Errorf("the Dockerfile does not build %s", tool)
		}
	}

	want := map[string][]string{
		"USER":       {strconv.Itoa(UID) + ":" + strconv.Itoa(GID)},
		"WORKDIR":    {DataDir},
		"VOLUME":     {jsonList(t, []string{DataDir})},
		"ENTRYPOINT": {jsonList(t, Entrypoint)},
		"CMD":        {jsonList(t, Cmd)},
		"ENV":        {strings.Join(Env, " ")},
		"EXPOSE":     {strings.Join(Ports, " ")},
		"COPY": {"deploy/image/rootfs/ /",
			"--from=build --chown=" + strconv.Itoa(UID) + ":" + strconv.Itoa(GID) + " /out/data " + DataDir,
			"--from=build /out/bin/ " + BinDir + "/"},
	}
	for k, w := range want {
		if got := final[k]; !slices.Equal(got, w) {
			t.Errorf("Dockerfile %s: got %q, want %q (deploy/image/image.go)", k, got, w)
		}
	}
	for k := range final {
		if _, ok := want[k]; !ok {
			t.Errorf("Dockerfile final stage has %s, which the builder does not know", k)
		}
	}
}

// instructions maps each instruction of a stage to its arguments, in order (comments and
// blank lines dropped).
func instructions(stage string) map[string][]string {
	m := map[string][]string{}
	for _, l := range strings.Split(stage, "\n")[1:] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, _ := strings.Cut(l, " ")
		m[k] = append(m[k], strings.TrimSpace(v))
	}
	return m
}

// jsonList is the Dockerfile's exec form of a list, ["a", "b"].
func jsonList(t *testing.T, l []string) string {
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `","`, `", "`)
}
