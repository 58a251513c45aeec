# GNU make. `make test` is what CI runs (via .ci/run); it installs the pinned
# tools first so a clean clone with only Go can run every test and linter.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-print-directory

GO ?= go
# Written by `make tools`: MINIO_BIN, HELM_BIN, TFLINT_BIN, TERRAFORM_BIN.
TOOLS_ENV := .cache/tools.env

.PHONY: tools test build demo bench bench-report fmt vet clean lint-chart lint-terraform

tools:
	@bash .ci/install-tools.sh --env-file $(TOOLS_ENV) >/dev/null

# Runs vet, tests and linters even after a failure so one CI run reports
# everything. go test's per-package summary is repeated as the last lines,
# because CI reads the closing lines and the linters print after go test.
test: tools
	@set -a; . ./$(TOOLS_ENV); set +a; \
	echo "tools: MINIO_BIN=$$MINIO_BIN HELM_BIN=$$HELM_BIN TFLINT_BIN=$$TFLINT_BIN TERRAFORM_BIN=$$TERRAFORM_BIN CHROMIUM_BIN=$${CHROMIUM_BIN:-}"; \
	failed=""; \
	echo "== go vet ./..."; \
	$(GO) vet ./... || failed="$$failed vet"; \
	echo "== go test ./..."; \
	$(GO) test -count=1 -timeout 40m ./... 2>&1 | tee .cache/go-test.log || failed="$$failed go-test"; \
	$(MAKE) lint-chart || failed="$$failed lint-chart"; \
	$(MAKE) lint-terraform || failed="$$failed lint-terraform"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed"; else echo "make test: all steps passed"; fi; \
	echo "== go test summary"; \
	grep -E '^(ok|FAIL|---)' .cache/go-test.log || true; \
	[ -z "$$failed" ]

# Linters skip cleanly until the chart / terraform trees exist. They fetch
# their own tool path when run alone (instant once cached). fmt needs no CLI
# config, and a dangling TF_CLI_CONFIG_FILE would only print a warning.
lint-chart:
	@if [ ! -f chart/Chart.yaml ]; then echo "== lint-chart: no chart/Chart.yaml, skipped"; exit 0; fi; \
	if [ -z "$${HELM_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh helm)"; fi; \
	echo "== helm lint --strict chart"; \
	"$$HELM_BIN" lint --strict chart; \
	for f in chart/ci/*-values.yaml; do \
		[ -e "$$f" ] || continue; \
		echo "== helm lint --strict chart -f $$f"; \
		"$$HELM_BIN" lint --strict chart -f "$$f"; \
	done

lint-terraform:
	@if [ ! -d terraform ]; then echo "== lint-terraform: no terraform/, skipped"; exit 0; fi; \
	if [ -z "$${TERRAFORM_BIN:-}" ] || [ -z "$${TFLINT_BIN:-}" ]; then \
		eval "$$(bash .ci/install-tools.sh terraform tflint)"; fi; \
	if [ -n "$${TF_CLI_CONFIG_FILE:-}" ] && [ ! -f "$$TF_CLI_CONFIG_FILE" ]; then \
		unset TF_CLI_CONFIG_FILE; fi; \
	echo "== terraform fmt -check -recursive terraform"; \
	CHECKPOINT_DISABLE=1 "$$TERRAFORM_BIN" fmt -check -recursive -diff terraform; \
	cfg=(); \
	if [ -f terraform/.tflint.hcl ]; then cfg=(--config "$$PWD/terraform/.tflint.hcl"); \
	elif [ -f .tflint.hcl ]; then cfg=(--config "$$PWD/.tflint.hcl"); fi; \
	echo "== tflint --recursive $${cfg[*]:-} (in terraform/)"; \
	cd terraform && "$$TFLINT_BIN" --recursive "$${cfg[@]}"

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ ./cmd/...

# demo and bench need only Go: no slow tool installs here.
demo:
	@bash .ci/demo.sh

bench:
	@bash .ci/bench.sh

# Peak RSS of the HTML report over a month of 1M-allocation days.
bench-report:
	@bash .ci/bench-report.sh

fmt:
	$(GO) fmt ./...

vet:
	$(GO) vet ./...

clean:
	rm -rf bin/ demo-output/
