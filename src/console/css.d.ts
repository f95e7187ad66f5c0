// The console's stylesheets are bundled by esbuild (scripts/build-console.mjs); for the type checker they are opaque.
declare module '*.css';
