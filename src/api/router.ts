// Route table with path parameters. Each resource module registers its routes here; the server
// mounts every route with and without the /v<version> prefix.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { invalidParameter } from '../errors.ts';
import { Query } from './http.ts';

/** The names of a path's `{name}` / `{name*}` parameters, as a union of string literals. */
type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? (N extends `${infer M}*` ? M : N) | ParamNames<Rest>
  : never;

/**
 * A route's parameters, typed from its path: `/containers/{id}/json` gives `{ id: string }`, so a
 * handler reads `ctx.params.id` without an assertion. A path built at run time gets a plain record.
 */
export type PathParams<P extends string> = string extends P ? Record<string, string | undefined> : { [K in ParamNames<P>]: string };

export interface RequestContext<Params = Record<string, string | undefined>> {
  req: IncomingMessage;
  res: ServerResponse;
  params: Params;
  query: Query;
  /** The API version the client asked for (path prefix), or the newest one when unversioned. */
  version: string;
  /** For hijacking endpoints (attach, exec start): the raw socket, once upgraded. */
  socket?: Socket;
}

export type Handler<Params = Record<string, string | undefined>> = (ctx: RequestContext<Params>) => Promise<void> | void;

interface Route {
  /** Registration order: the first registered route that matches wins. */
  order: number;
  method: string;
  pattern: RegExp;
  names: string[];
  // Stored untyped: the router fills exactly the names the path declares.
  handler: Handler<any>;
}

/** `{name}` matches one path segment; `{name*}` matches the rest, slashes included (image names). */
function compile(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const src = path.replace(/[.+?^$()[\]\\|]/g, '\\$&').replace(/\{(\w+)(\*?)\}/g, (_m, name: string, greedy: string) => {
    names.push(name);
    return greedy ? '(.+)' : '([^/]+)';
  });
  return { pattern: new RegExp(`^${src}$`), names };
}

/** A path's first segment (`containers` of `/containers/json`), the key of the route index. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

export class Router {
  // Routes indexed by their static first segment, so a request tries only its family's patterns
  // (a few) instead of every route's; routes whose first segment is a parameter are tried too.
  private readonly byFirst = new Map<string, Route[]>();
  private readonly anyFirst: Route[] = [];
  private count = 0;

  add<P extends string>(method: string, path: P, handler: Handler<PathParams<P>>): this {
    const { pattern, names } = compile(path);
    const route = { order: this.count++, method, pattern, names, handler };
    const first = firstSegment(path);
    if (first.includes('{')) this.anyFirst.push(route);
    else {
      const list = this.byFirst.get(first);
      if (list) list.push(route);
      else this.byFirst.set(first, [route]);
    }
    return this;
  }
  get<P extends string>(path: P, handler: Handler<PathParams<P>>): this {
    return this.add('GET', path, handler);
  }
  post<P extends string>(path: P, handler: Handler<PathParams<P>>): this {
    return this.add('POST', path, handler);
  }
  put<P extends string>(path: P, handler: Handler<PathParams<P>>): this {
    return this.add('PUT', path, handler);
  }
  delete<P extends string>(path: P, handler: Handler<PathParams<P>>): this {
    return this.add('DELETE', path, handler);
  }
  head<P extends string>(path: P, handler: Handler<PathParams<P>>): this {
    return this.add('HEAD', path, handler);
  }

  /** Finds the handler; `pathExists` tells a 404 (no such path) from a 405 (wrong method). */
  match(method: string, path: string): { handler: Handler<any>; params: Record<string, string> } | { handler: null; pathExists: boolean } {
    let pathExists = false;
    const family = this.byFirst.get(firstSegment(path)) ?? [];
    const candidates = this.anyFirst.length ? [...family, ...this.anyFirst].sort((a, b) => a.order - b.order) : family;
    for (const r of candidates) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      pathExists = true;
      if (r.method !== method) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => {
        params[n] = decodePathSegment(m[i + 1]!);
      });
      return { handler: r.handler, params };
    }
    return { handler: null, pathExists };
  }
}

/** A path parameter with its %-escapes decoded; a broken escape is the client's error (400). */
function decodePathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidParameter(`invalid URL escape in path: ${JSON.stringify(raw.slice(0, 100))}`);
  }
}
