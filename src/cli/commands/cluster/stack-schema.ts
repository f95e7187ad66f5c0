// `stack deploy`'s check of a compose file against the compose file schema (v3), as the docker CLI
// makes it before anything else: unknown keys ("services.web Additional property foo is not
// allowed", "(root) Additional property bogus is not allowed") and wrong types ("services.web.ports
// must be a list", "… must be a mapping or null"; "a integer" sic), in the docker CLI's words. Of
// all the failures the one reported is the most specific (the longest path; a wrong type wins a
// tie), and of a oneOf whose alternatives all fail, the first alternative of the value's type (else
// the first) speaks. Not checked: string formats (durations, ports), enums and required keys.
//
// Each file is checked against the schema of the version it declares (3.0 to 3.13; "3", "" or none:
// 3.13; any other is refused). SCHEMA is the compose schema v3.13 reduced to what the check reads:
// t types, p properties, a: false (no other keys), x (`x-` keys allowed), k [key pattern, schema of
// the matching keys], v (schema of the other keys), i (items), o (oneOf/anyOf); '@name' refers to a
// definition. OLDER holds the older versions' schemas, reduced alike, as changes.

type Schema =
  string | { t?: string[]; p?: Record<string, Schema>; a?: false; x?: true; k?: [string, Schema]; v?: Schema; i?: Schema; o?: Schema[] };

interface Failure {
  field: string;
  /** An invalid_type failure (wins a tie). */
  type: boolean;
  text: string;
}

// prettier-ignore
const SCHEMA: { root: Schema; defs: Record<string, Schema> } = 
{"root":{"t":["object"],"p":{"version":{"t":["string"]},"services":{"t":["object"],"k":["^[a-zA-Z0-9._-]+$","@service"],"a":false},"networks":{"t":["object"],"k":["^[a-zA-Z0-9._-]+$","@network"]},"volumes":{"t":["object"],"k":["^[a-zA-Z0-9._-]+$","@volume"],"a":false},"secrets":{"t":["object"],"k":["^[a-zA-Z0-9._-]+$","@secret"],"a":false},"configs":{"t":["object"],"k":["^[a-zA-Z0-9._-]+$","@config"],"a":false}},"x":true,"a":false},"defs":{"service":{"t":["object"],"p":{"deploy":"@deployment","build":{"o":[{"t":["string"]},{"t":["object"],"p":{"context":{"t":["string"]},"dockerfile":{"t":["string"]},"args":"@list_or_dict","labels":"@list_or_dict","cache_from":"@list_of_strings","network":{"t":["string"]},"target":{"t":["string"]},"shm_size":{"t":["integer","string"]},"extra_hosts":"@list_or_dict"}}]},"cap_add":{"t":["array"],"i":{"t":["string"]}},"cap_drop":{"t":["array"],"i":{"t":["string"]}},"cgroupns_mode":{"t":["string"]},"cgroup_parent":{"t":["string"]},"command":{"o":[{"t":["string"]},{"t":["array"],"i":{"t":["string"]}}]},"configs":{"t":["array"],"i":{"o":[{"t":["string"]},{"t":["object"],"p":{"source":{"t":["string"]},"target":{"t":["string"]},"uid":{"t":["string"]},"gid":{"t":["string"]},"mode":{"t":["number"]}}}]}},"container_name":{"t":["string"]},"credential_spec":{"t":["object"],"p":{"config":{"t":["string"]},"file":{"t":["string"]},"registry":{"t":["string"]}},"a":false},"depends_on":"@list_of_strings","devices":{"t":["array"],"i":{"t":["string"]}},"dns":"@string_or_list","dns_search":"@string_or_list","domainname":{"t":["string"]},"entrypoint":{"o":[{"t":["string"]},{"t":["array"],"i":{"t":["string"]}}]},"env_file":"@string_or_list","environment":"@list_or_dict","expose":{"t":["array"],"i":{"t":["string","number"]}},"external_links":{"t":["array"],"i":{"t":["string"]}},"extra_hosts":"@list_or_dict","healthcheck":"@healthcheck","hostname":{"t":["string"]},"image":{"t":["string"]},"init":{"t":["boolean"]},"ipc":{"t":["string"]},"isolation":{"t":["string"]},"labels":"@list_or_dict","links":{"t":["array"],"i":{"t":["string"]}},"logging":{"t":["object"],"p":{"driver":{"t":["string"]},"options":{"t":["object"],"k":["^.+$",{"t":["string","number","null"]}]}},"a":false},"mac_address":{"t":["string"]},"network_mode":{"t":["string"]},"networks":{"o":["@list_of_strings",{"t":["object"],"k":["^[a-zA-Z0-9._-]+$",{"o":[{"t":["object"],"p":{"aliases":"@list_of_strings","driver_opts":{"t":["object"],"k":["^.+$",{"t":["string","number"]}]},"ipv4_address":{"t":["string"]},"ipv6_address":{"t":["string"]}},"a":false},{"t":["null"]}]}],"a":false}]},"pid":{"t":["string","null"]},"ports":{"t":["array"],"i":{"o":[{"t":["number"]},{"t":["string"]},{"t":["object"],"p":{"mode":{"t":["string"]},"target":{"t":["integer"]},"published":{"t":["integer"]},"protocol":{"t":["string"]}},"a":false}]}},"privileged":{"t":["boolean"]},"read_only":{"t":["boolean"]},"restart":{"t":["string"]},"security_opt":{"t":["array"],"i":{"t":["string"]}},"shm_size":{"t":["number","string"]},"secrets":{"t":["array"],"i":{"o":[{"t":["string"]},{"t":["object"],"p":{"source":{"t":["string"]},"target":{"t":["string"]},"uid":{"t":["string"]},"gid":{"t":["string"]},"mode":{"t":["number"]}}}]}},"sysctls":"@list_or_dict","stdin_open":{"t":["boolean"]},"stop_grace_period":{"t":["string"]},"stop_signal":{"t":["string"]},"tmpfs":"@string_or_list","tty":{"t":["boolean"]},"ulimits":{"t":["object"],"k":["^[a-z]+$",{"o":[{"t":["integer"]},{"t":["object"],"p":{"hard":{"t":["integer"]},"soft":{"t":["integer"]}},"a":false}]}]},"oom_score_adj":{"t":["integer"]},"user":{"t":["string"]},"userns_mode":{"t":["string"]},"volumes":{"t":["array"],"i":{"o":[{"t":["string"]},{"t":["object"],"p":{"type":{"t":["string"]},"source":{"t":["string"]},"target":{"t":["string"]},"read_only":{"t":["boolean"]},"consistency":{"t":["string"]},"bind":{"t":["object"],"p":{"propagation":{"t":["string"]}}},"volume":{"t":["object"],"p":{"nocopy":{"t":["boolean"]}}},"tmpfs":{"t":["object"],"p":{"size":{"t":["integer"]}}}},"a":false}]}},"working_dir":{"t":["string"]}},"x":true,"a":false},"healthcheck":{"t":["object"],"p":{"disable":{"t":["boolean"]},"interval":{"t":["string"]},"retries":{"t":["number"]},"test":{"o":[{"t":["string"]},{"t":["array"],"i":{"t":["string"]}}]},"timeout":{"t":["string"]},"start_period":{"t":["string"]},"start_interval":{"t":["string"]}},"a":false},"deployment":{"t":["object","null"],"p":{"mode":{"t":["string"]},"endpoint_mode":{"t":["string"]},"replicas":{"t":["integer"]},"labels":"@list_or_dict","rollback_config":{"t":["object"],"p":{"parallelism":{"t":["integer"]},"delay":{"t":["string"]},"failure_action":{"t":["string"]},"monitor":{"t":["string"]},"max_failure_ratio":{"t":["number"]},"order":{"t":["string"]}},"a":false},"update_config":{"t":["object"],"p":{"parallelism":{"t":["integer"]},"delay":{"t":["string"]},"failure_action":{"t":["string"]},"monitor":{"t":["string"]},"max_failure_ratio":{"t":["number"]},"order":{"t":["string"]}},"a":false},"resources":{"t":["object"],"p":{"limits":{"t":["object"],"p":{"cpus":{"t":["string"]},"memory":{"t":["string"]},"pids":{"t":["integer"]}},"a":false},"reservations":{"t":["object"],"p":{"cpus":{"t":["string"]},"memory":{"t":["string"]},"generic_resources":"@generic_resources"},"a":false}},"a":false},"restart_policy":{"t":["object"],"p":{"condition":{"t":["string"]},"delay":{"t":["string"]},"max_attempts":{"t":["integer"]},"window":{"t":["string"]}},"a":false},"placement":{"t":["object"],"p":{"constraints":{"t":["array"],"i":{"t":["string"]}},"preferences":{"t":["array"],"i":{"t":["object"],"p":{"spread":{"t":["string"]}},"a":false}},"max_replicas_per_node":{"t":["integer"]}},"a":false}},"a":false},"generic_resources":{"t":["array"],"i":{"t":["object"],"p":{"discrete_resource_spec":{"t":["object"],"p":{"kind":{"t":["string"]},"value":{"t":["number"]}},"a":false}},"a":false}},"network":{"t":["object","null"],"p":{"name":{"t":["string"]},"driver":{"t":["string"]},"driver_opts":{"t":["object"],"k":["^.+$",{"t":["string","number"]}]},"ipam":{"t":["object"],"p":{"driver":{"t":["string"]},"config":{"t":["array"],"i":{"t":["object"],"p":{"subnet":{"t":["string"]}},"a":false}}},"a":false},"external":{"t":["boolean","object"],"p":{"name":{"t":["string"]}},"a":false},"internal":{"t":["boolean"]},"attachable":{"t":["boolean"]},"labels":"@list_or_dict"},"x":true,"a":false},"volume":{"t":["object","null"],"p":{"name":{"t":["string"]},"driver":{"t":["string"]},"driver_opts":{"t":["object"],"k":["^.+$",{"t":["string","number"]}]},"external":{"t":["boolean","object"],"p":{"name":{"t":["string"]}},"a":false},"labels":"@list_or_dict","x-cluster-spec":{"t":["object"],"p":{"group":{"t":["string"]},"access_mode":{"t":["object"],"p":{"scope":{"t":["string"]},"sharing":{"t":["string"]},"block_volume":{"t":["object"]},"mount_volume":{"t":["object"],"p":{"fs_type":{"t":["string"]},"mount_flags":{"t":["array"],"i":{"t":["string"]}}}}}},"accessibility_requirements":{"t":["object"],"p":{"requisite":{"t":["array"],"i":{"t":["object"],"p":{"segments":"@list_or_dict"}}},"preferred":{"t":["array"],"i":{"t":["object"],"p":{"segments":"@list_or_dict"}}}}},"capacity_range":{"t":["object"],"p":{"required_bytes":{"t":["string"]},"limit_bytes":{"t":["string"]}}},"availability":{"t":["string"]}}}},"x":true,"a":false},"secret":{"t":["object"],"p":{"name":{"t":["string"]},"file":{"t":["string"]},"external":{"t":["boolean","object"],"p":{"name":{"t":["string"]}}},"labels":"@list_or_dict","driver":{"t":["string"]},"driver_opts":{"t":["object"],"k":["^.+$",{"t":["string","number"]}]},"template_driver":{"t":["string"]}},"x":true,"a":false},"config":{"t":["object"],"p":{"name":{"t":["string"]},"file":{"t":["string"]},"external":{"t":["boolean","object"],"p":{"name":{"t":["string"]}}},"labels":"@list_or_dict","template_driver":{"t":["string"]}},"x":true,"a":false},"string_or_list":{"o":[{"t":["string"]},"@list_of_strings"]},"list_of_strings":{"t":["array"],"i":{"t":["string"]}},"list_or_dict":{"o":[{"t":["object"],"k":[".+",{"t":["string","number","null"]}],"a":false},{"t":["array"],"i":{"t":["string"]}}]},"constraints":{}}};

// Each older v3 schema as the changes that turn the next newer one into it (same reduction; '-'
// removes a key, '=' sets one), newest first: 3.13 → 3.12 → … → 3.0.
type Change = ['-', (string | number)[]] | ['=', (string | number)[], unknown];
// prettier-ignore
const OLDER: Record<string, Change[]> =
{"3.12":[["-",["defs","service","p","oom_score_adj"]],["=",["defs","service","p","networks","o"],["@list_of_strings",{"t":["object"],"k":["^[a-zA-Z0-9._-]+$",{"o":[{"t":["object"],"p":{"aliases":"@list_of_strings","ipv4_address":{"t":["string"]},"ipv6_address":{"t":["string"]}},"a":false},{"t":["null"]}]}],"a":false}]]],"3.11":[["-",["defs","healthcheck","p","start_interval"]]],"3.10":[["=",["defs","service","p","build","o",1,"a"],false]],"3.9":[["-",["defs","volume","p","x-cluster-spec"]]],"3.8":[["-",["defs","service","p","cgroupns_mode"]],["-",["defs","service","p","build","o",1,"p","extra_hosts"]],["-",["defs","deployment","p","resources","p","limits","p","pids"]]],"3.7":[["-",["defs","service","p","credential_spec","p","config"]],["-",["defs","deployment","p","placement","p","max_replicas_per_node"]],["-",["defs","secret","p","driver"]],["-",["defs","secret","p","driver_opts"]],["-",["defs","secret","p","template_driver"]],["-",["defs","config","p","template_driver"]]],"3.6":[["-",["defs","service","x"]],["-",["defs","service","p","init"]],["-",["defs","deployment","p","rollback_config"]],["-",["defs","network","x"]],["-",["defs","volume","x"]],["-",["defs","secret","x"]],["-",["defs","config","x"]]],"3.5":[["-",["defs","service","p","volumes","i","o",1,"p","tmpfs"]]],"3.4":[["-",["defs","generic_resources"]],["-",["defs","service","p","isolation"]],["-",["defs","service","p","build","o",1,"p","shm_size"]],["=",["defs","deployment","p","resources","p","limits"],"@resource"],["=",["defs","deployment","p","resources","p","reservations"],"@resource"],["=",["defs","resource"],{"t":["object"],"p":{"cpus":{"t":["string"]},"memory":{"t":["string"]}},"a":false}],["-",["defs","network","p","name"]],["-",["defs","secret","p","name"]],["-",["defs","config","p","name"]]],"3.3":[["-",["root","x"]],["-",["defs","service","p","build","o",1,"p","network"]],["-",["defs","service","p","build","o",1,"p","target"]],["-",["defs","healthcheck","p","start_period"]],["-",["defs","deployment","p","update_config","p","order"]],["-",["defs","volume","p","name"]]],"3.2":[["-",["root","p","configs"]],["-",["defs","config"]],["-",["defs","service","p","configs"]],["-",["defs","service","p","credential_spec"]],["-",["defs","service","p","build","o",1,"p","labels"]],["-",["defs","deployment","p","placement","p","preferences"]]],"3.1":[["-",["defs","service","p","build","o",1,"p","cache_from"]],["-",["defs","service","p","ports","i","o"]],["=",["defs","service","p","ports","i","t"],["string","number"]],["-",["defs","service","p","volumes","i","o"]],["=",["defs","service","p","volumes","i","t"],["string"]],["-",["defs","deployment","p","endpoint_mode"]],["-",["defs","network","p","attachable"]]],"3.0":[["-",["root","p","secrets"]],["-",["defs","secret"]],["-",["defs","service","p","secrets"]]]};

/** The versions the docker CLI has a schema for, newest first. */
const VERSIONS = ['3.13', ...Object.keys(OLDER)];
const schemas = new Map<string, typeof SCHEMA>([['3.13', SCHEMA]]);

/** The reduced schema of a version, made from the next newer one. */
function schemaOf(version: string): typeof SCHEMA | undefined {
  const at = VERSIONS.indexOf(version);
  if (at < 0) return undefined;
  for (let i = 1; i <= at; i++) {
    if (schemas.has(VERSIONS[i]!)) continue;
    const s = structuredClone(schemas.get(VERSIONS[i - 1]!)!) as unknown as Record<string | number, any>;
    for (const change of OLDER[VERSIONS[i]!]!) {
      const path = change[1];
      const parent = path.slice(0, -1).reduce((o, k) => o[k], s);
      if (change[0] === '-') delete parent[path.at(-1)!];
      else parent[path.at(-1)!] = structuredClone(change[2]);
    }
    schemas.set(VERSIONS[i]!, s as unknown as typeof SCHEMA);
  }
  return schemas.get(version);
}

/**
 * The version a compose file is checked against, as the docker CLI's schema.Version: its
 * `version` printed as Go's %v prints it (a number unquoted, null as <nil>), "" and "3" meaning
 * the newest 3.x, no `version` the newest too.
 */
export function composeVersion(doc: Record<string, unknown>): string {
  if (!Object.hasOwn(doc, 'version')) return VERSIONS[0]!;
  const v = doc.version;
  const text = v === null || v === undefined ? '<nil>' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return text === '' || text === '3' ? VERSIONS[0]! : text;
}

const patterns = new Map<string, RegExp>();
/** The schema's own key patterns (constants of SCHEMA, never user input). */
const pattern = (p: string): RegExp => patterns.get(p) ?? patterns.set(p, new RegExp(p)).get(p)!;

function typeMatches(t: string, v: unknown): boolean {
  switch (t) {
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return Number.isInteger(v);
    case 'null':
      return v === null;
    default:
      return typeof v === t;
  }
}

/** A type list as the docker CLI names it: object → mapping, array → list, "a, b or c". */
function human(types: string[]): string {
  const words = types.map((t) => (t === 'object' ? 'mapping' : t === 'array' ? 'list' : t));
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

type Defs = Record<string, Schema>;
const resolve = (s: Schema, defs: Defs): Exclude<Schema, string> => (typeof s === 'string' ? resolve(defs[s.slice(1)]!, defs) : s);

/** Collects the failures of `v` against `s`; the schema's nesting bounds the recursion. */
function check(v: unknown, schema: Schema, path: string[], out: Failure[], defs: Defs): void {
  const s = resolve(schema, defs);
  const field = path.length ? path.join('.') : '(root)';
  if (s.o) {
    const results = s.o.map((alt) => {
      const sub: Failure[] = [];
      check(v, alt, path, sub, defs);
      return { alt: resolve(alt, defs), sub };
    });
    if (results.some((r) => !r.sub.length)) return;
    const best = results.find((r) => !r.alt.t || r.alt.t.some((t) => typeMatches(t, v))) ?? results[0]!;
    out.push(...best.sub);
    return;
  }
  if (s.t && !s.t.some((t) => typeMatches(t, v))) {
    out.push({ field, type: true, text: `must be a ${human(s.t)}` });
    return;
  }
  if (Array.isArray(v)) {
    if (s.i) v.forEach((item, n) => check(item, s.i!, [...path, String(n)], out, defs));
    return;
  }
  if (v === null || typeof v !== 'object') return;
  for (const [key, value] of Object.entries(v)) {
    if (s.p && Object.hasOwn(s.p, key)) check(value, s.p[key]!, [...path, key], out, defs);
    else if (s.x && key.startsWith('x-')) continue;
    else if (s.k && pattern(s.k[0]).test(key)) check(value, s.k[1], [...path, key], out, defs);
    else if (s.a === false) out.push({ field, type: false, text: `Additional property ${key} is not allowed` });
    else if (s.v) check(value, s.v, [...path, key], out, defs);
  }
}

/**
 * The docker CLI's words for a compose file the schema of `version` (composeVersion's) refuses, or
 * for a version it has no schema for; undefined when it passes.
 */
export function composeSchemaError(doc: unknown, version = VERSIONS[0]!): string | undefined {
  const schema = schemaOf(version);
  if (!schema) return `unsupported Compose file version: ${version}`;
  const failures: Failure[] = [];
  check(doc, schema.root, [], failures, schema.defs);
  let best: Failure | undefined;
  const depth = (f: Failure) => f.field.split('.').length;
  for (const f of failures) if (!best || depth(f) > depth(best) || (depth(f) === depth(best) && f.type && !best.type)) best = f;
  return best && `${best.field} ${best.text}`;
}
