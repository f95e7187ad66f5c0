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

export class Router {
  private readonly routes: Route[] = [];

  add<P extends string>(method: string, path: P, handler: Handler<PathParams<P>>): this {
    const { pattern, names } = compile(path);
    this.routes.push({ method, pattern, names, handler });
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
    for (const r of this.routes) {
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
