#!/usr/bin/env bash
# Checks .github/actions-lock.txt against GitHub, where the network exists
# (the ci workflow's `pins` job; offline, release/pins_test.go holds the
# workflows to the table): each tag must still name the pinned commit, and
# the action.yml at that commit must declare the pinned runtime (node24).
# Only git is needed: `git ls-remote` for the tag, a depth-1 fetch of the
# commit for its action.yml.
#
# Usage: .github/check-action-pins.sh [LOCK]   (ACTIONS_GIT_BASE overrides
# https://github.com, for the test's local repositories)
set -euo pipefail
lock="${1:-$(dirname "$0")/actions-lock.txt}"
base="${ACTIONS_GIT_BASE:-https://github.com}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
while read -r action tag commit runs; do
	[[ -z "$action" || "$action" == \#* ]] && continue
	repo="${action%%/*}/$(cut -d/ -f2 <<<"$action")"
	url="$base/$repo"
	# An annotated tag lists its object and, as ^{}, the commit: take the commit.
	refs="$(git ls-remote --tags "$url" "refs/tags/$tag" "refs/tags/$tag^{}")"
	got="$(awk -v t="refs/tags/$tag^{}" '$2==t {print $1}' <<<"$refs")"
	[[ -n "$got" ]] || got="$(awk -v t="refs/tags/$tag" '$2==t {print $1}' <<<"$refs")"
	if [[ "$got" != "$commit" ]]; then
		echo "FAIL $action $tag: the tag names ${got:-nothing}, the lock pins $commit" >&2
		failed=1
		continue
	fi
	# The commit without its blobs (dist/ is megabytes), then action.yml alone.
	dir="$work/${action//\//_}"
	git init -q "$dir"
	git -C "$dir" remote add origin "$url"
	path="${action#"$repo"}"
	path="${path#/}"
	yml=""
	if git -C "$dir" fetch -q --depth=1 --filter=blob:none origin "$commit"; then
		for f in action.yml action.yaml; do
			yml="$(git -C "$dir" show "$commit:${path:+$path/}$f" 2>/dev/null)" && break
		done
	fi
	using="$(tr -d '\r' <<<"$yml" | awk '/^runs:/ {r=1; next} r && /^[^ \t]/ {r=0} r && $1=="using:" {gsub(/["'\'']/, "", $2); print $2; exit}')"
	if [[ "$using" != "$runs" ]]; then
		echo "FAIL $action $tag: action.yml at $commit runs ${using:-nothing}, the lock says $runs" >&2
		failed=1
		continue
	fi
	echo "ok   $action $tag = $commit ($using)"
done <"$lock"
exit "$failed"
