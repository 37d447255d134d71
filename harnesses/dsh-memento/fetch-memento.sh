#!/bin/sh
# Fetch the pinned dsh-memento source (lib/, package.json, LICENSE) into a cache outside this
# repository, for harnesses/dsh-memento/harness.mjs to drive. It only fetches: nothing is
# built, and nothing of dsh-memento is ever written into the dshkit tree.
#
#   harnesses/dsh-memento/fetch-memento.sh           prints the copy's directory
#
# Source of the git objects, in this order:
#   DSHKIT_MEMENTO_GIT   a local git directory of PerryLink/dsh-memento (a clone or a mirror)
#   otherwise            git clone of https://github.com/PerryLink/dsh-memento.git
# The tag must resolve to the pinned commit, else the fetch fails. Exit status 3 means the
# copy cannot be had here (no local git directory and no network): callers skip, not fail.
set -eu

TAG=v0.4.4
COMMIT=74cd54b64674217a828d98bf4ca73fe261f11659
URL=https://github.com/PerryLink/dsh-memento.git
CACHE=${DSHKIT_CACHE:-$HOME/.cache/dshkit}
DEST=$CACHE/dsh-memento-$COMMIT

if [ -f "$DEST/.complete" ]; then
  echo "$DEST"
  exit 0
fi
command -v git >/dev/null 2>&1 || { echo "fetch-memento: git is not installed" >&2; exit 3; }

mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/.dsh-memento-fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ -n "${DSHKIT_MEMENTO_GIT:-}" ]; then
  GIT_DIR=$DSHKIT_MEMENTO_GIT
else
  if ! git clone --quiet --bare "$URL" "$WORK/repo.git" 2>"$WORK/clone.log"; then
    echo "fetch-memento: cannot clone $URL (set DSHKIT_MEMENTO_GIT to a local git directory):" >&2
    cat "$WORK/clone.log" >&2
    exit 3
  fi
  GIT_DIR=$WORK/repo.git
fi
export GIT_DIR

found=$(git rev-parse --verify --quiet "$TAG^{commit}" || true)
if [ "$found" != "$COMMIT" ]; then
  echo "fetch-memento: $TAG is ${found:-missing} in $GIT_DIR, expected $COMMIT" >&2
  exit 1
fi

mkdir "$WORK/copy"
git archive "$COMMIT" lib package.json LICENSE | tar -x -C "$WORK/copy"
printf '%s %s\n' "$TAG" "$COMMIT" > "$WORK/copy/.complete"
rm -rf "$DEST"
mv "$WORK/copy" "$DEST"
echo "$DEST"
