// Docker Engine API wire types for the registry-facing endpoints: registry credentials (the
// X-Registry-Auth header and the POST /auth body), the JSON progress messages of pull, push and
// import, the import request, and a search result.

/** Registry credentials, field names as the docker CLI sends them (see images/distribution/auth-config.ts). */
export interface AuthConfig {
  username?: string;
  password?: string;
  /** Legacy: base64("user:password"). */
  auth?: string;
  serveraddress?: string;
  /** A refresh token from an earlier login (used instead of the password at the token endpoint). */
  identitytoken?: string;
  /** A bearer token to send as is. */
  registrytoken?: string;
}

export interface ProgressDetail {
  current?: number;
  total?: number;
}

/** One line of the progress stream, in the key order the docker CLI renders. */
export interface JsonMessage {
  status?: string;
  progressDetail?: ProgressDetail;
  progress?: string;
  id?: string;
  errorDetail?: { message: string };
  error?: string;
  aux?: unknown;
}

/** Where a pull or push reports progress. */
export type ProgressSink = (m: JsonMessage) => void;

/** POST /images/create?fromSrc=… */
export interface ImportRequest {
  /** "-" (the request body) or an http(s) URL. */
  fromSrc: string;
  repo?: string;
  tag?: string;
  message?: string;
  changes: string[];
  platform?: string;
}

/** One entry of GET /images/search. */
export interface SearchResult {
  name: string;
  description: string;
  star_count: number;
  is_official: boolean;
  is_automated: boolean;
}
