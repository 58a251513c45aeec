# GNU make. `make test` is what CI runs (via .ci/run); it installs the pinned
# tools first so a clean clone with only Go can run every test and linter.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-print-directory

GO ?= go
# Written by `make tools`: MINIO_BIN, HELM_BIN, TFLINT_BIN, TERRAFORM_BIN,
# STATICCHECK_BIN, REGISTRY_BIN, COSIGN_BIN, ACTIONLINT_BIN, ... (one per
# tool of .ci/install-tools.sh).
TOOLS_ENV := .cache/tools.env
MODULE := github.com/kubecost-s3-exporter/kubecost-s3-exporter
# Stamped into the binaries and the image (make build, make image).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X $(MODULE)/exporter.Version=$(VERSION)
# The product and the test kit start goroutines, so their tests run under
# the race detector; chart, terraform, quicksight, cmd and the benchmark
# driver run without it, where it would only multiply their time.
RACE_PKGS := ./exporter/... ./internal/testkit/...

.PHONY: tools test check build generate demo bench bench-cur bench-report fuzz fmt vet clean lint-chart lint-terraform \
	image image-push chart-package chart-push sign release-assets notices

tools:
	@bash .ci/install-tools.sh --env-file $(TOOLS_ENV) >/dev/null

# Runs every check even after a failure so one CI run reports everything.
# go test's per-package summary is repeated as the last lines, because CI
# reads the closing lines. helm lint, terraform fmt and tflint run inside
# go test (chart and terraform packages), so they run once.
test: tools
	@set -a; . ./$(TOOLS_ENV); set +a; \
	echo "tools: MINIO_BIN=$$MINIO_BIN HELM_BIN=$$HELM_BIN TFLINT_BIN=$$TFLINT_BIN TERRAFORM_BIN=$$TERRAFORM_BIN STATICCHECK_BIN=$$STATICCHECK_BIN REGISTRY_BIN=$${REGISTRY_BIN:-} COSIGN_BIN=$${COSIGN_BIN:-} ACTIONLINT_BIN=$${ACTIONLINT_BIN:-} PROMTOOL_BIN=$${PROMTOOL_BIN:-} CHROMIUM_BIN=$${CHROMIUM_BIN:-}"; \
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
	$(GO) mod tidy -diff 2>&1 | { grep -v '^go: downloading ' || true; } || failed="$$failed go-mod-tidy"; \
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

# ---- Release (docs/release.md). Nothing here needs a container engine. ----
# The chart's version is the tag without its "v"; an untagged build gets a
# placeholder, since helm needs SemVer.
CHART_VERSION ?= $(shell v='$(VERSION)'; v="$${v#v}"; if [[ "$$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$ ]]; then echo "$$v"; else echo 0.0.0-dev; fi)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The commit's time is the image's creation time and every chart entry's
# mtime: one commit, one digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# SPDX identifier of the licence (LICENSE): the image label, the SBOM.
LICENSES ?= Apache-2.0
# Where `make image-push` and `make chart-push` publish. The chart's default
# image.repository is IMAGE_REPO, and its default tag (appVersion) VERSION.
IMAGE_REPO ?= ghcr.io/kubecost-s3-exporter/kubecost-s3-exporter
CHART_REPO ?= oci://ghcr.io/kubecost-s3-exporter/charts
# The release's base: distroless static, pinned by digest so one commit
# always builds on the same bytes. The pin is the FROM line of
# release/base/Dockerfile, a file nothing builds, where Dependabot (docker)
# finds it and proposes the digest the tag names today; `make bump-base`
# does the same by hand.
BASE_FILE := release/base/Dockerfile
RELEASE_BASE := $(shell sed -n 's/^FROM //p' $(BASE_FILE))
# "local" builds the base from Debian's CA bundle with distroless's layout
# (no pull: what the tests and `make image` use); "release" is RELEASE_BASE.
IMAGE_BASE ?= local
RELEASE_DIR ?= bin/release
# The repository the source label and the SBOM name: the fork's own on a
# fork's workflow.
SOURCE_URL ?= $(if $(GITHUB_REPOSITORY),$(GITHUB_SERVER_URL)/$(GITHUB_REPOSITORY),https://github.com/kubecost-s3-exporter/kubecost-s3-exporter)
IMAGE_FLAGS = -version $(VERSION) -revision $(REVISION) -created $(SOURCE_DATE_EPOCH) -source $(SOURCE_URL) \
	-licenses '$(LICENSES)' -base $(if $(filter release,$(IMAGE_BASE)),$(RELEASE_BASE),$(IMAGE_BASE)) -bin-dir $(RELEASE_DIR)
CHART_FLAGS = -chart chart -version $(CHART_VERSION) -app-version $(VERSION) -image-repo $(IMAGE_REPO) \
	-created $(SOURCE_DATE_EPOCH) -out-dir $(RELEASE_DIR) -digest-file $(RELEASE_DIR)/chart.digest \
	-manifest-file $(RELEASE_DIR)/chart.manifest.json
# cosign's extra flags, for every command and for those that talk to the
# registry: the tests sign offline (--tlog-upload=false) against a
# plain-HTTP registry.
COSIGN_FLAGS ?=
COSIGN_REGISTRY_FLAGS ?=

.PHONY: release-build release-check release-github-state release-plan release-publish release-names bump-base

# The linux/amd64 + linux/arm64 index and its SBOM into an OCI layout
# (.cache/image), the binaries and the SPDX SBOM into RELEASE_DIR. Only Go
# is needed. The binaries are built with -trimpath -buildvcs=false and a
# fixed GOFLAGS (internal/imagebuild), so a clone, a copy and a runner give
# the same bytes.
image:
	@mkdir -p $(RELEASE_DIR)
	$(GO) run ./cmd/kse-image $(IMAGE_FLAGS) -oci-layout $(or $(OCI_LAYOUT),.cache/image) -digest-file $(RELEASE_DIR)/image.digest \
		-manifest-file $(RELEASE_DIR)/image.manifest.json

# The same build pushed to IMAGE_REPO as :VERSION, with the SBOM attached
# as a referrer. A tag that already names this digest is left alone; one
# naming another digest stops the push. Credentials: ~/.docker/config.json.
image-push:
	@mkdir -p $(RELEASE_DIR)
	$(GO) run ./cmd/kse-image $(IMAGE_FLAGS) -push $(IMAGE_REPO):$(VERSION) -digest-file $(RELEASE_DIR)/image.digest

# The chart .tgz, byte for byte the same for one commit, pointing at
# IMAGE_REPO:VERSION by default, and its manifest digest (chart.digest).
chart-package:
	$(GO) run ./cmd/kse-chart $(CHART_FLAGS)

# Pushes the chart (the same rules as image-push).
chart-push:
	$(GO) run ./cmd/kse-chart $(CHART_FLAGS) -push $(CHART_REPO)

# Every release file, nothing pushed: what the reproducibility test builds
# twice and compares.
release-build: image chart-package release-assets

# Before anything is pushed: fails when this version's image or chart tag
# names other bytes; writes RELEASE_DIR/state, what of this build the
# registry holds, by content: the tags name this build's digests, and the
# signatures and the SBOM attestation verify (cosign verify) under the
# release workflow's identity, SIGNER_IDENTITY. A `.sig` tag made with
# another key or by another workflow reads as absent.
# COSIGN_TRUST_FLAGS say what the certificates chain to: empty, the
# Sigstore public-good root; the tests name a local CA.
SIGNER_REPO ?= $(or $(GITHUB_REPOSITORY),kubecost-s3-exporter/kubecost-s3-exporter)
COSIGN_TRUST_FLAGS ?=
COSIGN_BLOB_TRUST_FLAGS ?=
KSE_RELEASE_ENV = COSIGN_TRUST_FLAGS='$(COSIGN_TRUST_FLAGS)' COSIGN_BLOB_TRUST_FLAGS='$(COSIGN_BLOB_TRUST_FLAGS)' \
	COSIGN_REGISTRY_FLAGS='$(COSIGN_REGISTRY_FLAGS)'
KSE_RELEASE_FLAGS = -dir $(RELEASE_DIR) -tag $(VERSION) -repo $(SIGNER_REPO)
release-check:
	@if [ -z "$${COSIGN_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh cosign)"; fi; \
	{ $(GO) run ./cmd/kse-image $(IMAGE_FLAGS) -check $(IMAGE_REPO):$(VERSION) -digest-file $(RELEASE_DIR)/image.digest && \
	$(GO) run ./cmd/kse-chart $(CHART_FLAGS) -check $(CHART_REPO) && \
	$(KSE_RELEASE_ENV) $(GO) run ./cmd/kse-release registry-state $(KSE_RELEASE_FLAGS) -cosign "$$COSIGN_BIN" \
		-image $(IMAGE_REPO) -chart $(patsubst oci://%,%,$(CHART_REPO))/kubecost-s3-exporter; } >$(RELEASE_DIR)/state; \
	st=$$?; cat $(RELEASE_DIR)/state; exit $$st

# The tag's GitHub release, a draft too (GITHUB_API_URL, GH_TOKEN): whether
# its SHA256SUMS.sigstore.json verifies against this build's SHA256SUMS
# under the release identity; fails when the release holds what the
# publish step must not replace, or an asset that is neither a release
# file nor PROVENANCE. Appends to RELEASE_DIR/state. Before the
# provenance bundles exist (release.yml's check job, before build.yml
# attests), PENDING names them instead: a known asset whose bytes the
# publish job's run, with PROVENANCE, checks.
PROVENANCE ?=
PENDING ?=
release-github-state:
	@if [ -z "$${COSIGN_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh cosign)"; fi; \
	$(KSE_RELEASE_ENV) $(GO) run ./cmd/kse-release github-state $(KSE_RELEASE_FLAGS) -cosign "$$COSIGN_BIN" -attach '$(PROVENANCE)' -pending '$(PENDING)' >>$(RELEASE_DIR)/state && \
	cat $(RELEASE_DIR)/state

# What a release run must still publish, as step outputs (cmd/kse-release):
# SCOPE=publish reads STATE (release-check's and release-github-state's
# lines), SCOPE=provenance the digests attested for the tag. No network.
SCOPE ?= publish
STATE ?= $(RELEASE_DIR)/state
release-plan:
	@$(GO) run ./cmd/kse-release plan -dir $(RELEASE_DIR) -state $(STATE) -scope $(SCOPE)

# The GitHub release, published last: creates the tag's release as a
# draft (or finds the draft a failed run left), uploads what it lacks
# (SHA256SUMS, the files it lists, the signature bundle, PROVENANCE), reads
# every asset back and checks it, then publishes; a pre-release tag
# (-rc.N, any -suffix) is marked pre-release, never Latest.
release-publish:
	@if [ -z "$${COSIGN_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh cosign)"; fi; \
	$(KSE_RELEASE_ENV) $(GO) run ./cmd/kse-release publish $(KSE_RELEASE_FLAGS) -cosign "$$COSIGN_BIN" -attach '$(PROVENANCE)'

# The names the builder attests the image and the chart under.
release-names:
	@echo "image-name=$(IMAGE_REPO)"; echo "chart-name=$(patsubst oci://%,%,$(CHART_REPO))/kubecost-s3-exporter"

# Signs the pushed image and chart by digest, attests the SBOM on the image
# and signs SHA256SUMS into a Sigstore bundle (a release file). SIGN picks
# the parts (the release plan passes the missing ones). Without COSIGN_KEY
# cosign signs keyless (the release workflow's OIDC identity); with it,
# with that key, and with COSIGN_CERT (and COSIGN_CERT_CHAIN) the
# signatures carry that certificate (the tests' stand-in for Fulcio's).
# The SLSA provenance is not made here: build.yml attests it.
SIGN ?= image sbom chart sums
sign:
	@if [ -z "$${COSIGN_BIN:-}" ]; then eval "$$(bash .ci/install-tools.sh cosign)"; fi; \
	key="$${COSIGN_KEY:+--key $$COSIGN_KEY} $${COSIGN_CERT:+--certificate $$COSIGN_CERT} $${COSIGN_CERT_CHAIN:+--certificate-chain $$COSIGN_CERT_CHAIN}"; \
	reg="$(COSIGN_FLAGS) $(COSIGN_REGISTRY_FLAGS)"; \
	image=$(IMAGE_REPO)@$$(cat $(RELEASE_DIR)/image.digest); \
	chart=$(patsubst oci://%,%,$(CHART_REPO))/kubecost-s3-exporter@$$(cat $(RELEASE_DIR)/chart.digest); \
	for part in $(SIGN); do \
		case $$part in \
		image) set -x; "$$COSIGN_BIN" sign --yes $$key $$reg $$image ;; \
		sbom) set -x; "$$COSIGN_BIN" attest --yes $$key $$reg --type spdxjson --predicate $(RELEASE_DIR)/kubecost-s3-exporter_$(VERSION).spdx.json $$image ;; \
		chart) set -x; "$$COSIGN_BIN" sign --yes $$key $$reg $$chart ;; \
		sums) set -x; "$$COSIGN_BIN" sign-blob --yes $${COSIGN_KEY:+--key $$COSIGN_KEY} $(COSIGN_FLAGS) --new-bundle-format --bundle $(RELEASE_DIR)/SHA256SUMS.sigstore.json $(RELEASE_DIR)/SHA256SUMS ;; \
		*) echo "make sign: SIGN has $$part; the parts are image sbom chart sums" >&2; exit 2 ;; \
		esac || exit; set +x; \
	done

# SHA256SUMS over the release files: the binaries, the SBOM, the chart and
# THIRD_PARTY_NOTICES (copied here), in a fixed order.
release-assets:
	cp THIRD_PARTY_NOTICES $(RELEASE_DIR)/THIRD_PARTY_NOTICES
	cd $(RELEASE_DIR) && sha256sum THIRD_PARTY_NOTICES kubecost-s3-exporter_linux_amd64 kubecost-s3-exporter_linux_arm64 \
		kubecost-s3-exporter_$(VERSION).spdx.json kubecost-s3-exporter-$(CHART_VERSION).tgz >SHA256SUMS && cat SHA256SUMS

# THIRD_PARTY_NOTICES from the module graph of the exporter (cmd/kse-notices):
# run it after a dependency or toolchain change; a test fails until then.
notices:
	$(GO) run ./cmd/kse-notices -o THIRD_PARTY_NOTICES

# Moves the base pin (BASE_FILE) to the digest distroless's tag names today
# (needs network). Commit it on its own: the image digest moves.
BASE_TAG := $(firstword $(subst @, ,$(RELEASE_BASE)))
bump-base:
	@pinned=$$($(GO) run ./cmd/kse-image -resolve-base $(BASE_TAG)); \
	sed -i.bak "s|^FROM .*|FROM $$pinned|" $(BASE_FILE) && rm -f $(BASE_FILE).bak; \
	echo "$(BASE_FILE): FROM $$pinned"

# demo and bench need only Go: no slow tool installs here.
demo:
	@bash .ci/demo.sh

bench:
	@bash .ci/bench.sh
	@bash .ci/bench-cur.sh

# The report with -cur over a synthetic month of CUR (docs/performance.md).
bench-cur:
	@bash .ci/bench-cur.sh

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
	rm -rf bin/ demo-output/ demo-output-federated/ demo-cur-export/
