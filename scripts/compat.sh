#!/usr/bin/env bash
# Proves the peer ranges instead of claiming them: copies the repository to a scratch folder, installs
# NestJS 11 (CommonJS) and ioredis 5 there, and runs the module, decorator and inventory e2e tests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

tar -C "$root" --exclude=./node_modules --exclude=./dist --exclude=./.git -cf - . | tar -C "$scratch" -xf -
cd "$scratch"
echo "== installing NestJS 11 and ioredis 5 into $scratch"
npm ci --no-audit --no-fund --silent
# the GraphQL packages we test with (@nestjs/graphql 14) need Nest 12; the gateway and microservice packages
# are put back to 11 so the install resolves (their specs do not run here yet)
npm pkg delete devDependencies.@nestjs/graphql devDependencies.@nestjs/apollo devDependencies.@nestjs/mercurius
npm install --no-save --no-audit --no-fund --silent \
  @nestjs/common@11 @nestjs/core@11 @nestjs/platform-express@11 @nestjs/platform-fastify@11 \
  @nestjs/testing@11 @nestjs/microservices@11 @nestjs/websockets@11 @nestjs/platform-socket.io@11 \
  @nestjs/platform-ws@11 ioredis@5
node -e "for (const p of ['@nestjs/core','ioredis']) console.log(p, require('./node_modules/'+p+'/package.json').version)"
npx jest --version >/dev/null
NODE_OPTIONS=--experimental-vm-modules npx jest --runInBand test/transports/http.e2e.spec.ts test/decorators/with-lock.spec.ts test/lock.module.spec.ts \
  test/keys/key-sources.e2e.spec.ts test/transports/bullmq.e2e.spec.ts
# NestJS 11 puts no global interceptor around gateways: @WithLock maps their lock errors itself
NODE_OPTIONS=--experimental-vm-modules npx jest --runInBand test/transports/websocket.e2e.spec.ts \
  -t 'exception event to a client that asked for no acknowledgement'
