#!/usr/bin/env bash
# Client conformance: runs public client test suites against engined and against dockerd (Debian's
# docker.io 20.10, in a network namespace of its own) side by side, and lists the tests dockerd
# passes and engined does not. The suites are not in this repository: point it at checkouts.
#   bench/conformance/run.sh --docker-py <checkout of docker-py at the installed version's tag>
#                            --dockerode <checkout of dockerode with `npm install` run in it>
#                            [--api 1.41] [--out <dir>]
# docker-py runs against both at --api (dockerd 20.10 speaks 1.41 at most); its tests need the
# installed python3 docker package, pytest, pytest-timeout and paramiko. After a build; as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dockerpy='' dockerode='' api=1.41 out=$(mktemp -d /tmp/engine-conformance-out-XXXX)
while [ $# -gt 0 ]; do
  case "$1" in
    --docker-py) dockerpy=$(realpath "$2"); shift 2 ;;
    --dockerode) dockerode=$(realpath "$2"); shift 2 ;;
    --api) api=$2; shift 2 ;;
    --out) out=$2; mkdir -p "$out"; shift 2 ;;
    *) echo "usage: $0 [--docker-py DIR] [--dockerode DIR] [--api 1.41] [--out DIR]" >&2; exit 2 ;;
  esac
done
[ -n "$dockerpy$dockerode" ] || { echo "conformance: give --docker-py and/or --dockerode" >&2; exit 2; }
command -v dockerd >/dev/null || { echo "conformance: dockerd not found (apt-get install docker.io)" >&2; exit 2; }

coproc DAEMONS { exec bin/node dist/bench/conformance/daemons.js; }
trap 'kill -TERM $DAEMONS_PID 2>/dev/null; wait $DAEMONS_PID 2>/dev/null || true' EXIT
read -r line <&"${DAEMONS[0]}"; engined=${line#ENGINED=}
read -r line <&"${DAEMONS[0]}"; dockerd=${line#DOCKERD=}
echo "conformance: engined at $engined, dockerd at $dockerd; reports in $out"

for side in dockerd engined; do
  sock=$([ $side = dockerd ] && echo "$dockerd" || echo "$engined")
  if [ -n "$dockerpy" ]; then
    # The context and credential-store tests change the client's own configuration, not the daemon's.
    files=$(cd "$dockerpy" && ls tests/integration/api_*_test.py tests/integration/models_*_test.py tests/integration/errors_test.py tests/integration/regression_test.py)
    (cd "$dockerpy" && DOCKER_HOST=unix://$sock DOCKER_TEST_API_VERSION=$api timeout 3600 python3 -m pytest -p no:cacheprovider -q \
      -W ignore::DeprecationWarning --timeout 120 --junitxml="$out/docker-py-$side.xml" $files >"$out/docker-py-$side.log" 2>&1) || true
    echo "conformance: docker-py against $side: $(tail -n 1 "$out/docker-py-$side.log")"
  fi
  if [ -n "$dockerode" ]; then
    (cd "$dockerode" && DOCKER_HOST=unix://$sock timeout 1800 "$root/bin/node" node_modules/mocha/bin/mocha.js --exit --timeout 60000 \
      -R xunit --reporter-option output="$out/dockerode-$side.xml" test/docker.js test/container.js >"$out/dockerode-$side.log" 2>&1) || true
    echo "conformance: dockerode against $side done"
  fi
done
[ -z "$dockerpy" ] || { echo "== docker-py"; python3 bench/conformance/diff.py "$out/docker-py-dockerd.xml" "$out/docker-py-engined.xml"; }
[ -z "$dockerode" ] || { echo "== dockerode"; python3 bench/conformance/diff.py "$out/dockerode-dockerd.xml" "$out/dockerode-engined.xml"; }
