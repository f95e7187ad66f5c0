// The container facts the remote drivers attach to each entry, as dockerd's logger.Info gives them:
// the tag (a Go template over the container, {{.ID}} by default) and the extra attributes chosen by
// the labels and env options and by labels-regex and env-regex (Go's RE2 syntax, matched in linear
// time by util/re2.ts: no user text becomes a JavaScript RegExp).

import { hostname } from 'node:os';
import { compileRegex, renderTag } from '../options.ts';

/** dockerd's loggerutils.DefaultTemplate. */
export const DEFAULT_TAG = '{{.ID}}';

/** The tag option rendered, {{.ID}} when it is unset or empty. */
export function logTag(containerId: string, options: Record<string, string>, attrs: Record<string, string>): string {
  return renderTag(options['tag'] || DEFAULT_TAG, containerId, { hostname: hostname(), ...attrs });
}

/**
 * dockerd's Info.ExtraAttributes: the labels named by `labels` or matching `labels-regex`, then the
 * env vars named by `env` or matching `env-regex` (an env var wins over a label of the same key),
 * keys passed through keyMod.
 */
export function extraAttrs(
  options: Record<string, string>,
  attrs: Record<string, string>,
  keyMod: (k: string) => string = (k) => k,
): Record<string, string> {
  const out: Record<string, string> = {};
  const named = (prefix: string, list: string | undefined, regex: string | undefined, regexKey: string): void => {
    for (const key of (list ?? '').split(',')) {
      const v = attrs[`${prefix}${key}`];
      if (key && v !== undefined) out[keyMod(key)] = v;
    }
    if (!regex) return;
    const re = compileRegex(regexKey, regex);
    for (const [k, v] of Object.entries(attrs))
      if (k.startsWith(prefix) && re.test(k.slice(prefix.length))) out[keyMod(k.slice(prefix.length))] = v;
  };
  named('label:', options['labels'], options['labels-regex'], 'labels-regex');
  named('env:', options['env'], options['env-regex'], 'env-regex');
  return out;
}
