# GNU make. `make test` is what CI runs (via .ci/run); it installs the pinned
# tools first so a clean clone with only Go can run every test and linter.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-print-directory

GO ?= go
# Written by `make tools`: MINIO_BIN, HELM_BIN, TFLINT_BIN, TERRAFORM_BIN,
# STATICCHECK_BIN.
TOOLS_ENV := .cache/tools.env
MODULE := github.com/kubecost-s3-exporter/kubecost-s3-exporter
# Stamped into the binaries as the Dockerfile does (its VERSION build arg).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X $(MODULE)/exporter.Version=$(VERSION)
# The product and the test kit start goroutines, so their tests run under
# the race detector; chart, terraform, quicksight, cmd and the benchmark
# driver run without it, where it would only multiply their time.
RACE_PKGS := ./exporter/... ./internal/testkit/...

.PHONY: tools test check build generate demo bench bench-report fuzz fmt vet clean lint-chart lint-terraform

tools:
	@bash .ci/install-tools.sh --env-file $(TOOLS_ENV) >/dev/null

# Runs every check even after a failure so one CI run reports everything.
# go test's per-package summary is repeated as the last lines, because CI
# reads the closing lines. helm lint, terraform fmt and tflint run inside
# go test (chart and terraform packages), so they run once.
test: tools
	@set -a; . ./$(TOOLS_ENV); set +a; \
	echo "tools: MINIO_BIN=$$MINIO_BIN HELM_BIN=$$HELM_BIN TFLINT_BIN=$$TFLINT_BIN TERRAFORM_BIN=$$TERRAFORM_BIN STATICCHECK_BIN=$$STATICCHECK_BIN CHROMIUM_BIN=$${CHROMIUM_BIN:-}"; \
	failed=""; \
	$(MAKE) check || failed="$$failed check"; \
	race=$$($(GO) list $(RACE_PKGS)); \
	plain=$$($(GO) list ./... | grep -vxF "$$race"); \
	echo "== go test -race $(RACE_PKGS)"; \
	$(GO) test -race -count=1 -timeout 40m $$race 2>&1 | tee .cache/go-test.log || failed="$$failed go-test-race"; \
	echo "== go test (chart, terraform, quicksight, cmd, bench)"; \
	$(GO) test -count=1 -timeout 40m $$plain 2>&1 | tee -a .cache/go-test.log || failed="$$failed go-test"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed"; else echo "make test: all steps passed"; fi; \
	echo "== go test summary"; \
	grep -E '^(ok|FAIL|---)' .cache/go-test.log || true; \
	[ -z "$$failed" ]

# The static checks reviewers make: formatting, a tidy go.mod, vet,
# staticcheck, and no testing package in the shipped binaries.
check:
	@failed=""; \
	if [ -z "$${STATICCHECK_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh staticcheck)"; fi; \
	echo "== gofmt -l"; \
	unformatted=$$(find . -name '*.go' -not -path './.git/*' -not -path './.cache/*' -not -path './bin/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-ed (run make fmt):"; echo "$$unformatted"; failed="$$failed gofmt"; fi; \
	echo "== go mod tidy -diff"; \
	$(GO) mod tidy -diff || failed="$$failed go-mod-tidy"; \
	echo "== go vet ./..."; \
	$(GO) vet ./... || failed="$$failed vet"; \
	echo "== staticcheck ./..."; \
	"$$STATICCHECK_BIN" ./... || failed="$$failed staticcheck"; \
	echo "== no testing package in ./cmd/..."; \
	if $(GO) list -deps ./cmd/... | grep -x testing >/dev/null; then \
		echo "a command links the testing package; test helpers must take a small interface (see internal/testkit/tooltest.TB)"; \
		failed="$$failed testing-import"; fi; \
	if [ -n "$$failed" ]; then echo "check: FAILED:$$failed"; exit 1; fi

# Rewrites every generated file (see terraform/internal/gen).
generate:
	$(GO) generate ./terraform/...

# The linters run as Go tests; these targets run them alone.
lint-chart:
	$(GO) test -count=1 ./chart -run 'TestLintStrict'

lint-terraform:
	$(GO) test -count=1 ./terraform -run 'TestTerraformFmt|TestTFLint'

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# demo and bench need only Go: no slow tool installs here.
demo:
	@bash .ci/demo.sh

bench:
	@bash .ci/bench.sh

# Runs each fuzzer of the JSON reader for FUZZTIME (their seed corpus runs
# in every `make test`). New failing inputs are kept under
# exporter/kubecost/testdata/fuzz/ and then run as seeds too.
# FUZZPARALLEL bounds the fuzzing workers (go test -parallel). Each input
# that finds new code is minimized first, reporting no executions
# meanwhile; go's default of 60 s per input would take most of a short run
# on the kilobyte-long response seeds, so FUZZMINIMIZETIME bounds it.
FUZZTIME ?= 3m
FUZZPARALLEL ?= 2
FUZZMINIMIZETIME ?= 5s
FUZZ_TARGETS := FuzzDecode FuzzScanner FuzzFloat
fuzz:
	@for f in $(FUZZ_TARGETS); do \
		echo "== $$f for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) -parallel $(FUZZPARALLEL) ./exporter/kubecost/ || exit 1; \
	done

# Peak RSS of the HTML report over a month of 1M-allocation days.
bench-report:
	@bash .ci/bench-report.sh

fmt:
	$(GO) fmt ./...

vet:
	$(GO) vet ./...

clean:
	rm -rf bin/ demo-output/
