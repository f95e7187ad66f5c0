// Authorization plugins (`--authorization-plugin`, reloadable): every API request goes to each
// plugin in order (AuthZPlugin.AuthZReq) and every response too (AuthZPlugin.AuthZRes); the first
// denial wins. A plugin that answers with an error, cannot be reached or does not implement authz
// denies as well: authorization fails closed.
import { basename, extname, isAbsolute } from 'node:path';
import { EngineError, forbidden } from '../errors.ts';
import type { AuthzRequest, AuthzResponse, AuthzVerdict } from '../types/plugins.ts';
import type { Logger } from '../util/log.ts';
import type { PluginRegistry } from './registry.ts';

/** A plugin configured by the path of its socket or spec file is called by the file's name. */
function pluginName(configured: string): string {
  return isAbsolute(configured) ? basename(configured, extname(configured)) : configured;
}

export class AuthzChain {
  constructor(
    private readonly registry: PluginRegistry,
    private readonly names: () => string[],
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  get enabled(): boolean {
    return this.names().length > 0;
  }

  /** Throws a 403 (denied) or a 500 (a plugin failed) for a request the chain does not allow. */
  async authorizeRequest(req: AuthzRequest): Promise<void> {
    await this.ask('AuthZPlugin.AuthZReq', req);
  }

  async authorizeResponse(res: AuthzResponse): Promise<void> {
    await this.ask('AuthZPlugin.AuthZRes', res);
  }

  private async ask(method: string, body: AuthzRequest): Promise<void> {
    for (const configured of this.names()) {
      // As dockerd: disabling a managed authorization plugin takes it out of the chain.
      if (this.registry.isDisabledManaged(configured)) continue;
      const name = pluginName(configured);
      let verdict: AuthzVerdict;
      try {
        const plugin = await this.registry.get(configured, 'authz');
        verdict = await plugin.call<AuthzVerdict>(method, body);
      } catch (err) {
        // Gone, not answering, or not an authz plugin: the request is not allowed (fail closed),
        // and the plugin is looked up afresh next time (it may have been restarted).
        this.registry.forget(configured);
        const reason = (err as Error).message.replace(/^plugin [^:]+: /, '');
        this.log.warn(`authorization plugin ${name} failed`, { method: body.RequestMethod, uri: body.RequestUri, error: reason });
        throw new EngineError('INTERNAL', `plugin ${name} failed with error: ${method}: ${reason}`);
      }
      if (verdict.Err) throw new EngineError('INTERNAL', `plugin ${name} failed with error: ${method}: ${verdict.Err}`);
      if (verdict.Allow !== true) throw forbidden(`authorization denied by plugin ${name}: ${verdict.Msg ?? ''}`);
    }
  }
}
