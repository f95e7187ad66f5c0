// The schema of engine.db as numbered steps. Append new steps; never edit a released one (databases
// in the field have already run it). PRAGMA user_version records the last step applied.
//
// Keyed JSON tables (kv_<name>, see kv.ts) are created on first use instead: their shape is fixed
// (key, JSON value), so they never need migrating.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'containers and events',
    sql: `
      -- One row per container; data is the daemon's JSON record. name is stored without the
      -- leading '/' that the API shows.
      CREATE TABLE containers (
        id      TEXT PRIMARY KEY NOT NULL,
        name    TEXT NOT NULL UNIQUE,
        created INTEGER NOT NULL,
        data    TEXT NOT NULL
      ) STRICT;
      CREATE INDEX containers_created ON containers (created);

      -- AUTOINCREMENT: a sequence number is never reused after trimming, so a reader can resume
      -- from the last one it saw.
      CREATE TABLE events (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        time_nano  INTEGER NOT NULL,
        type       TEXT NOT NULL,
        action     TEXT NOT NULL,
        actor_id   TEXT NOT NULL,
        attributes TEXT NOT NULL,
        scope      TEXT NOT NULL
      ) STRICT;
      CREATE INDEX events_time ON events (time_nano);
    `,
  },
  {
    version: 2,
    name: 'build cache',
    sql: `
      -- The classic builder's layer cache: a step's key (parent image + instruction with resolved
      -- arguments + content checksum) → the image the step produced. size is the bytes of the step's
      -- own layer (0 for config-only steps); last_used drives builder.gc and prune's until filter.
      CREATE TABLE build_cache (
        key        TEXT PRIMARY KEY NOT NULL,
        image_id   TEXT NOT NULL,
        parent_id  TEXT NOT NULL,
        created_by TEXT NOT NULL,
        kind       TEXT NOT NULL,
        size       INTEGER NOT NULL,
        created    INTEGER NOT NULL,
        last_used  INTEGER NOT NULL,
        usage      INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX build_cache_image ON build_cache (image_id);
      CREATE INDEX build_cache_last_used ON build_cache (last_used);
    `,
  },
];
