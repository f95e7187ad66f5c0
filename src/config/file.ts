// The configuration file (daemon.json): read and decode it, flatten nested groups (proxies.*), find
// directives that match no option, and turn each value into the same typed value the command line
// produces, checking its JSON shape against the option's type.

import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error.ts';
import type { AddressPool, RuntimeSpec, UlimitSpec } from './daemon-config.ts';
import { OPTIONS, OPTION_BY_KEY, type OptionSpec } from './options.ts';
import { STOCK_RUNTIME, checkAddressPool, checkStorageSize, checkUlimit, isGoDuration } from './values.ts';

/** Keys whose value is a JSON object of sub-keys that are options themselves (proxies → proxies.http-proxy). */
const NESTED_GROUPS = new Set(OPTIONS.filter((o) => o.key.includes('.')).map((o) => o.key.split('.')[0]));

/** Option keys that hold a byte size; the file may give them as a number of bytes too. */
const SIZE_KEYS = new Set(['default-shm-size']);

export interface FileValues {
  /** Typed values by config key; empty strings are left out (they mean "the default"). */
  values: Map<string, unknown>;
  /** Config keys present in the file, with any value. */
  given: Set<string>;
}

/**
 * Reads the file into a flat map of directive → raw JSON value. A missing file gives null unless
 * mustExist (a path the user named); an empty file has no directives.
 */
export function readConfigFile(path: string, mustExist: boolean): Map<string, unknown> | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !mustExist) return null;
    if (code === 'ENOENT') throw new ConfigError(`open ${path}: no such file or directory`);
    if (code === 'EISDIR') throw new ConfigError(`read ${path}: is a directory`);
    throw new ConfigError(`open ${path}: ${(err as Error).message}`);
  }
  return parseConfigText(decode(bytes));
}

/** UTF-8 (with or without a byte order mark) or UTF-16 LE with a BOM, as Windows editors write. */
function decode(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ConfigError('failed to decode configuration JSON: not valid UTF-8');
  }
}

export function parseConfigText(text: string): Map<string, unknown> {
  const raw = new Map<string, unknown>();
  if (text.trim() === '') return raw;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`invalid JSON: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new ConfigError('the configuration must be a JSON object');
  for (const [key, value] of Object.entries(doc)) {
    if (!NESTED_GROUPS.has(key)) {
      raw.set(key, value);
      continue;
    }
    if (!isObject(value)) throw new ConfigError(`${key}: expected an object, got ${describe(value)}`);
    for (const [sub, subValue] of Object.entries(value)) raw.set(`${key}.${sub}`, subValue);
  }
  return raw;
}

/** Directives that match no option, sorted. Command-line-only options (config-file, …) do not count. */
export function unknownDirectives(raw: Map<string, unknown>): string[] {
  return [...raw.keys()].filter((k) => !fileOption(k)).sort();
}

function fileOption(directive: string): OptionSpec | undefined {
  const opt = OPTION_BY_KEY.get(directive);
  return opt && !opt.flagOnly ? opt : undefined;
}

/** Checks and converts every directive (all of which must be known). */
export function convertFileValues(raw: Map<string, unknown>): FileValues {
  const out: FileValues = { values: new Map(), given: new Set() };
  for (const [directive, value] of raw) {
    const opt = fileOption(directive);
    if (!opt) throw new ConfigError(`the following directives don't match any configuration option: ${directive}`);
    out.given.add(opt.key);
    const typed = directive === opt.key ? fromJson(opt, value, directive) : fromOlderForm(opt, value, directive);
    if (typed !== undefined) out.values.set(opt.key, typed);
  }
  return out;
}

/** An older single-value key (host-gateway-ip: "1.2.3.4") of a list option. */
function fromOlderForm(opt: OptionSpec, value: unknown, directive: string): unknown {
  if (opt.type !== 'list') return fromJson(opt, value, directive);
  if (typeof value !== 'string') fail(directive, `expected a string, got ${describe(value)}`);
  return value === '' ? [] : [value];
}

function fromJson(opt: OptionSpec, value: unknown, name: string): unknown {
  switch (opt.type) {
    case 'bool':
      if (typeof value !== 'boolean') fail(name, `expected a boolean, got ${describe(value)}`);
      return value;
    case 'string':
      if (SIZE_KEYS.has(opt.key) && typeof value === 'number') return String(value);
      if (typeof value !== 'string') fail(name, `expected a string, got ${describe(value)}`);
      return value === '' ? undefined : value;
    case 'int':
      if (!Number.isSafeInteger(value)) fail(name, `expected an integer, got ${describe(value)}`);
      return value;
    case 'list':
      return stringArray(value, name);
    case 'map':
      return stringRecord(value, name);
    case 'features':
      return mapValues(record(value, name), (v, k) => {
        if (typeof v !== 'boolean') fail(`${name}.${k}`, `expected a boolean, got ${describe(v)}`);
        return v;
      });
    case 'network-opts':
      return mapValues(record(value, name), (v, k) => stringRecord(v, `${name}.${k}`));
    case 'ulimits':
      return mapValues(record(value, name), (v, k) => ulimitEntry(v, k, `${name}.${k}`));
    case 'runtimes':
      return mapValues(record(value, name), (v, k) => runtimeEntry(v, k, `${name}.${k}`));
    case 'address-pools':
      if (!Array.isArray(value)) fail(name, `expected an array, got ${describe(value)}`);
      return value.map((v, i) => addressPool(v, `${name}[${i}]`));
    case 'object':
      checkBuilder(value, name);
      return value;
  }
}

function ulimitEntry(value: unknown, key: string, where: string): UlimitSpec {
  const obj = fields(value, where, ['Name', 'Soft', 'Hard']);
  const name = obj.Name ?? key;
  if (typeof name !== 'string') fail(`${where}.Name`, `expected a string, got ${describe(name)}`);
  for (const f of ['Soft', 'Hard'] as const) {
    if (!Number.isSafeInteger(obj[f])) fail(`${where}.${f}`, `expected an integer, got ${describe(obj[f])}`);
  }
  const u = { Name: name, Soft: obj.Soft as number, Hard: obj.Hard as number };
  try {
    checkUlimit(u);
  } catch (err) {
    fail(where, (err as Error).message);
  }
  return u;
}

function runtimeEntry(value: unknown, name: string, where: string): RuntimeSpec {
  if (name === STOCK_RUNTIME) fail(where, `runtime name '${STOCK_RUNTIME}' is reserved`);
  const obj = fields(value, where, ['path', 'runtimeArgs', 'runtimeType', 'options']);
  const spec: RuntimeSpec = {};
  if (obj.path !== undefined) {
    if (typeof obj.path !== 'string') fail(`${where}.path`, `expected a string, got ${describe(obj.path)}`);
    if (obj.path !== '') spec.path = obj.path;
  }
  if (obj.runtimeType !== undefined) {
    if (typeof obj.runtimeType !== 'string') fail(`${where}.runtimeType`, `expected a string, got ${describe(obj.runtimeType)}`);
    if (obj.runtimeType !== '') spec.runtimeType = obj.runtimeType;
  }
  if (obj.runtimeArgs !== undefined) spec.runtimeArgs = stringArray(obj.runtimeArgs, `${where}.runtimeArgs`);
  if (obj.options !== undefined) spec.options = record(obj.options, `${where}.options`);
  if (!spec.path && !spec.runtimeType) fail(where, `runtime ${name}: either a runtimeType or a path must be configured`);
  if (spec.path && spec.runtimeType) fail(where, `runtime ${name}: cannot configure both path and runtimeType for the same runtime`);
  if (spec.path && spec.options && Object.keys(spec.options).length > 0)
    fail(where, `runtime ${name}: options cannot be used with a path runtime`);
  if (spec.runtimeType && spec.runtimeArgs && spec.runtimeArgs.length > 0)
    fail(where, `runtime ${name}: args cannot be used with a runtimeType runtime`);
  return spec;
}

function addressPool(value: unknown, where: string): AddressPool {
  const obj = fields(value, where, ['base', 'size']);
  if (typeof obj.base !== 'string') fail(`${where}.base`, `expected a CIDR string, got ${describe(obj.base)}`);
  if (!Number.isSafeInteger(obj.size)) fail(`${where}.size`, `expected an integer, got ${describe(obj.size)}`);
  const pool = { base: obj.base, size: obj.size as number };
  try {
    checkAddressPool(pool);
  } catch (err) {
    fail(where, (err as Error).message);
  }
  return pool;
}

// Builder settings. Field names match case-insensitively, as Go's JSON decoder matches them.
const GC_SIZES = ['defaultkeepstorage', 'defaultreservedspace', 'defaultmaxusedspace', 'defaultminfreespace'];
const RULE_SIZES = ['keepstorage', 'reservedspace', 'maxusedspace', 'minfreespace'];

function checkBuilder(value: unknown, where: string): void {
  for (const [k, v] of Object.entries(record(value, where))) {
    const at = `${where}.${k}`;
    switch (k.toLowerCase()) {
      case 'gc':
        checkGC(v, at);
        break;
      case 'entitlements':
        mapValues(record(v, at), (b, e) => bool(b, `${at}.${e}`));
        break;
      case 'history':
        record(v, at);
        break;
      case 'proxy-network':
        bool(v, at);
        break;
      default:
        fail(at, 'unknown builder setting');
    }
  }
}

function checkGC(value: unknown, where: string): void {
  for (const [k, v] of Object.entries(record(value, where))) {
    const at = `${where}.${k}`;
    const lower = k.toLowerCase();
    if (lower === 'enabled') bool(v, at);
    else if (GC_SIZES.includes(lower)) storageSize(v, at);
    else if (lower === 'policy') {
      if (!Array.isArray(v)) fail(at, `expected an array, got ${describe(v)}`);
      v.forEach((rule, i) => checkGCRule(rule, `${at}[${i}]`));
    } else fail(at, 'unknown garbage-collection setting');
  }
}

function checkGCRule(value: unknown, where: string): void {
  for (const [k, v] of Object.entries(record(value, where))) {
    const at = `${where}.${k}`;
    const lower = k.toLowerCase();
    if (lower === 'all') bool(v, at);
    else if (RULE_SIZES.includes(lower)) storageSize(v, at);
    else if (lower === 'filter') checkGCFilter(v, at);
    else fail(at, 'unknown garbage-collection policy setting');
  }
}

/** ["unused-for=2200h", …]; the older object form ({"unused-for": {"2200h": true}}) is accepted as is. */
function checkGCFilter(value: unknown, where: string): void {
  if (isObject(value)) return;
  for (const f of stringArray(value, where)) {
    const eq = f.indexOf('=');
    if (eq <= 0) fail(where, `filter "${f}" is not of the form key=value`);
    const key = f.slice(0, eq).trim().toLowerCase();
    const arg = f.slice(eq + 1).trim();
    if ((key === 'unused-for' || key === 'until') && !isGoDuration(arg)) fail(where, `filter "${f}": "${arg}" is not a duration`);
  }
}

function storageSize(value: unknown, where: string): void {
  if (typeof value !== 'string') fail(where, `expected a size string, got ${describe(value)}`);
  try {
    checkStorageSize(value);
  } catch (err) {
    fail(where, (err as Error).message);
  }
}

// Shape helpers.

function fail(where: string, reason: string): never {
  throw new ConfigError(`${where}: ${reason}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (!isObject(value)) fail(where, `expected an object, got ${describe(value)}`);
  return value;
}

/** An object whose fields must be among `allowed`. */
function fields(value: unknown, where: string, allowed: string[]): Record<string, unknown> {
  const obj = record(value, where);
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) fail(where, `unknown field "${k}" (expected ${allowed.join(', ')})`);
  return obj;
}

function bool(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') fail(where, `expected a boolean, got ${describe(value)}`);
  return value;
}

function stringArray(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) fail(where, `expected an array of strings, got ${describe(value)}`);
  value.forEach((v, i) => {
    if (typeof v !== 'string') fail(`${where}[${i}]`, `expected a string, got ${describe(v)}`);
  });
  return [...value];
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  return mapValues(record(value, where), (v, k) => {
    if (typeof v !== 'string') fail(`${where}.${k}`, `expected a string, got ${describe(v)}`);
    return v;
  });
}

function mapValues<T>(obj: Record<string, unknown>, fn: (v: unknown, k: string) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = fn(v, k);
  return out;
}
