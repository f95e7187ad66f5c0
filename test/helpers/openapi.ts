// Checks a JSON value against a definition of the Docker Engine OpenAPI (swagger 2.0) description in
// ../shared/api. Covers the subset the description uses: $ref, type, properties, required, items,
// additionalProperties, enum, x-nullable. Returns the list of mismatches (empty = conforms).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from './daemon.ts';

export const API_SPEC_PATH = join(REPO_ROOT, '..', 'shared', 'api', 'engine-api-v1.51.yaml');

type Schema = Record<string, any>;

/** Fields dockerd's Go types hold as pointers without omitempty (so it writes null when unset) where the description does not say x-nullable. */
const GO_NIL_POINTERS = new Set(['MemorySwappiness']);
let doc: any;

/** Why a schema test cannot run here (../shared is not part of a user's clone), or undefined. */
export function apiSpecMissing(): string | undefined {
  return existsSync(API_SPEC_PATH)
    ? undefined
    : `skipped: ${API_SPEC_PATH} is absent (../shared sits beside the project only on developer and CI machines)`;
}

function spec(): any {
  doc ??= parse(readFileSync(API_SPEC_PATH, 'utf8'));
  return doc;
}

export function definition(name: string): Schema {
  const d = spec().definitions[name];
  if (!d) throw new Error(`no definition ${name}`);
  return d;
}

/** The schema of a path's response, e.g. responseSchema('/version', 'get', '200'). */
export function responseSchema(path: string, method: string, status: string): Schema {
  const s = spec().paths[path]?.[method]?.responses?.[status]?.schema;
  if (!s) throw new Error(`no response schema for ${method} ${path} ${status}`);
  return s;
}

function deref(s: Schema): Schema {
  while (s && s.$ref) s = definition(String(s.$ref).replace('#/definitions/', ''));
  return s;
}

export function validate(value: unknown, schema: Schema, path = '$', errors: string[] = []): string[] {
  const s = deref(schema);
  if (!s) return errors;
  if (s.allOf) {
    for (const part of s.allOf) validate(value, part, path, errors);
    return errors;
  }
  if (value === null) {
    // dockerd's Go encoder writes null for nil slices/maps/pointers; the description marks some fields x-nullable.
    if (s.type === 'array' || s.type === 'object' || s['x-nullable'] === true || s.type === undefined) return errors;
    if (GO_NIL_POINTERS.has(path.slice(path.lastIndexOf('.') + 1))) return errors;
    errors.push(`${path}: null where ${s.type} is due`);
    return errors;
  }
  const t = s.type;
  const actual = Array.isArray(value) ? 'array' : typeof value;
  if (t === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) errors.push(`${path}: expected integer, got ${JSON.stringify(value)}`);
  } else if (t === 'number') {
    if (typeof value !== 'number') errors.push(`${path}: expected number, got ${actual}`);
  } else if (t === 'string') {
    if (typeof value !== 'string') errors.push(`${path}: expected string, got ${actual}`);
    else if (s.enum && !s.enum.includes(value) && value !== '')
      errors.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(s.enum)}`);
  } else if (t === 'boolean') {
    if (typeof value !== 'boolean') errors.push(`${path}: expected boolean, got ${actual}`);
  } else if (t === 'array') {
    if (!Array.isArray(value)) errors.push(`${path}: expected array, got ${actual}`);
    else if (s.items) value.forEach((v, i) => validate(v, s.items, `${path}[${i}]`, errors));
  } else if (t === 'object' || s.properties) {
    if (actual !== 'object') {
      errors.push(`${path}: expected object, got ${actual}`);
      return errors;
    }
    const obj = value as Record<string, unknown>;
    // A required name the schema does not declare is a slip of the description (ImageManifestSummary's
    // ImageData lists `UnpackedSize`, a field moby's Go type does not have): dockerd never writes it.
    for (const r of s.required ?? [])
      if (!(r in obj) && (!s.properties || r in s.properties)) errors.push(`${path}: missing required ${r}`);
    for (const [k, v] of Object.entries(obj)) {
      if (s.properties?.[k]) validate(v, s.properties[k], `${path}.${k}`, errors);
      else if (s.additionalProperties && typeof s.additionalProperties === 'object')
        validate(v, s.additionalProperties, `${path}.${k}`, errors);
    }
  }
  return errors;
}

/** Fields the description declares for an object schema that the value lacks (what clients may read). */
export function missingProperties(value: Record<string, unknown>, schema: Schema): string[] {
  const s = deref(schema);
  return Object.keys(s.properties ?? {}).filter((k) => !(k in value));
}
