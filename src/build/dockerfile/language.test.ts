// The language modules together, the way an executor drives them: parse, plan the stages, then per
// stage declare ARGs, accumulate ENV and expand each instruction with the stage's scope.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { unconsumedWarning } from './build-args.ts';
import { parseDockerfile } from './parser.ts';
import { expandInstruction } from './shell-words.ts';
import { planStages, resolveCopyFrom } from './stages.ts';
import type { Instruction } from './types.ts';

const DOCKERFILE = `# syntax=docker/dockerfile:1
ARG NODE=20
ARG UNUSED_META
FROM node:\${NODE}-alpine AS deps
WORKDIR /src
COPY package.json ./
RUN npm ci

FROM node:\${NODE}-alpine AS build
ARG NODE
ARG MODE=production
ENV NODE_ENV=\${MODE} \\
    OUT=/src/dist
WORKDIR /src
COPY --from=deps /src/node_modules ./node_modules
COPY . .
RUN npm run build -- --mode=$MODE
LABEL org.example.node="\${NODE}" org.example.mode=$MODE

FROM nginx:alpine
ARG http_proxy
COPY --from=build \${OUT:-/src/dist} /usr/share/nginx/html
EXPOSE 80
HEALTHCHECK CMD wget -q -O- http://localhost/ || exit 1
`;

/** Runs the stages of the plan as an executor would, without executing anything. */
function dispatch(buildArgs: Record<string, string>) {
  const df = parseDockerfile(DOCKERFILE);
  const plan = planStages(df, { buildArgs });
  const out = new Map<number, Instruction[]>();
  for (const index of plan.order) {
    const stage = df.stages[index]!;
    const args = plan.args.forStage();
    let env: string[] = [];
    const done: Instruction[] = [];
    for (const inst of stage.instructions) {
      const x = expandInstruction(inst, args.expansionEnv(env), df.escapeChar);
      if (x.kind === 'ARG') for (const a of x.args) args.declare(a.name, a.default);
      if (x.kind === 'ENV') env = [...env.filter((e) => !x.pairs.some(([k]) => e.startsWith(`${k}=`))), ...x.pairs.map(([k, v]) => `${k}=${v}`)];
      if (x.kind === 'RUN') done.push({ ...x, command: [...args.historyArgs(env), ...x.command] } as Instruction);
      else done.push(x);
    }
    out.set(index, done);
  }
  return { df, plan, out };
}

describe('the Dockerfile language end to end', () => {
  test('stages, bases, ARG scopes, ENV, expansions and --from references', () => {
    const { df, plan, out } = dispatch({ NODE: '22', MODE: 'dev', STRAY: '1', http_proxy: 'http://proxy:3128' });
    assert.equal(df.syntax, 'docker/dockerfile:1');
    assert.deepEqual(plan.order, [0, 1, 2]);
    assert.deepEqual(plan.bases.get(0), { kind: 'image', ref: 'node:22-alpine' });
    const build = out.get(1)!;
    const env = build.find((i) => i.kind === 'ENV');
    assert.deepEqual(env?.kind === 'ENV' && env.pairs, [['NODE_ENV', 'dev'], ['OUT', '/src/dist']]);
    const run = build.find((i) => i.kind === 'RUN');
    // RUN text is not expanded by the builder; the visible ARGs go in front (history, cache key).
    assert.deepEqual(run?.kind === 'RUN' && run.command, ['MODE=dev', 'NODE=22', 'npm run build -- --mode=$MODE']);
    const label = build.find((i) => i.kind === 'LABEL');
    assert.deepEqual(label?.kind === 'LABEL' && label.pairs, [['org.example.node', '22'], ['org.example.mode', 'dev']]);
    const final = out.get(2)!;
    const copy = final.find((i) => i.kind === 'COPY');
    // OUT is an ENV of another stage: not visible here, so the default applies.
    assert.ok(copy?.kind === 'COPY' && copy.sources[0] === '/src/dist' && copy.from === 'build');
    assert.deepEqual(resolveCopyFrom(df, 2, 'build'), { kind: 'stage', index: 1 });
    // The proxy ARG was declared in the last stage: it is not kept out of the history there.
    assert.equal(unconsumedWarning(plan.args), '[Warning] One or more build-args [STRAY] were not consumed');
  });

  test('--target builds only what the target needs', () => {
    const df = parseDockerfile(DOCKERFILE);
    assert.deepEqual(planStages(df, { target: 'deps' }).order, [0]);
    assert.deepEqual(planStages(df, { target: 'build' }).order, [0, 1]);
  });
});
