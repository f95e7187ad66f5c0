// Tests of stage resolution (target, FROM/COPY --from references, needed stages) and build-arg scoping.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyMetaArgs, BuildArgs, expandWithMeta, platformArgs, unconsumedWarning } from './build-args.ts';
import { parseDockerfile } from './parser.ts';
import { planStages, resolveCopyFrom } from './stages.ts';

const multi = parseDockerfile([
  'ARG BASE=busybox',
  'ARG TAG',
  'FROM $BASE:${TAG:-latest} AS deps',
  'RUN echo deps',
  'FROM deps AS build',
  'RUN echo build',
  'FROM alpine AS unused',
  'RUN echo unused',
  'FROM scratch AS final',
  'COPY --from=build /out /out',
  'COPY --from=0 /x /x',
  'COPY --from=nginx:latest /etc/nginx /etc/nginx',
  'FROM final AS extra',
].join('\n'));

describe('stage plan', () => {
  test('the last stage by default; every stage up to it, in order (the classic builder)', () => {
    const plan = planStages(multi);
    assert.equal(plan.target.name, 'extra');
    assert.deepEqual(plan.order, [0, 1, 2, 3, 4]);
    assert.deepEqual(plan.bases.get(0), { kind: 'image', ref: 'busybox:latest' });
    assert.deepEqual(plan.bases.get(1), { kind: 'stage', index: 0 });
    assert.deepEqual(plan.bases.get(3), { kind: 'scratch' });
    assert.deepEqual(plan.bases.get(4), { kind: 'stage', index: 3 });
    assert.deepEqual(plan.bases.get(2), { kind: 'image', ref: 'alpine' });
  });

  test('--target (case-insensitive) cuts the plan; build-args override meta defaults', () => {
    const plan = planStages(multi, { target: 'BUILD', buildArgs: { BASE: 'debian', TAG: '12' } });
    assert.equal(plan.target.index, 1);
    assert.deepEqual(plan.order, [0, 1]);
    assert.deepEqual(plan.bases.get(0), { kind: 'image', ref: 'debian:12' });
    assert.throws(() => planStages(multi, { target: 'nope' }), (e: Error & { status?: number }) => e.status === 400 && e.message === 'target stage "nope" could not be found');
  });

  test('a FROM naming a later stage or itself is an image; blank names are refused', () => {
    const df = parseDockerfile('FROM later AS first\nFROM busybox AS later\n');
    assert.deepEqual(planStages(df, { target: 'first' }).bases.get(0), { kind: 'image', ref: 'later' });
    const blank = parseDockerfile('ARG X\nFROM $X\n');
    assert.throws(() => planStages(blank), /base name \(\$X\) should not be blank/);
  });

  test('COPY --from indexes: earlier stages only', () => {
    assert.deepEqual(resolveCopyFrom(multi, 3, '1'), { kind: 'stage', index: 1 });
    assert.throws(() => resolveCopyFrom(multi, 3, '3'), /invalid from flag value 3: refers to current build stage/);
    assert.throws(() => resolveCopyFrom(multi, 3, '4'), /index out of bounds/);
    assert.throws(() => resolveCopyFrom(multi, 3, '-1'), /index out of bounds/);
    assert.deepEqual(resolveCopyFrom(multi, 3, 'BUILD'), { kind: 'stage', index: 1 });
    assert.deepEqual(resolveCopyFrom(multi, 0, 'build'), { kind: 'image', ref: 'build' });
  });

  test('duplicate stage names are refused before anything runs', () => {
    const df = parseDockerfile('FROM a AS x\nFROM b AS X\n');
    assert.throws(() => planStages(df), /line 2: x stage name already used/);
  });

  test('FROM --platform is expanded with meta args', () => {
    const df = parseDockerfile('ARG P=linux/arm64\nFROM --platform=$P busybox\n');
    assert.equal(planStages(df).platforms.get(0), 'linux/arm64');
  });

  test('automatic platform args: in FROM, and in a stage after a bare ARG', () => {
    const df = parseDockerfile('FROM --platform=$BUILDPLATFORM golang:$TARGETARCH AS b\nARG TARGETARCH\n');
    const auto = platformArgs({ os: 'linux', architecture: 'arm', variant: 'v7' }, { os: 'linux', architecture: 'amd64' });
    assert.equal(auto.BUILDPLATFORM, 'linux/arm/v7');
    const plan = planStages(df, { automaticArgs: auto, buildArgs: { TARGETARCH: 'riscv64' } });
    assert.equal(plan.platforms.get(0), 'linux/arm/v7');
    assert.deepEqual(plan.bases.get(0), { kind: 'image', ref: 'golang:riscv64' });
    const stage = plan.args.forStage();
    assert.equal(stage.allowedValues().has('TARGETOS'), false);
    stage.declare('TARGETOS', undefined);
    assert.equal(stage.allowedValues().get('TARGETOS'), 'linux');
    assert.equal(planStages(df).platforms.has(0), false); // without them: empty, the build's platform
  });
});

describe('build args', () => {
  test('meta ARGs: defaults expanded in order, build-args win, FROM sees them, stages need ARG to see them', () => {
    const df = parseDockerfile('ARG A=1\nARG B=${A}2 C=$A\nFROM x\n');
    const args = new BuildArgs({ C: 'given' });
    applyMetaArgs(df.metaArgs, args);
    assert.equal(expandWithMeta('$A-$B-$C', args), '1-12-given');
    const stage = args.forStage();
    assert.deepEqual([...stage.allowedValues()], []);
    stage.declare('B', undefined); // a bare ARG takes the meta value
    stage.declare('D', 'dflt');
    assert.deepEqual(Object.fromEntries(stage.allowedValues()), { B: '12', D: 'dflt' });
  });

  test('ENV shadows ARG; proxy args are usable undeclared but kept out of history', () => {
    const args = new BuildArgs({ http_proxy: 'http://p:3128', V: 'fromcli', UNUSED: 'x', NOVALUE: null }).forStage();
    args.declare('V', 'default');
    args.declare('W', 'w');
    assert.deepEqual(args.filterAllowed(['W=env']).sort(), ['V=fromcli', 'http_proxy=http://p:3128']);
    assert.deepEqual(args.historyArgs(['W=env']), ['V=fromcli']);
    assert.equal(args.expansionEnv(['W=env'])('W'), 'env');
    assert.equal(args.expansionEnv([])('http_proxy'), 'http://p:3128');
    args.declare('http_proxy', undefined);
    assert.deepEqual(args.historyArgs([]), ['V=fromcli', 'W=w', 'http_proxy=http://p:3128']);
    assert.equal(unconsumedWarning(args), '[Warning] One or more build-args [NOVALUE UNUSED] were not consumed');
  });

  test('an ARG declared in any stage consumes the build-arg', () => {
    const root = new BuildArgs({ A: '1' });
    assert.deepEqual(root.unconsumed(), ['A']);
    root.forStage().declare('A', undefined);
    assert.equal(unconsumedWarning(root), null);
  });
});
