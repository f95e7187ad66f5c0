// --node-generic-resource (daemon.json node-generic-resources): the user-defined resources a node
// advertises, parsed as swarmkit's genericresource.Parse does — "name=<integer>" once is a discrete
// resource (SSD=3), "name=<string>" one or more times is a set of named ones (GPU=UUID1, GPU=UUID2).
// They show in /info GenericResources and, in cluster mode, in the node's Description.Resources.

import { ConfigError } from './config-error.ts';

export interface GenericResource {
  NamedResourceSpec?: { Kind: string; Value: string };
  DiscreteResourceSpec?: { Kind: string; Value: number };
}

const isInt = (v: string) => /^[+-]?\d+$/.test(v) && Number.isSafeInteger(Number(v));

/** Throws dockerd's "could not parse GenericResource: …" for a malformed list. */
export function parseGenericResources(terms: readonly string[]): GenericResource[] {
  const byKind = new Map<string, string[]>();
  for (const term of terms) {
    const kv = term.split('=');
    if (kv.length !== 2)
      throw new ConfigError(`could not parse GenericResource: incorrect term ${term}, missing '=' or malformed expression`);
    const kind = kv[0]!.trim();
    const values = byKind.get(kind) ?? [];
    values.push(kv[1]!.trim());
    byKind.set(kind, values);
  }
  const out: GenericResource[] = [];
  for (const [kind, values] of byKind) {
    if (values.length === 1 && isInt(values[0]!)) out.push({ DiscreteResourceSpec: { Kind: kind, Value: Number(values[0]) } });
    else if (values.every((v) => !isInt(v))) for (const v of values) out.push({ NamedResourceSpec: { Kind: kind, Value: v } });
    else
      throw new ConfigError(
        `could not parse GenericResource: mixed discrete and named resources in expression '${kind}=[${values.join(' ')}]'`,
      );
  }
  return out;
}
