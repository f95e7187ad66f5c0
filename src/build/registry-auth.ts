// X-Registry-Config: the credentials of every registry the client knows, by server address; a base
// image pull uses the entry of the image's registry (Docker Hub's under its historical keys).
import type { AuthConfig } from '../types/distribution.ts';
import type { BuildOptions } from '../types/build.ts';
import { parseReference } from '../util/image-reference.ts';

const HUB_KEYS = ['https://index.docker.io/v1/', 'index.docker.io', 'docker.io', 'registry-1.docker.io'];

export function authForImage(all: BuildOptions['registryAuth'], image: string): AuthConfig {
  let domain: string;
  try {
    domain = parseReference(image).domain;
  } catch {
    return {};
  }
  const keys = domain === 'docker.io' ? HUB_KEYS : [domain, `https://${domain}`, `http://${domain}`];
  for (const [k, v] of Object.entries(all)) {
    const host = k.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
    if (keys.includes(k) || keys.includes(host)) return { ...v, serveraddress: v.serveraddress ?? k } as AuthConfig;
  }
  return {};
}
