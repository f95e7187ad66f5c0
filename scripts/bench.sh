#!/usr/bin/env bash
# Builds, makes sure Debian's dockerd is there for the comparison (unless --no-dockerd), and runs
# the benchmark: scripts/bench.sh [--quick] [--only startup,memory,lifecycle,parallel,list,logs] [--no-dockerd]
set -euo pipefail
cd "$(dirname "$0")/.."
bin/node node_modules/typescript/bin/tsc -p tsconfig.json
case " $* " in
  *" --no-dockerd "*) ;;
  *) command -v dockerd >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io ;;
esac
exec bin/node dist/bench/run.js "$@"
