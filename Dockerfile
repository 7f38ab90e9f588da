# One image recipe for every app of the platform (docs/architecture.md, "Two run modes": distributed mode).
#
#   docker build --build-arg APP=gateway     -t udp/gateway .
#   docker build --build-arg APP=history-svc -t udp/history-svc .
#
# The build stage does not depend on APP, so building several apps reuses its cached layers; only the small
# runtime stage differs. Base images are pinned by tag (bump NODE_IMAGE deliberately, e.g. with Renovate).
# Node 26: the Active LTS line (since October 2026) that every dependency supports (better-sqlite3 12.11: 20-26).
ARG NODE_IMAGE=node:26.10.0-bookworm-slim

# ---------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
# better-sqlite3 is a native module: npm ci compiles it when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV CI=true NX_DAEMON=false NX_NO_CLOUD=true
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
# esbuild bundles: dist/apps/<app>/main.js (+ source maps) for every app, with the worker threads it starts by file
# beside it (sqlite-writer.js, sqlite-checkpointer.js); node_modules stay external.
RUN node tools/build.mjs \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/.cache

# ---------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG APP
ENV NODE_ENV=production \
    APP=${APP} \
    HOST=0.0.0.0 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build --chown=root:root /src/package.json ./package.json
COPY --from=build --chown=root:root /src/node_modules ./node_modules
COPY --from=build --chown=root:root /src/dist ./dist
COPY --chown=root:root deploy/docker/healthcheck.cjs ./healthcheck.cjs
# Fail the build early (and clearly) when APP is missing or names no bundle.
RUN test -n "$APP" || { echo 'build with --build-arg APP=<app>' >&2; exit 1; }; \
    test -f "dist/apps/$APP/main.js" || { echo "no bundle dist/apps/$APP/main.js (known: $(ls dist/apps | tr '\n' ' '))" >&2; exit 1; }; \
    mkdir -p /app/data && chown node:node /app/data
# The code is root-owned and read-only for the process; only DATA_DIR is writable.
USER node
# Each app's default port (gateway 8080, history-svc 8081, ... catalogue-svc 8085, export-worker 8086); compose and k8s set PORT.
EXPOSE 8080-8086
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/healthcheck.cjs"]
# exec: node is PID 1 and receives SIGTERM itself (the apps stop gracefully on it).
CMD ["/bin/sh", "-c", "exec node --enable-source-maps \"dist/apps/${APP}/main.js\""]
