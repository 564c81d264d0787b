# COIN toolkit. `make build` puts every executable in ./bin; `make test` runs the suite.
GO        ?= go
BIN       := bin
TOOLS     := coin-node coin-cli coin-miner coin-wallet coin-faucetd coin-faucet
PKGS      := ./...
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
BENCHCOUNT ?= 5

.PHONY: all build devnet test test-short soak bench bench-miner scale netlab fuzz man completions docs conf vet fmt clean openapi-check vectors-check

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(filter $(notdir $(wildcard cmd/*)),$(TOOLS)))

# A whole local regtest network (node, miner, funded faucet with page, MCP and events) in
# ./.devnet; Ctrl-C stops it and keeps the data (docs/devnet.md). DEVNET_ARGS passes flags,
# e.g. make devnet DEVNET_ARGS='--nodes 3 --fresh'.
devnet: build
	$(BIN)/coin-node devnet $(DEVNET_ARGS)

# The whole suite with the race detector (end-to-end tests build the executables themselves).
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -timeout 20m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

# The container image, built without a Docker daemon (deploy/image, go-containerregistry) from
# static executables: an OCI layout in bin/image and a docker-archive in bin/coin-image.tar
# (docker load, kind load image-archive, k3s ctr images import). docs/deploy.md.
IMAGE_TAG ?= cointoolkit/coin:dev
.PHONY: image deploy-test
image:
	@mkdir -p $(BIN)/static
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/static/ $(addprefix ./cmd/,$(TOOLS))
	cd deploy && $(GO) run ./cmd/coin-image -bin $(CURDIR)/$(BIN)/static -oci $(CURDIR)/$(BIN)/image \
	  -tar $(CURDIR)/$(BIN)/coin-image.tar -tag $(IMAGE_TAG) -version "$$(git describe --always --dirty 2>/dev/null)"

# The deploy module's tests (its own go.mod: Helm and Kubernetes stay out of the main module):
# the image starts a regtest node from its unpacked root filesystem (needs root and unshare,
# skipped otherwise) and the Helm chart renders into valid Kubernetes objects.
deploy-test:
	cd deploy && $(GO) vet ./... && $(GO) test -count 1 -timeout 20m ./...

# Long crash tests, bounded in time, real processes on loopback only: coin-faucetd's
# exactly-once payment over COIN_SOAK_ROUNDS (default 8) rounds of kill -9 of the faucet
# and the node (COIN_CRASH_SEED replays a run), and that agent operations answered 200
# reach the chain over COIN_SOAK_ROUNDS (default 5) such rounds.
soak:
	COIN_SOAK=1 $(GO) test -race -count 1 -timeout 15m -run '^(TestCrashPaysExactlyOnce|TestCrashKeepsAgentOperations)$$' -v ./cmd/coin-faucetd

# Benchmarks; figures and the machine go by hand to the page of the
# package measured (docs/chain.md, docs/miner.md, docs/benchmarks-node.md, docs/p2p.md, ...).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(PKGS) | tee bench.out

# The miner's hashrate against the openssl one-stream bound (prints ok/below per target).
bench-miner: build
	$(GO) test -run '^$$' -bench BenchmarkHashrate -benchtime 5s ./lib/miner
	$(BIN)/coin-miner --benchmark --threads 2 --benchmark-time 5s

# The scale benchmark (not part of make test): a regtest chain of 1,000,000 transfers, built once
# into COIN_SCALE_CACHE (default: the user cache directory's coin-scale/), synced by a coin-node
# process over loopback; its output goes to scale.out and the plot to docs/scale-sync.svg
# (docs/chain.md, "Scale: a million transfers"). COIN_SCALE_BASELINE_BIN=<coin-node> also syncs
# with another executable first, for comparison.
scale:
	$(GO) test -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -timeout 120m ./bench/scale | tee scale.out && grep -q '^ok' scale.out
	$(GO) run ./scripts/scaleplot -i scale.out -o docs/scale-sync.svg

# The network lab (docs/network.md; not part of make test): 20 coin-node processes, each in its
# own network namespace, joined by a user-space forwarder with per-link delay, jitter and loss,
# through every scenario, bounded to 20 minutes; it writes the figures and plots into
# docs/network.md and its SVG plots beside it. Needs root, iproute2 and ethtool. make test runs a
# reduced lab (TestNetlabReduced) where it can. COIN_NETLAB_QUICK=1 runs a small lab instead.
netlab:
	COIN_NETLAB=1 COIN_NETLAB_REPORT=docs/network.md $(GO) test -count 1 -timeout 25m -run '^TestNetlabFull$$' -v ./bench/netlab

# Every fuzz target for FUZZTIME each (bounded).
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# man pages, shell completions and deploy/coin.conf.example (with lib/confile/known_keys.txt),
# generated from each executable's own flag definitions.
man completions docs conf: build
	@mkdir -p man completions
	@for t in $(TOOLS); do \
	  [ -x $(BIN)/$$t ] || continue; \
	  $(BIN)/$$t gendoc man > man/$$t.1; \
	  $(BIN)/$$t gendoc bash > completions/$$t.bash; \
	  $(BIN)/$$t gendoc zsh > completions/_$$t; \
	done
	$(GO) run ./scripts/genconf -bin $(BIN)

# Checks that need npm (run by hand; not part of make test): the faucet's OpenAPI document
# through an OpenAPI 3.1 validator, and the wallet derivation vectors regenerated by an
# independent implementation.
openapi-check:
	cd scripts/vectors && npm install --no-audit --no-fund && npm run check-openapi

vectors-check:
	cd scripts/vectors && npm install --no-audit --no-fund && npm run check-vectors

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) bench.out
