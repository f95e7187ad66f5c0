#!/usr/bin/env bash
# Runs the whole suite on the built tree: first the layout check (scripts/check-layout.mjs: file
# sizes, folder cycles, the layer rule) and, on a whole run, the formatter's check (prettier), then
# unit tests beside the code (dist/src/**/*.test.js), the tests of scripts/ (dist/test/scripts/*.test.js) and the end-to-end tests
# (dist/test/e2e/*.test.js), which start real daemons, containerd and runc.
# Test files run in parallel (each e2e file has its own daemon and containerd); pass file paths to
# run a subset (the layout check runs then too), or --twin for the twin files alone.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "run-tests: the suite needs root (namespaces, mounts, iptables)" >&2; exit 1; fi
bin/node scripts/check-layout.mjs
# The copy-paste check: a run of 8+ equal code lines in src/ is one concept written twice.
bin/node scripts/check-duplicates.mjs
# The formatter's check (prettier, .prettierrc.json) on a whole run; `npm run format` fixes what it lists.
if [ $# -eq 0 ]; then
  bin/node node_modules/prettier/bin/prettier.cjs --check --log-level warn "src/**/*.ts" "src/**/*.tsx" "test/**/*.ts" "bench/**/*.ts" "scripts/**/*.mjs" \
    || { echo "run-tests: files not formatted (run: npm run format)" >&2; exit 1; }
fi
# --twin: only the twin files, test/e2e/twin/ (CLI-heavy e2e files run again with the engine CLI as
# their client, test/helpers/cli-client.ts); a whole run includes them.
if [ "${1:-}" = --twin ]; then
  shift
  mapfile -t files < <(find dist/test/e2e/twin -name '*.test.js' 2>/dev/null | sort)
  set -- "${files[@]}"
fi
if [ $# -gt 0 ]; then files=("$@"); else
  mapfile -t files < <(find dist/src dist/test/e2e dist/test/scripts -name '*.test.js' 2>/dev/null | sort)
fi
if [ ${#files[@]} -eq 0 ]; then echo "run-tests: no test files (did the build run?)" >&2; exit 1; fi
# The e2e tests run the daemon through bin/engined, i.e. its bundle: remake it if tsc ran alone since.
if [ ! -f dist/bundle/engined.js ] || [ -n "$(find dist/src -name '*.js' -newer dist/bundle/engined.js -print -quit)" ]; then
  bin/node scripts/bundle.mjs
fi
concurrency=${TEST_CONCURRENCY:-4}
# The twin files record the calls engine's command table could not take (the docker CLI ran them),
# summarised after the run by scripts/twin-report.mjs (kept where ENGINE_TEST_CLI_REPORT names a directory).
if [ -z "${ENGINE_TEST_CLI_REPORT:-}" ]; then
  ENGINE_TEST_CLI_REPORT=$(mktemp -d /tmp/engine-twin-report.XXXXXX)
  trap 'rm -rf "$ENGINE_TEST_CLI_REPORT"' EXIT
fi
export ENGINE_TEST_CLI_REPORT
status=0
bin/node --disable-warning=ExperimentalWarning --test --test-concurrency="$concurrency" \
  --test-timeout="${TEST_TIMEOUT_MS:-600000}" "${files[@]}" || status=$?
bin/node scripts/twin-report.mjs "$ENGINE_TEST_CLI_REPORT" || echo "run-tests: the twin report failed" >&2
exit "$status"
