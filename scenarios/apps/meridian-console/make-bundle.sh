#!/bin/sh
# Build repo.bundle deterministically: a skeleton repo with a README.
set -eu
out="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git -c init.defaultBranch=main init -q .
cat > README.md <<'MD'
# Meridian

The payments ledger `ledgerd`, the notifications service `notifierd` and their finance
console, in standard-library Python. SPEC.md (in this folder) is the specification.
MD
export GIT_AUTHOR_NAME="harness" GIT_AUTHOR_EMAIL="harness@example.invalid" \
       GIT_COMMITTER_NAME="harness" GIT_COMMITTER_EMAIL="harness@example.invalid" \
       GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git add README.md
git -c commit.gpgsign=false commit -q -m "meridian skeleton"
git bundle create -q "$out" --all
git rev-parse HEAD
