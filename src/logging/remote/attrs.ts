// The container facts the remote drivers attach to each entry, as dockerd's logger.Info gives them:
// the tag (a Go template over the container, {{.ID}} by default) and the extra attributes chosen by
// the labels and env options. labels-regex and env-regex are refused at validation (no user text
// becomes a regular expression here), so only the listed names are matched.

import { hostname } from 'node:os';
import { renderTag } from '../options.ts';

/** dockerd's loggerutils.DefaultTemplate. */
export const DEFAULT_TAG = '{{.ID}}';

/** The tag option rendered, {{.ID}} when it is unset or empty. */
export function logTag(containerId: string, options: Record<string, string>, attrs: Record<string, string>): string {
  return renderTag(options['tag'] || DEFAULT_TAG, containerId, { hostname: hostname(), ...attrs });
}

/**
 * dockerd's Info.ExtraAttributes: the labels named by `labels`, then the env vars named by `env`
 * (an env var wins over a label of the same key), keys passed through keyMod.
 */
export function extraAttrs(
  options: Record<string, string>,
  attrs: Record<string, string>,
  keyMod: (k: string) => string = (k) => k,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of (options['labels'] ?? '').split(',')) {
    const v = attrs[`label:${key}`];
    if (key && v !== undefined) out[keyMod(key)] = v;
  }
  for (const key of (options['env'] ?? '').split(',')) {
    const v = attrs[`env:${key}`];
    if (key && v !== undefined) out[keyMod(key)] = v;
  }
  return out;
}
