// The plugin wire protocol: JSON POSTs to /<Interface>.<Method> with dockerd's content type over a
// unix socket or HTTP(S), the activation handshake (/Plugin.Activate → Implements), retries with
// back-off while a plugin is still starting, and a timeout per call.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PluginAddress } from './discovery.ts';

export const PLUGIN_CONTENT_TYPE = 'application/vnd.docker.plugins.v1+json';

export interface PluginCallOptions {
  timeoutMs?: number;
}

/** A plugin that could not be reached at all (as opposed to one that answered an error). */
export class PluginUnavailableError extends Error {}

export class PluginClient {
  private readonly tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean };

  constructor(
    readonly address: PluginAddress,
    private readonly defaults: { timeoutMs: number } = { timeoutMs: 30_000 },
  ) {
    const t = address.tls;
    if (t) {
      this.tls = {
        ...(t.caFile ? { ca: readFileSync(t.caFile) } : {}),
        ...(t.certFile ? { cert: readFileSync(t.certFile) } : {}),
        ...(t.keyFile ? { key: readFileSync(t.keyFile) } : {}),
        rejectUnauthorized: !t.insecureSkipVerify,
      };
    }
  }

  get name(): string {
    return this.address.name;
  }

  /** One call; rejects with PluginUnavailableError when no answer came, Error on a non-2xx answer. */
  call<T>(method: string, body: unknown, opts: PluginCallOptions = {}): Promise<T> {
    const payload = Buffer.from(JSON.stringify(body ?? {}));
    const timeoutMs = opts.timeoutMs ?? this.defaults.timeoutMs;
    const headers = { Accept: PLUGIN_CONTENT_TYPE, 'Content-Type': PLUGIN_CONTENT_TYPE, 'Content-Length': String(payload.length) };
    return new Promise<T>((resolve, reject) => {
      const onResponse = (res: import('node:http').IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new PluginUnavailableError(`plugin ${this.name}: ${err.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            parsed = undefined; // not JSON: reported below with the raw text
          }
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            const msg = (parsed as { Err?: unknown } | undefined)?.Err;
            reject(
              new Error(
                `plugin ${this.name} answered ${status} to ${method}: ${typeof msg === 'string' && msg ? msg : text.trim().slice(0, 500)}`,
              ),
            );
          } else if (parsed === undefined) {
            reject(new Error(`plugin ${this.name} answered ${method} with something that is not JSON`));
          } else {
            resolve(parsed as T);
          }
        });
      };
      const path = `/${method}`;
      const req = this.address.socketPath
        ? httpRequest({ socketPath: this.address.socketPath, method: 'POST', path, headers }, onResponse)
        : (this.address.url!.startsWith('https:') ? httpsRequest : httpRequest)(
            `${this.address.url}${path}`,
            { method: 'POST', headers, ...(this.tls ?? {}) },
            onResponse,
          );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new PluginUnavailableError(`plugin ${this.name}: ${method} timed out after ${timeoutMs} ms`)),
      );
      req.on('error', (err) =>
        reject(err instanceof PluginUnavailableError ? err : new PluginUnavailableError(`plugin ${this.name}: ${err.message}`)),
      );
      req.end(payload);
    });
  }

  /**
   * A call whose answer is a byte stream (LogDriver.ReadLogs): resolves with the response once its
   * status is 2xx (no timeout on the body: a follower stays open); a non-2xx answer rejects with
   * its text. Aborting the signal ends the stream.
   */
  stream(method: string, body: unknown, signal?: AbortSignal): Promise<import('node:http').IncomingMessage> {
    const payload = Buffer.from(JSON.stringify(body ?? {}));
    const headers = { Accept: PLUGIN_CONTENT_TYPE, 'Content-Type': PLUGIN_CONTENT_TYPE, 'Content-Length': String(payload.length) };
    const timeoutMs = this.defaults.timeoutMs;
    return new Promise((resolve, reject) => {
      const onResponse = (res: import('node:http').IncomingMessage) => {
        req.setTimeout(0);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve(res);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new PluginUnavailableError(`plugin ${this.name}: ${err.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8').trim();
          let msg = text;
          try {
            const err = (JSON.parse(text) as { Err?: unknown }).Err;
            if (typeof err === 'string' && err) msg = err;
          } catch {
            // not JSON: the raw text is the message
          }
          reject(new Error(`plugin ${this.name} answered ${status} to ${method}: ${msg.slice(0, 500)}`));
        });
      };
      const path = `/${method}`;
      const opts = { method: 'POST', headers, ...(signal ? { signal } : {}) };
      const req = this.address.socketPath
        ? httpRequest({ socketPath: this.address.socketPath, path, ...opts }, onResponse)
        : (this.address.url!.startsWith('https:') ? httpsRequest : httpRequest)(
            `${this.address.url}${path}`,
            { ...opts, ...(this.tls ?? {}) },
            onResponse,
          );
      // Only the wait for the answer's head is timed.
      req.setTimeout(timeoutMs, () =>
        req.destroy(new PluginUnavailableError(`plugin ${this.name}: ${method} timed out after ${timeoutMs} ms`)),
      );
      req.on('error', (err) =>
        reject(err instanceof PluginUnavailableError ? err : new PluginUnavailableError(`plugin ${this.name}: ${err.message}`)),
      );
      req.end(payload);
    });
  }

  /**
   * The handshake: which interfaces the plugin implements. A plugin that is still starting is
   * retried with back-off (dockerd waits up to about 30 s as well) before giving up.
   */
  async activate(opts: { budgetMs?: number } = {}): Promise<string[]> {
    const deadline = Date.now() + (opts.budgetMs ?? 30_000);
    let delay = 100;
    for (;;) {
      try {
        const r = await this.call<{ Implements?: unknown }>(
          'Plugin.Activate',
          {},
          { timeoutMs: Math.max(1000, Math.min(this.defaults.timeoutMs, deadline - Date.now())) },
        );
        return Array.isArray(r.Implements) ? r.Implements.filter((x): x is string => typeof x === 'string') : [];
      } catch (err) {
        if (!(err instanceof PluginUnavailableError) || Date.now() + delay > deadline) throw err;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }
}
