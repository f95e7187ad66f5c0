// Route table with path parameters. Each resource module registers its routes here; the server
// mounts every route with and without the /v<version> prefix.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Query } from './http.ts';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: Query;
  /** The API version the client asked for (path prefix), or the newest one when unversioned. */
  version: string;
  /** For hijacking endpoints (attach, exec start): the raw socket, once upgraded. */
  socket?: Socket;
}

export type Handler = (ctx: RequestContext) => Promise<void> | void;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: Handler;
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

  add(method: string, path: string, handler: Handler): this {
    const { pattern, names } = compile(path);
    this.routes.push({ method, pattern, names, handler });
    return this;
  }
  get(path: string, handler: Handler): this { return this.add('GET', path, handler); }
  post(path: string, handler: Handler): this { return this.add('POST', path, handler); }
  put(path: string, handler: Handler): this { return this.add('PUT', path, handler); }
  delete(path: string, handler: Handler): this { return this.add('DELETE', path, handler); }
  head(path: string, handler: Handler): this { return this.add('HEAD', path, handler); }

  /** Finds the handler; `pathExists` tells a 404 (no such path) from a 405 (wrong method). */
  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | { handler: null; pathExists: boolean } {
    let pathExists = false;
    for (const r of this.routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      pathExists = true;
      if (r.method !== method) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => {
        params[n] = decodeURIComponent(m[i + 1]!);
      });
      return { handler: r.handler, params };
    }
    return { handler: null, pathExists };
  }
}

/** A resource family's routes: one module per family registers into the shared router. */
export interface RouteModule {
  register(router: Router): void;
}
