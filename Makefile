# COIN toolkit. `make build` puts every executable in ./bin; `make test` runs the suite.
GO        ?= go
BIN       := bin
TOOLS     := coin-node coin-cli coin-miner coin-wallet coin-faucetd coin-faucet
PKGS      := ./...
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
BENCHCOUNT ?= 5

.PHONY: all build test test-short bench fuzz man completions docs vet fmt clean soak

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(filter $(notdir $(wildcard cmd/*)),$(TOOLS)))

# The whole suite with the race detector (end-to-end tests build the executables themselves).
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -timeout 20m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

# Benchmarks; figures and the machine go to docs/benchmarks.md by hand (see docs/).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(PKGS) | tee bench.out

# Every fuzz target for FUZZTIME each (bounded).
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# man pages and shell completions, generated from each executable's own flag definitions.
man completions docs: build
	@mkdir -p man completions
	@for t in $(TOOLS); do \
	  [ -x $(BIN)/$$t ] || continue; \
	  $(BIN)/$$t gendoc man > man/$$t.1; \
	  $(BIN)/$$t gendoc bash > completions/$$t.bash; \
	  $(BIN)/$$t gendoc zsh > completions/_$$t; \
	done

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) bench.out
