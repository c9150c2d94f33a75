#!/usr/bin/env bash
# The package as its users get it, from the committed HEAD (uncommitted changes are not part of it):
# 1. a fresh clone, `npm ci` (whose `prepare` builds it, as in `npm install <git url>`), `npm pack` (whose
#    `prepack` builds it afresh): the tarball must hold every entry point, both builds' typings, no source map;
# 2. an application with that tarball and the required peers only compiles test/package/consumer.ts with
#    `strict` and `skipLibCheck: false`, as an ES module and as CommonJS, then imports and requires it; the same
#    for its own store on the `nestjs-lock/store` entry (test/package/custom-store.ts) and for the PostgreSQL
#    helpers of `nestjs-lock/postgres` without `pg` installed (test/package/postgres-helpers.ts);
# 3. with ioredis and @nestjs/terminus added, it compiles test/package/consumer-with-peers.ts.
# With --from-git, a second application also installs the package the way `npm install <git url>` does.
# Versions are the ones package.json pins for development, so npm finds them in its cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
quiet=(--prefer-offline --no-audit --no-fund --loglevel=error)

fail() {
  echo "package check failed: $*" >&2
  exit 1
}
# name@version of each named devDependency, as one argument each
pinned() {
  node -p "process.argv.slice(1).map((name) => name + '@' + require('$root/package.json').devDependencies[name]).join('\n')" "$@"
}
step() {
  echo "== $* ($SECONDS s)"
}

head="$(git -C "$root" rev-parse HEAD)"
git -C "$root" diff --quiet HEAD || echo "== uncommitted changes are not checked, only $head"
step "a fresh clone of $head: npm ci, then npm pack"
git clone --quiet --no-checkout "$root" "$scratch/clone"
git -C "$scratch/clone" checkout --quiet --detach "$head"
cd "$scratch/clone"
npm ci "${quiet[@]}"
[ -f dist/cjs/package.json ] || fail "npm ci in a fresh clone did not build dist/ (the prepare script)"
tarball="$scratch/$(npm pack --pack-destination "$scratch" --loglevel=error | tail -1)"

listing="$(tar -tzf "$tarball" | sed 's|^package/||')"
exported="$(node -p "const t = (e) => (typeof e === 'string' ? [e] : Object.values(e).flatMap(t)); t(require('./package.json').exports).join('\n')")"
for file in $exported dist/cjs/package.json dist/{esm,cjs}/index.d.ts dist/{esm,cjs}/interfaces/ioredis-types.d.ts; do
  grep -qxF "${file#./}" <<<"$listing" || fail "the tarball lacks ${file#./}"
done
unwanted="$(grep -E '\.map$|^(lib|test|scripts|sample|bench)/' <<<"$listing" || true)"
[ -z "$unwanted" ] || fail "the tarball holds files no user needs: $unwanted"
echo "   $(wc -l <<<"$listing") files, $(du -k "$tarball" | cut -f1) kB"

step "an application with the tarball and the required peers only"
mkdir "$scratch/app"
cd "$scratch/app"
echo '{ "name": "consumer", "private": true }' >package.json
mapfile -t required < <(pinned @nestjs/common @nestjs/core reflect-metadata rxjs typescript @types/node)
npm install "${quiet[@]}" "$tarball" "${required[@]}"
for peer in $(node -p "Object.keys(require('nestjs-lock/package.json').peerDependenciesMeta).join('\n')"); do
  [ ! -e "node_modules/$peer" ] || fail "the optional peer $peer got installed: the check would prove nothing"
done
cat >tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "skipLibCheck": false,
    "noEmit": true,
    "experimentalDecorators": true,
    "emitDecoratorMetadata": true,
    "types": ["node"]
  }
}
EOF
cp "$scratch/clone/test/package/consumer.ts" app.mts
cp "$scratch/clone/test/package/consumer.ts" app.cts
cp "$scratch/clone/test/package/custom-store.ts" store.mts
cp "$scratch/clone/test/package/custom-store.ts" store.cts
cp "$scratch/clone/test/package/postgres-helpers.ts" postgres.mts
cp "$scratch/clone/test/package/postgres-helpers.ts" postgres.cts
read_files="$(npx tsc -p tsconfig.json --listFiles)" || fail "$(grep 'error TS' <<<"$read_files")"
for build in esm cjs; do
  for entry in index store postgres; do
    grep -q "nestjs-lock/dist/$build/$entry.d.ts" <<<"$read_files" || fail "the compiler never read dist/$build/$entry.d.ts"
  done
done
locked="const m = new LockManager({ store: new MemoryLockStore() }); m.using('k', () => 1).then(() => m.close());"
node --input-type=module -e "import { LockManager, MemoryLockStore } from 'nestjs-lock'; $locked"
node -e "const { LockManager, MemoryLockStore } = require('nestjs-lock'); $locked"
node --input-type=module -e "import 'nestjs-lock/store';"
node -e "require('nestjs-lock/store');"
# pg is an optional peer loaded when a store is built: the helpers' entry must load without it
id="const id = advisoryLockId('invoice:42'); if (id !== '8754635089011177105') throw new Error(id);"
node --input-type=module -e "import { advisoryLockId } from 'nestjs-lock/postgres'; $id"
node -e "const { advisoryLockId } = require('nestjs-lock/postgres'); $id"

step "the same application with ioredis and @nestjs/terminus"
mapfile -t peers < <(pinned ioredis @nestjs/terminus)
npm install "${quiet[@]}" "${peers[@]}"
cp "$scratch/clone/test/package/consumer-with-peers.ts" peers.mts
cp "$scratch/clone/test/package/consumer-with-peers.ts" peers.cts
npx tsc -p tsconfig.json

if [ "${1:-}" = --from-git ]; then
  step "npm install git+file://…#$head"
  mkdir "$scratch/from-git"
  cd "$scratch/from-git"
  echo '{ "name": "from-git", "private": true }' >package.json
  npm install "${quiet[@]}" "git+file://$scratch/clone#$head" "${required[@]}"
  [ -f node_modules/nestjs-lock/dist/cjs/package.json ] || fail "npm install from git gave a package without dist/"
  node -e "const { LockManager, MemoryLockStore } = require('nestjs-lock'); $locked"
fi
step "the package is installable and its typings compile without optional peers"
