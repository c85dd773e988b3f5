# Keyturn's container image (docs/container.md). Two stages: the first builds the workspace and
# installs the `keyturn` package made by scripts/pack.mjs; the second holds only Node and that
# package. better-sqlite3 ships prebuilt binaries in its npm package: no compiler in either stage.
#   docker build -t keyturn .
#   docker run --read-only -v keyturn-data:/data -p 3000:3000 keyturn
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
# --ignore-scripts: installed from the lockfile, npm would compile better-sqlite3 with node-gyp
# (the lockfile does not record its `gypfile: false`) although its package carries prebuilt
# binaries; no install script is needed here. Then build every package, and pack.mjs bundles the
# CLI with the server, client and protocol and puts the built dashboard beside it. Installed from
# that tarball (no lockfile), better-sqlite3 compiles nothing.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm run build \
 && node scripts/pack.mjs /tmp/packed \
 && mkdir /opt/keyturn \
 && cd /opt/keyturn \
 && echo '{"name":"keyturn-image","private":true}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tmp/packed/keyturn-cli-*.tgz \
 && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    KEYTURN_DATABASE_URL=sqlite:/data/keyturn.db \
    PATH=/opt/keyturn/node_modules/.bin:$PATH
COPY --from=build /opt/keyturn /opt/keyturn
# The only place Keyturn writes: the SQLite database and its generated keyturn.secret (or nothing,
# on PostgreSQL with KEYTURN_SECRET set). Everything else may be mounted read-only.
RUN mkdir /data && chown node:node /data && chmod 0700 /data
VOLUME ["/data"]
USER node
WORKDIR /data
EXPOSE 3000
# Ready: the database answers and the admin key exists (GET /readyz, 503 otherwise).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["keyturn"]
CMD ["serve"]
