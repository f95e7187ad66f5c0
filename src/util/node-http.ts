// node:http, loaded with require. An ESM import of node:http reads every export, and the lazy
// WebSocket/MessageEvent/CloseEvent getters among them load Node's bundled undici: ~25 ms of
// start-up for nothing we use. Types still come from `import type … from 'node:http'`.
import { createRequire } from 'node:module';
import type * as Http from 'node:http';

export const http = createRequire(import.meta.url)('node:http') as typeof Http;
