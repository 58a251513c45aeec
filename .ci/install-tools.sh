#!/usr/bin/env bash
# Installs the pinned CLI tools the tests and linters need, with `go install`,
# into a per-version cache so CI (clean clone, only Go present) can rebuild
# them deterministically and later runs are instant.
#
# Usage: .ci/install-tools.sh [--env-file FILE] [TOOL...]
#   TOOL is any of: minio helm tflint terraform staticcheck etcd
#   kube-apiserver kube-controller-manager kube-scheduler promtool chromium
#   (default: all).
#   chromium is Debian's package (apt-get, as root), used by the HTML report's
#   browser test; the others are built from Go modules.
# Prints one `NAME_BIN=path` line per requested tool on stdout (logs go to
# stderr), so callers can `eval "$(.ci/install-tools.sh helm)"`.
# With --env-file the same lines are also written to FILE.
# At most KSE_TOOLS_JOBS builds (default 2) run at once: each takes a core
# and up to 2 GB, and more only makes them all slower. stderr gets one line
# per tool; go's own output (its many `go: downloading` lines) goes to
# <tools dir>/logs/<tool>.log, which is printed when that build fails.
set -euo pipefail

# name|module@version|env var. Bump versions here only.
TOOLS=(
	"minio|github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c|MINIO_BIN"
	"helm|helm.sh/helm/v3/cmd/helm@v3.22.0|HELM_BIN"
	"tflint|github.com/terraform-linters/tflint@v0.64.0|TFLINT_BIN"
	# 1.5.7 is the last MPL release that `go install` accepts (no replace directives).
	"terraform|github.com/hashicorp/terraform@v1.5.7|TERRAFORM_BIN"
	# 0.8.x (staticcheck 2026.1) understands the go directive in go.mod.
	"staticcheck|honnef.co/go/tools/cmd/staticcheck@v0.8.2|STATICCHECK_BIN"
	# A control plane for the chart's install/upgrade tests. These cannot be
	# `go install`ed (their main modules use replace directives); each is built
	# from a small recipe module under .ci/k8s-tools whose go.mod pins the
	# version written here (checked below). The cache key also hashes the
	# recipe, so editing it rebuilds.
	"etcd|go.etcd.io/etcd/server/v3@v3.6.16|ETCD_BIN|.ci/k8s-tools/etcd|."
	"kube-apiserver|k8s.io/kubernetes@v1.34.4|KUBE_APISERVER_BIN|.ci/k8s-tools/apiserver|k8s.io/kubernetes/cmd/kube-apiserver"
	"kube-controller-manager|k8s.io/kubernetes@v1.34.4|KUBE_CONTROLLER_MANAGER_BIN|.ci/k8s-tools/apiserver|k8s.io/kubernetes/cmd/kube-controller-manager"
	"kube-scheduler|k8s.io/kubernetes@v1.34.4|KUBE_SCHEDULER_BIN|.ci/k8s-tools/apiserver|k8s.io/kubernetes/cmd/kube-scheduler"
	# The release round trip (package release): an OCI registry on 127.0.0.1,
	# image and chart signing, and the workflow linter.
	"registry|github.com/distribution/distribution/v3/cmd/registry@v3.1.2|REGISTRY_BIN"
	"cosign|github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5|COSIGN_BIN"
	"actionlint|github.com/rhysd/actionlint/cmd/actionlint@v1.7.12|ACTIONLINT_BIN"
	# The real Prometheus rule engine for the chart's alert tests (promtool
	# check rules / test rules). `go install` refuses every v0.30x (replace and
	# exclude directives in its go.mod); the recipe builds it as a dependency.
	# v0.309.1 is Prometheus 3.9.1.
	"promtool|github.com/prometheus/prometheus@v0.309.1|PROMTOOL_BIN|.ci/promtool|github.com/prometheus/prometheus/cmd/promtool"
	# Not a Go module: installed from the distribution, never downloaded by a test.
	"chromium|apt:chromium|CHROMIUM_BIN"
)
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

tools_dir="${KSE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecost-s3-exporter/tools}"
env_file=""
requested=()
while (($#)); do
	case "$1" in
	--env-file) env_file="${2:?--env-file needs a path}"; shift 2 ;;
	--env-file=*) env_file="${1#*=}"; shift ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	-*) echo "install-tools: unknown flag $1" >&2; exit 2 ;;
	*) requested+=("$1"); shift ;;
	esac
done

# One printf per line: lines of concurrent builds never interleave.
log() { printf '%s install-tools: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

max_jobs="${KSE_TOOLS_JOBS:-2}"
logs_dir="$tools_dir/logs"

# failed_log name file: the build's output, indented, after its FAILED line.
failed_log() {
	log "$1: go's output ($2):"
	sed 's/^/    /' "$2" >&2
}

lookup() { # name -> "module@version|ENV[|recipe dir|package]", or fail
	local entry
	for entry in "${TOOLS[@]}"; do
		if [[ "${entry%%|*}" == "$1" ]]; then
			printf '%s\n' "${entry#*|}"
			return 0
		fi
	done
	return 1
}

if ((${#requested[@]} == 0)); then
	for entry in "${TOOLS[@]}"; do requested+=("${entry%%|*}"); done
fi

# Build one tool into a private temp dir next to its final place, then rename:
# rename(2) is atomic on one filesystem, so concurrent runs never expose a
# half-written binary and the loser of a race just overwrites an equal file.
build() {
	local name="$1" pkg="$2" dest="$3" start tmp rc=0
	start=$SECONDS
	mkdir -p "$(dirname "$dest")"
	tmp="$(mktemp -d "$(dirname "$dest")/.build.XXXXXX")"
	local out="$logs_dir/$name.log"
	# CGO off: static binaries, and CI machines may lack a C toolchain.
	# -s -w drops symbol tables (binaries roughly halve in size).
	CGO_ENABLED=0 GOBIN="$tmp" nice -n 10 go install -trimpath -ldflags='-s -w' "$pkg" >"$out" 2>&1 || rc=$?
	if ((rc == 0)) && [[ -x "$tmp/$name" ]]; then
		mv -f "$tmp/$name" "$dest"
		log "$name: built in $((SECONDS - start))s -> $dest"
	else
		log "$name: FAILED after $((SECONDS - start))s (go install $pkg)"
		failed_log "$name" "$out"
		rc=1
	fi
	rm -rf "$tmp"
	return "$rc"
}

# Build the missing tools of one recipe module with a single `go build`, so
# binaries sharing most packages (the Kubernetes ones) compile them once.
# Args: recipe dir, then name=package=dest triples. nice: the build is long
# (kube-apiserver: minutes and about 2 GB) and must not starve other work.
build_recipe() {
	local dir="$1" start tmp rc=0 item name pkg dest pkgs=()
	shift
	start=$SECONDS
	for item in "$@"; do
		IFS='=' read -r name pkg dest <<<"$item"
		pkgs+=("$pkg")
	done
	mkdir -p "$tools_dir"
	tmp="$(mktemp -d "$tools_dir/.build.XXXXXX")"
	local out="$logs_dir/$(basename "$dir").log"
	(cd "$repo_root/$dir" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags='-s -w' -o "$tmp/" "${pkgs[@]}") >"$out" 2>&1 || rc=$?
	for item in "$@"; do
		IFS='=' read -r name pkg dest <<<"$item"
		local built="$tmp/${pkg##*/}"
		[[ "$pkg" == "." ]] && built="$tmp/$(basename "$dir")"
		if ((rc == 0)) && [[ -x "$built" ]]; then
			mkdir -p "$(dirname "$dest")"
			mv -f "$built" "$dest"
			log "$name: built in $((SECONDS - start))s -> $dest"
		else
			log "$name: FAILED after $((SECONDS - start))s (go build $pkg in $dir)"
			rc=1
		fi
	done
	((rc == 0)) || failed_log "$dir" "$out"
	rm -rf "$tmp"
	return "$rc"
}

# recipe_key dir module@version: fails unless the recipe's go.mod requires
# that version; prints a short hash of the recipe's files for the cache path.
recipe_key() {
	local dir="$repo_root/$1" mod="${2%@*}" version="${2##*@}"
	if ! grep -Eq "^[[:space:]]*(require[[:space:]]+)?${mod//./\\.}[[:space:]]+${version//./\\.}([[:space:]]|$)" "$dir/go.mod"; then
		echo "install-tools: $1/go.mod does not require $mod $version" >&2
		return 1
	fi
	local files=("$dir"/go.mod "$dir"/go.sum)
	shopt -s nullglob
	files+=("$dir"/*.go)
	shopt -u nullglob
	cat "${files[@]}" | sha256sum | cut -c1-12
}

# apt_install puts Debian's package on the machine unless /usr/bin/<name>
# already exists. Without apt-get or root it fails; Require in the tests then
# skips the browser test locally and fails it in CI.
# KSE_APT_GET and KSE_APT_BIN_DIR stand in for apt-get and /usr/bin in the
# script's own test (release/installtools_test.go).
apt_bin_dir="${KSE_APT_BIN_DIR:-/usr/bin}"
apt_install() {
	local name="$1" start=$SECONDS
	if [[ -x "$apt_bin_dir/$name" ]]; then
		log "$name: present $apt_bin_dir/$name"
		return 0
	fi
	if ! command -v "${KSE_APT_GET:-apt-get}" >/dev/null || { [[ -z "${KSE_APT_GET:-}" ]] && [[ "$(id -u)" != 0 ]]; }; then
		log "$name: $apt_bin_dir/$name missing and apt-get is unavailable or needs root; install the $name package"
		return 1
	fi
	local out="$logs_dir/$name.log"
	mkdir -p "$logs_dir"
	# On a fresh machine another apt-get (unattended-upgrades, cloud-init)
	# may hold the dpkg lock; apt-get then fails at once. Wait for it instead,
	# up to KSE_APT_LOCK_TIMEOUT seconds.
	local lock_timeout="${KSE_APT_LOCK_TIMEOUT:-600}"
	log "$name: apt-get install (waits up to ${lock_timeout}s for the dpkg lock if another apt-get holds it)"
	{
		"${KSE_APT_GET:-apt-get}" -o DPkg::Lock::Timeout="$lock_timeout" update -qq &&
			DEBIAN_FRONTEND=noninteractive "${KSE_APT_GET:-apt-get}" -o DPkg::Lock::Timeout="$lock_timeout" install -y -qq "$name"
	} >"$out" 2>&1 || true
	if [[ -x "$apt_bin_dir/$name" ]]; then
		log "$name: installed with apt-get in $((SECONDS - start))s"
		return 0
	fi
	log "$name: FAILED (apt-get install $name)"
	failed_log "$name" "$out"
	return 1
}

env_lines=()
queue=()  # "label|function args..." (args are space-free by construction)
declare -A recipe_items=()
total_start=$SECONDS
for name in "${requested[@]}"; do
	if ! spec="$(lookup "$name")"; then
		echo "install-tools: unknown tool '$name' (known: ${TOOLS[*]%%|*})" >&2
		exit 2
	fi
	IFS='|' read -r pkg var recipe recipe_pkg <<<"$spec"
	if [[ "$pkg" == apt:* ]]; then
		if apt_install "${pkg#apt:}"; then
			env_lines+=("$(printf '%s=%q' "$var" "$apt_bin_dir/${pkg#apt:}")")
		elif [[ -n "${CI:-}" ]]; then
			exit 1
		fi
		continue
	fi
	version="${pkg##*@}"
	dest="$tools_dir/$name@$version/$name"
	if [[ -n "$recipe" ]]; then
		key="$(recipe_key "$recipe" "$pkg")" || exit 1
		dest="$tools_dir/$name@$version-$key/$name"
	fi
	env_lines+=("$(printf '%s=%q' "$var" "$dest")")
	if [[ -x "$dest" ]]; then
		log "$name: cached $dest"
		continue
	fi
	if [[ -n "$recipe" ]]; then
		recipe_items[$recipe]+="$name=$recipe_pkg=$dest "
		continue
	fi
	queue+=("$name|build $name $pkg $dest")
done
# The recipe builds (the Kubernetes control plane) are the longest: they
# start first, so the short ones fill the other slot meanwhile.
recipe_jobs=()
for recipe in "${!recipe_items[@]}"; do
	recipe_jobs+=("$recipe|build_recipe $recipe ${recipe_items[$recipe]}")
done
queue=("${recipe_jobs[@]}" "${queue[@]}")

# Run the jobs, at most max_jobs at once. Each job leaves its exit status
# in a file: `wait -n` frees a slot but does not say whose job ended.
failed=()
if ((${#queue[@]} > 0)); then
	mkdir -p "$logs_dir"
	state="$(mktemp -d "$tools_dir/.state.XXXXXX")"
	trap 'rm -rf "$state"' EXIT
	labels=()
	for job in "${queue[@]}"; do labels+=("${job%%|*}"); done
	log "building ${#queue[@]} job(s), at most $max_jobs at once: ${labels[*]} (go's output: $logs_dir)"
	running=0
	for i in "${!queue[@]}"; do
		while ((running >= max_jobs)); do
			wait -n || true
			running=$((running - 1))
		done
		# shellcheck disable=SC2086 # the job's words are its function and args
		(
			set +e
			${queue[$i]#*|}
			echo $? >"$state/$i"
		) &
		running=$((running + 1))
	done
	wait
	for i in "${!queue[@]}"; do
		[[ "$(cat "$state/$i" 2>/dev/null)" == 0 ]] || failed+=("${labels[$i]}")
	done
	log "built ${#queue[@]} job(s) in $((SECONDS - total_start))s"
fi
if ((${#failed[@]} > 0)); then
	log "failed: ${failed[*]}"
	exit 1
fi

printf '%s\n' "${env_lines[@]}"
if [[ -n "$env_file" ]]; then
	mkdir -p "$(dirname "$env_file")"
	printf '%s\n' "${env_lines[@]}" >"$env_file.tmp.$$"
	mv -f "$env_file.tmp.$$" "$env_file"
fi
