# aegis: simulate and compare GPU collocation schedulers.
GO ?= go
BIN := bin/aegis
# The commit aegis --version and run.json name, stamped at link time (the Go
# toolchain stamps none under -buildvcs=false or outside a git checkout);
# -trimpath keeps the checkout's path out of the binary, so the same commit
# built anywhere is the same build (run.json's build_sha256, cells' keys).
COMMIT ?= $(shell git describe --always --dirty 2>/dev/null)
# SOURCE, the sha256 of what the binary is built from (non-test Go files,
# go.mod, go.sum, the embedded data/ folders, as in the working tree),
# identifies the build in cells' keys: a rebuild of the same source (after a
# commit of documents, tests or specs only) reuses every finished cell.
SOURCE ?= $(shell git ls-files -co --exclude-standard -z -- '*.go' go.mod go.sum ':(glob)**/data/**' ':(exclude)*_test.go' ':(exclude,glob)**/testdata/**' 2>/dev/null | xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-64)
LDFLAGS = -trimpath -ldflags '-X github.com/aegis-sched/aegis/internal/buildinfo.commit=$(COMMIT) -X github.com/aegis-sched/aegis/internal/buildinfo.source=$(SOURCE)'
GOBUILD = $(GO) build $(LDFLAGS)

.PHONY: help nvml-test gpu-check-emulated build install test fmtcheck bench benchstat growth-plot demo fmt vet fuzz reproduce gpu-build gpu-check exec-stress

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# build and install link aegis without cgo (nothing but net's resolver asks
# for it): a static binary, which starts without the dynamic loader and
# makes its threads without libc: aegis simulate of a 24,000-job trace
# takes 4-12 % less CPU (docs/performance.md, "The whole command's
# pages"). gpu-build links NVML through cgo.
build: ## build bin/aegis
	CGO_ENABLED=0 $(GOBUILD) -o $(BIN) ./cmd/aegis

install: ## install aegis into $(go env GOPATH)/bin (or $GOBIN), so the README's `aegis ...` commands work from anywhere
	CGO_ENABLED=0 $(GO) install $(LDFLAGS) ./cmd/aegis

gpu-build: ## build bin/aegis with NVML (cgo, the nvml build tag), so it reads real GPUs
	CGO_ENABLED=1 CGO_CFLAGS="$${CGO_CFLAGS:--O2 -Wno-deprecated-declarations}" $(GOBUILD) -tags nvml -o $(BIN) ./cmd/aegis

nvml-test: ## vet and test the NVML adapter (cgo, the nvml build tag) against go-nvml's mock
	CGO_ENABLED=1 CGO_CFLAGS="$${CGO_CFLAGS:--O2 -Wno-deprecated-declarations}" $(GO) vet -tags nvml ./executor/gpu
	CGO_ENABLED=1 CGO_CFLAGS="$${CGO_CFLAGS:--O2 -Wno-deprecated-declarations}" $(GO) test -tags nvml ./executor/gpu

exec-stress: ## hit aegis exec on the philly trace with 20 kills/SIGTERMs/SIGINTs x 3 seeds per policy, resuming after each (about 15 min); every job must end exactly once
	AEGIS_EXEC_STRESS=$${AEGIS_EXEC_STRESS:-20} $(GO) test ./cmd/aegis -run TestExecKillResumeStress -count=1 -v -timeout 60m

gpu-check: ## on a machine with an NVIDIA GPU and PyTorch: tiny real jobs through aegis exec, then check the telemetry
	bash scripts/gpu-check.sh

gpu-check-emulated: build ## the same check on an emulated A100 (no GPU needed; hardware checks SKIP)
	GPU_CHECK_EMULATE=a100-40gb AEGIS_BIN=$(BIN) bash scripts/gpu-check.sh

TESTFLAGS ?=
# go test -v into a log: the packages' lines are printed, then how many tests
# skipped and why (one line per reason, with its count); on a failure the
# log without its RUN and PASS lines.
test: fmtcheck ## run every test (fuzz targets run their seed corpus only); prints the skipped tests' count and reasons
	@log=$$(mktemp); $(GO) test -v $(TESTFLAGS) ./... > $$log 2>&1; s=$$?; \
	if [ $$s -ne 0 ]; then grep -v -E '^ *(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' $$log; rm -f $$log; exit $$s; fi; \
	grep -E '^(ok|\?) ' $$log; \
	n=$$(grep -c -E '^ *--- SKIP' $$log); echo "$$n tests skipped$$( [ $$n -gt 0 ] && echo ", by reason:")"; \
	awk '/^(ok|PASS|FAIL)/{ split("", why) } /^=== (RUN|CONT|NAME) /{ cur = $$3 } \
	  /^[ \t]+[^ ]+_test\.go:[0-9]+: / && !(cur in why) { r = $$0; sub(/^[ \t]+[^ ]+_test\.go:[0-9]+: /, "", r); why[cur] = r } \
	  /--- SKIP: /{ print (($$3 in why) ? why[$$3] : "(no reason given)") }' $$log | sort | uniq -c | sort -rn; \
	rm -f $$log

fmtcheck: ## fail if any Go file needs gofmt
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

BENCH ?= .
BENCHFLAGS ?= -count 1
bench: ## run the benchmarks (BENCH=regexp), writing bench.txt
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(BENCHFLAGS) ./... > bench.txt; s=$$?; cat bench.txt; exit $$s

growth-plot: ## run BenchmarkGrowth (up to 10^6 jobs) and draw docs/growth.csv and docs/growth.png
	AEGIS_BENCH_LARGE=1 $(MAKE) bench BENCH=Growth
	$(GO) run ./cmd/growthplot -in bench.txt -out docs/growth

benchstat: ## compare bench.txt with the committed baseline (bench/baseline.txt)
	$(GO) tool benchstat bench/baseline.txt bench.txt

demo: build ## simulate the embedded demo trace under Exclusive on 3 x A100-40GB
	./$(BIN) simulate --trace demo --policy exclusive --server a100-40gb:3 --seed 1

TESTBED = $${AEGIS_SHARED:-../shared}/calibration/aegis/testbed_runs

reproduce: build ## run every shipped spec (experiments/*.yaml) into results/paper, the testbed's runs beside ours, then fidelity.md
	./$(BIN) run experiments/*.yaml --out results/paper
	@if [ -d "$(TESTBED)" ]; then for tr in philly saturn; do for f in "$(TESTBED)"/$$tr/job_metrics__*.csv; do \
		l=$$(basename $$f .csv); l=$${l#job_metrics__}; \
		./$(BIN) measured "$$f" --trace $$tr --seeds 1-5 --dcgm "$(TESTBED)/dcgm_run_distributions.csv" --format svg --out results/paper/measured/$$tr-$$l > /dev/null || exit 1; \
	done; done; else echo "no testbed runs at $(TESTBED): results/paper/measured not made"; fi
	./$(BIN) fidelity results/paper

docs-tables: ## regenerate the measured tables and figure of README.md and docs/*.md
	$(GO) test ./docs -run 'TestDocs' -update -count=1

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

vet: ## go vet
	$(GO) vet ./...

.PHONY: lint
lint: ## go vet and staticcheck (the version pinned in go.mod's tool directive)
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

FUZZTIME ?= 30s
# FUZZMINIMIZE bounds the minimizing of each new interesting input, which
# otherwise may take up to a minute per input and leave no time to fuzz.
FUZZMINIMIZE ?= 2s
fuzz: ## fuzz every parser for FUZZTIME each (make fuzz FUZZTIME=60s)
	@for p in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$p/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$p $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$p || exit 1; \
	  done; \
	done
