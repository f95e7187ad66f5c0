// Log-opt parsing and validation, with dockerd's option sets and messages so that `docker run
// --log-opt …` fails the same way. Sizes use go-units' FromHumanSize rules (decimal: 10k = 10000).

import { invalidParameter } from '../errors.ts';
import { Re2, Re2SyntaxError } from '../util/re2.ts';
import { parseBool, parseSize } from './units.ts';
import { REMOTE_VALIDATORS } from './remote/validate.ts';

export { parseBool, parseSize } from './units.ts';

export const LOG_DRIVERS = ['json-file', 'local', 'none', 'gelf', 'syslog', 'fluentd', 'journald'] as const;
/** Accepted by every driver and not passed to the driver's own check (dockerd's built-in opts). */
const COMMON_KEYS = new Set(['mode', 'max-buffer-size', 'cache-disabled']);
const FILE_KEYS = ['max-file', 'max-size', 'compress'];
const ATTR_KEYS = ['labels', 'labels-regex', 'env', 'env-regex', 'tag'];
const JSON_FILE_KEYS = new Set([...FILE_KEYS, ...ATTR_KEYS]);
const LOCAL_KEYS = new Set([...FILE_KEYS, ...ATTR_KEYS]);
// The dual-logging cache takes the local driver's options with a "cache-" prefix.
for (const k of LOCAL_KEYS) COMMON_KEYS.add(`cache-${k}`);

function parseIntStrict(text: string): number | undefined {
  return /^[+-]?\d+$/.test(text) ? Number(text) : undefined;
}

export interface FileLogConfig {
  /** Bytes before rotating; Infinity when unlimited. */
  maxSize: number;
  /** Files kept, the current one included. */
  maxFiles: number;
  compress: boolean;
}

export function isBuiltinLogDriver(kind: string): boolean {
  return (LOG_DRIVERS as readonly string[]).includes(kind);
}

/**
 * Throws invalidParameter (dockerd's messages) for unknown keys and bad values. A plugin (the caller
 * found one by that name) gets only the options every driver shares checked: the rest are its own.
 */
export function validateLogOptions(kind: string, options: Record<string, string>, plugin = false): void {
  if (kind === 'none') return; // dockerd accepts anything for none
  if (plugin && !isBuiltinLogDriver(kind)) {
    validateCommon(options);
    fileLogConfig('local', cacheOptions(options)); // the cache's settings, used if the plugin cannot read
    return;
  }
  if (!isBuiltinLogDriver(kind)) {
    throw invalidParameter(`logger: no log driver named '${kind}' is registered`);
  }
  validateCommon(options);
  const remote = REMOTE_VALIDATORS[kind];
  if (remote) {
    fileLogConfig('local', cacheOptions(options)); // the dual-logging cache's settings
    // As dockerd, the driver's own check never sees the options every driver shares.
    remote(Object.fromEntries(Object.entries(options).filter(([k]) => !COMMON_KEYS.has(k))));
    for (const key of ['labels-regex', 'env-regex']) if (options[key]) compileRegex(key, options[key]);
    return;
  }
  const own = kind === 'json-file' ? JSON_FILE_KEYS : LOCAL_KEYS;
  for (const key of Object.keys(options)) {
    if (COMMON_KEYS.has(key) || own.has(key)) continue;
    throw invalidParameter(
      kind === 'json-file' ? `unknown log opt '${key}' for json-file log driver` : `unknown log opt '${key}' for log driver ${kind}`,
    );
  }
  fileLogConfig(kind, options);
  for (const key of ['labels-regex', 'env-regex']) {
    const re = options[key];
    if (re) compileRegex(key, re);
  }
}

function validateCommon(options: Record<string, string>): void {
  const mode = options['mode'] ?? '';
  if (mode !== '' && mode !== 'blocking' && mode !== 'non-blocking') {
    throw invalidParameter(`logger: logging mode not supported: ${mode}`);
  }
  const buffer = options['max-buffer-size'];
  if (buffer !== undefined) {
    if (mode !== 'non-blocking') throw invalidParameter(`logger: max-buffer-size option is only supported with 'mode=non-blocking'`);
    try {
      parseSize(buffer, true);
    } catch (err) {
      throw invalidParameter(`error parsing option max-buffer-size: ${(err as Error).message}`);
    }
  }
  const cacheDisabled = options['cache-disabled'];
  if (cacheDisabled && parseBool(cacheDisabled) === undefined) {
    throw invalidParameter(`invalid value for option cache-disabled: ${cacheDisabled}`);
  }
}

/**
 * dockerd's dual logging: a driver that cannot read gets a local-format cache that `docker logs`
 * reads, unless cache-disabled is true.
 */
export function cacheEnabled(options: Record<string, string>): boolean {
  const v = options['cache-disabled'];
  return v === undefined || v === '' || parseBool(v) !== true;
}

/** The cache's local-driver options: the "cache-" ones without their prefix. */
export function cacheOptions(options: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) if (k.startsWith('cache-') && LOCAL_KEYS.has(k.slice(6))) out[k.slice(6)] = v;
  return out;
}

/** Rotation settings with each driver's defaults: json-file never rotates unless asked; local keeps 5×20 MiB, compressed. */
export function fileLogConfig(kind: string, options: Record<string, string>): FileLogConfig {
  return kind === 'local' ? localConfig(options) : jsonFileConfig(options);
}

function jsonFileConfig(options: Record<string, string>): FileLogConfig {
  let maxSize = Infinity;
  const sizeText = options['max-size'];
  if (sizeText !== undefined) {
    const size = parseSize(sizeText);
    if (size === 0 || size < -1) throw invalidParameter('max-size must be a positive number');
    if (size > 0) maxSize = size;
  }
  let maxFiles = 1;
  const fileText = options['max-file'];
  if (fileText !== undefined) {
    const n = parseIntStrict(fileText);
    if (n === undefined) throw invalidParameter(`strconv.Atoi: parsing ${JSON.stringify(fileText)}: invalid syntax`);
    if (n < 1) throw invalidParameter('max-file cannot be less than 1');
    maxFiles = n;
  }
  let compress = false;
  const compressText = options['compress'];
  if (compressText !== undefined) {
    const b = parseBool(compressText);
    if (b === undefined) throw invalidParameter(`strconv.ParseBool: parsing ${JSON.stringify(compressText)}: invalid syntax`);
    if (b && (maxFiles === 1 || maxSize === Infinity)) {
      throw invalidParameter('compress cannot be true when max-file is less than 2 or max-size is not set');
    }
    compress = b;
  }
  // max-file without max-size never rotates (dockerd ignores it the same way).
  return { maxSize, maxFiles: maxSize === Infinity ? 1 : maxFiles, compress };
}

function localConfig(options: Record<string, string>): FileLogConfig {
  let maxSize: number = 20 * 1024 * 1024;
  let maxFiles = 5;
  let compress = true;
  const sizeText = options['max-size'];
  if (sizeText !== undefined) {
    let size: number;
    try {
      size = parseSize(sizeText);
    } catch (err) {
      throw invalidParameter(`invalid value for max-size: ${sizeText}: ${(err as Error).message}`);
    }
    if (size < -1) throw invalidParameter('max-size must not be negative');
    maxSize = size <= 0 ? Infinity : size;
  }
  const fileText = options['max-file'];
  if (fileText !== undefined) {
    const n = parseIntStrict(fileText);
    if (n === undefined) throw invalidParameter(`invalid value for max-file: ${fileText}: invalid syntax`);
    if (n < 0) throw invalidParameter('max-file must not be negative');
    maxFiles = Math.max(n, 1);
  }
  const compressText = options['compress'];
  if (compressText !== undefined) {
    const b = parseBool(compressText);
    if (b === undefined)
      throw invalidParameter(
        `invalid boolean value for compress: strconv.ParseBool: parsing ${JSON.stringify(compressText)}: invalid syntax`,
      );
    compress = b;
  }
  if (compress && maxFiles <= 1) throw invalidParameter('compression cannot be enabled when max file count is 1');
  if (maxSize === Infinity) return { maxSize, maxFiles: 1, compress: false };
  return { maxSize, maxFiles, compress };
}

/** A log option's regular expression, in Go's syntax (RE2, linear time): Go's words when invalid. */
export function compileRegex(key: string, source: string): Re2 {
  try {
    return Re2.compile(source);
  } catch (err) {
    if (err instanceof Re2SyntaxError)
      throw invalidParameter(err.message.replace(/^error parsing regexp/, `error parsing regexp for ${key}`));
    throw err;
  }
}

/** What the daemon knows about a container, for the labels/env/tag options. */
export interface ContainerLogInfo {
  id?: string;
  name?: string;
  image?: string;
  imageId?: string;
  labels?: Record<string, string>;
  env?: string[];
  daemonName?: string;
}

/** Flattens container facts into the attrs record that createLogDriver takes. */
export function logAttrs(info: ContainerLogInfo): Record<string, string> {
  const out: Record<string, string> = {};
  if (info.name !== undefined) out['name'] = info.name.replace(/^\//, '');
  if (info.image !== undefined) out['image'] = info.image;
  if (info.imageId !== undefined) out['imageId'] = info.imageId;
  if (info.daemonName !== undefined) out['daemonName'] = info.daemonName;
  for (const [k, v] of Object.entries(info.labels ?? {})) out[`label:${k}`] = v;
  for (const e of info.env ?? []) {
    const eq = e.indexOf('=');
    if (eq > 0) out[`env:${e.slice(0, eq)}`] = e.slice(eq + 1);
  }
  return out;
}

function prefixed(attrs: Record<string, string>, prefix: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(attrs)) if (k.startsWith(prefix)) m.set(k.slice(prefix.length), v);
  return m;
}

/**
 * The extra attributes json-file stores with every entry (dockerd's Info.ExtraAttributes plus the
 * tag): selected labels, labels matching labels-regex, selected env vars, env vars matching env-regex.
 */
export function extraAttributes(
  containerId: string,
  options: Record<string, string>,
  attrs: Record<string, string>,
): Record<string, string> {
  const extra: Record<string, string> = {};
  const labels = prefixed(attrs, 'label:');
  const env = prefixed(attrs, 'env:');
  for (const key of (options['labels'] ?? '').split(',')) {
    if (key && labels.has(key)) extra[key] = labels.get(key)!;
  }
  if (options['labels-regex']) {
    const re = compileRegex('labels-regex', options['labels-regex']);
    for (const [k, v] of labels) if (re.test(k)) extra[k] = v;
  }
  for (const key of (options['env'] ?? '').split(',')) {
    if (key && env.has(key)) extra[key] = env.get(key)!;
  }
  if (options['env-regex']) {
    const re = compileRegex('env-regex', options['env-regex']);
    for (const [k, v] of env) if (re.test(k)) extra[k] = v;
  }
  const tag = options['tag'];
  if (tag) extra['tag'] = renderTag(tag, containerId, attrs);
  return extra;
}

/** The common Go-template fields of --log-opt tag ({{.Name}}, {{.ID}}, …); others are kept verbatim. */
export function renderTag(template: string, containerId: string, attrs: Record<string, string>): string {
  const imageId = (attrs['imageId'] ?? '').replace(/^sha256:/, '');
  const fields: Record<string, string> = {
    ID: containerId.slice(0, 12),
    FullID: containerId,
    Name: attrs['name'] ?? '',
    ImageID: imageId.slice(0, 12),
    ImageFullID: attrs['imageId'] ?? '',
    ImageName: attrs['image'] ?? '',
    DaemonName: attrs['daemonName'] ?? 'engine',
    Command: attrs['command'] ?? '',
    Hostname: attrs['hostname'] ?? '',
  };
  return template.replace(/\{\{\s*\.(\w+)\s*\}\}/g, (whole, name: string) => fields[name] ?? whole);
}
