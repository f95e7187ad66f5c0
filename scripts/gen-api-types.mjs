// Generates src/types/api/ — TypeScript types for every definition of the Docker Engine API
// description (../shared/api/engine-api-v1.51.yaml, or the path given) and for the response objects
// its paths define inline under a title, used by the client SDK
// (src/client/) for response shapes. Definitions that already have a hand-written wire type in
// src/types/ (shared with the daemon) are re-exported from there instead of generated again (the
// HAND_WRITTEN table), so there is one type per wire shape. Output is split into parts of at most
// ~MAX_LINES lines (the layout rule caps files at 800), each importing what it references from the
// others, and index.ts re-exports them all.
// Usage: bin/node scripts/gen-api-types.mjs [path/to/engine-api.yaml]   (then commit src/types/api/)
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** The yaml: the argument, else shared/api/… in the first folder above the repo that has it (worktrees sit deeper). */
function findYaml() {
  if (process.argv[2]) return process.argv[2];
  for (let dir = resolve('..'); ; dir = dirname(dir)) {
    const p = join(dir, 'shared/api/engine-api-v1.51.yaml');
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) throw new Error('engine-api-v1.51.yaml not found above the repo; give its path');
  }
}
const yamlPath = findYaml();
const OUT = 'src/types/api';
const MAX_LINES = 600;

/** Definition name → [file under src/types, exported name] of the hand-written type. */
const HAND_WRITTEN = {
  PortBinding: ['container-api.ts', 'PortBinding'],
  PortMap: ['container-api.ts', 'PortMap'],
  RestartPolicy: ['container-api.ts', 'RestartPolicy'],
  HealthConfig: ['container-api.ts', 'HealthConfig'],
  DeviceMapping: ['container-api.ts', 'DeviceMapping'],
  DeviceRequest: ['container-api.ts', 'DeviceRequest'],
  ThrottleDevice: ['container-api.ts', 'ThrottleDevice'],
  Mount: ['container-api.ts', 'MountSpec'],
  Resources: ['container-api.ts', 'Resources'],
  HostConfig: ['container-api.ts', 'HostConfig'],
  ContainerConfig: ['container-api.ts', 'ContainerConfig'],
  NetworkingConfig: ['container-api.ts', 'NetworkingConfig'],
  EndpointSettings: ['container-api.ts', 'EndpointSettings'],
  EndpointIPAMConfig: ['container-api.ts', 'EndpointIPAMConfig'],
  AuthConfig: ['distribution.ts', 'AuthConfig'],
  ProgressDetail: ['distribution.ts', 'ProgressDetail'],
  ImageDeleteResponseItem: ['images.ts', 'ImageDeleteItem'],
  Volume: ['volumes.ts', 'VolumeView'],
  VolumeCreateOptions: ['volumes.ts', 'VolumeCreateRequest'],
  ProcessConfig: ['exec.ts', 'ProcessConfig'],
  ExecInspectResponse: ['exec.ts', 'ExecInspectResponse'],
  EventActor: ['events.ts', 'EventActor'],
};

const api = parse(readFileSync(yamlPath, 'utf8'));
const defs = api.definitions;

const ident = (name) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

/** The TypeScript type of a schema; refs collects the definitions it names. */
function typeOf(s, indent, refs) {
  if (!s || typeof s !== 'object') return 'unknown';
  let t;
  if (s.$ref) {
    const name = s.$ref.replace('#/definitions/', '');
    refs.add(name);
    t = name;
  } else if (s.allOf) t = s.allOf.map((x) => typeOf(x, indent, refs)).join(' & ');
  else if (s.enum) t = s.enum.map((v) => JSON.stringify(v)).join(' | ');
  else if (s.type === 'array') {
    const item = typeOf(s.items, indent, refs);
    t = /[|&]/.test(item) && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
  } else if (s.type === 'string') t = 'string';
  else if (s.type === 'integer' || s.type === 'number') t = 'number';
  else if (s.type === 'boolean') t = 'boolean';
  else if (s.properties || s.type === 'object' || s.additionalProperties) {
    const props = Object.entries(s.properties ?? {});
    const extra = s.additionalProperties;
    if (!props.length) {
      if (extra && typeof extra === 'object') t = `Record<string, ${typeOf(extra, indent, refs)}>`;
      else t = 'Record<string, unknown>';
    } else {
      const pad = '  '.repeat(indent + 1);
      const req = new Set(s.required ?? []);
      const lines = props.map(([k, v]) => `${pad}${ident(k)}${req.has(k) ? '' : '?'}: ${typeOf(v, indent + 1, refs)};`);
      if (extra && typeof extra === 'object') lines.push(`${pad}[key: string]: unknown;`);
      t = `{\n${lines.join('\n')}\n${'  '.repeat(indent)}}`;
    }
  } else t = 'unknown';
  if (s['x-nullable']) t = `${t} | null`;
  return t;
}

function firstSentence(text) {
  if (!text) return '';
  const one = String(text)
    .trim()
    .split(/\n\s*\n/)[0]
    .replace(/\s+/g, ' ');
  const m = one.match(/^.*?[.](\s|$)/);
  return (m ? m[0] : one).trim().replace(/\*\//g, '* /');
}

// The response objects the paths describe inline under a title (SystemDataUsageResponse,
// ExecInspectResponse, the prune responses, …; a list's item for HistoryResponseItem), generated as
// definitions of that name unless a definition has it.
const inline = {};
for (const ops of Object.values(api.paths ?? {}))
  for (const op of Object.values(ops ?? {}))
    for (const res of Object.values(op?.responses ?? {})) {
      const s = res?.schema;
      const titled = s?.title ? s : s?.type === 'array' && s.items?.title ? s.items : undefined;
      if (titled && !titled.$ref && !defs[titled.title] && !inline[titled.title]) inline[titled.title] = titled;
    }

// Each definition's text and the names it references.
const blocks = [];
for (const [name, schema] of [...Object.entries(defs), ...Object.entries(inline)]) {
  if (HAND_WRITTEN[name]) continue;
  const refs = new Set();
  const body = typeOf(schema, 0, refs);
  const doc = firstSentence(schema.description);
  const head = doc ? `/** ${doc} */\n` : '';
  const text =
    body.startsWith('{') && body.endsWith('}') ? `${head}export interface ${name} ${body}\n` : `${head}export type ${name} = ${body};\n`;
  refs.delete(name);
  blocks.push({ name, text, refs, lines: text.split('\n').length });
}

// Definitions grouped by reference cycles (Tarjan's strongly connected components, which come out
// with what a group references before it), in the order of the API description otherwise; parts of
// at most MAX_LINES lines are filled in that order with a group never split, so a part imports only
// earlier parts and the folder has no import circle. (The API description is ours, not user input:
// the recursion is bounded by its few hundred definitions.)
const byName = new Map(blocks.map((b) => [b.name, b]));
const groups = [];
{
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  let next = 0;
  const visit = (name) => {
    index.set(name, next);
    low.set(name, next++);
    stack.push(name);
    onStack.add(name);
    for (const r of byName.get(name).refs) {
      if (!byName.has(r)) continue;
      if (!index.has(r)) {
        visit(r);
        low.set(name, Math.min(low.get(name), low.get(r)));
      } else if (onStack.has(r)) low.set(name, Math.min(low.get(name), index.get(r)));
    }
    if (low.get(name) === index.get(name)) {
      const members = [];
      let m;
      do {
        m = stack.pop();
        onStack.delete(m);
        members.push(byName.get(m));
      } while (m !== name);
      groups.push(members.reverse());
    }
  };
  for (const b of blocks) if (!index.has(b.name)) visit(b.name);
}
const parts = [];
let cur = null;
for (const g of groups) {
  const lines = g.reduce((n, b) => n + b.lines, 0);
  if (!cur || (cur.lines > 0 && cur.lines + lines > MAX_LINES)) parts.push((cur = { blocks: [], lines: 0 }));
  cur.blocks.push(...g);
  cur.lines += lines;
}
const partOf = new Map();
parts.forEach((p, i) => p.blocks.forEach((b) => partOf.set(b.name, i)));

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const HEADER = (what) =>
  `// GENERATED by scripts/gen-api-types.mjs from engine-api-v1.51.yaml — do not edit; run the script.\n// ${what}\n`;
parts.forEach((p, i) => {
  const imports = new Map(); // file → names
  for (const b of p.blocks)
    for (const r of b.refs) {
      if (partOf.get(r) === i) continue;
      const file = HAND_WRITTEN[r] ? `../${HAND_WRITTEN[r][0]}` : `./part-${partOf.get(r) + 1}.ts`;
      const spec = HAND_WRITTEN[r] && HAND_WRITTEN[r][1] !== r ? `${HAND_WRITTEN[r][1]} as ${r}` : r;
      if (!imports.has(file)) imports.set(file, new Set());
      imports.get(file).add(spec);
    }
  const importLines = [...imports].sort().map(([f, names]) => `import type { ${[...names].sort().join(', ')} } from '${f}';`);
  const what = `API definitions ${p.blocks[0].name} … ${p.blocks[p.blocks.length - 1].name}.`;
  writeFileSync(
    join(OUT, `part-${i + 1}.ts`),
    `${HEADER(what)}${importLines.join('\n')}${importLines.length ? '\n' : ''}\n${p.blocks.map((b) => b.text).join('\n')}`,
  );
});
const reexports = Object.entries(HAND_WRITTEN).map(
  ([name, [file, exp]]) => `export type { ${exp === name ? name : `${exp} as ${name}`} } from '../${file}';`,
);
const index = `${HEADER('Every definition of the API description: generated parts, and the hand-written types of src/types/ under their API names.')}${parts.map((_, i) => `export type * from './part-${i + 1}.ts';`).join('\n')}\n${reexports.join('\n')}\n`;
writeFileSync(join(OUT, 'index.ts'), index);
console.log(
  `${blocks.length} definitions generated in ${parts.length} parts, ${Object.keys(HAND_WRITTEN).length} re-exported; ${readdirSync(OUT).length} files in ${OUT}`,
);
