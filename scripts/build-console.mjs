// Builds the web console (src/console/, preact + xterm.js + uPlot) into dist/console/: index.html,
// app.js and app.css, each with a .gz beside it that the console listener serves to browsers that
// accept gzip. Everything the page loads comes from the daemon: no CDN. Prints the sizes (the
// budget is 300 KiB gzipped for all of it).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/console');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: { app: join(root, 'src/console/main.tsx') },
  outdir: out,
  bundle: true,
  format: 'esm',
  // xterm.js and uPlot sit behind import() (views/lazy.tsx): chunks loaded when first needed.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  target: ['chrome100', 'firefox100', 'safari15'],
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  loader: { '.css': 'css' },
  legalComments: 'none',
  logLevel: 'warning',
});

// The containers list (most views use it) is asked for while the script loads; the page's own
// fetch of the same URL takes the preloaded answer (same mode and credentials: crossorigin).
writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Engine console</title>
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
<link rel="preload" href="/api/v1.51/containers/json?all=1" as="fetch" crossorigin>
</head>
<body><div id="app"></div></body>
</html>
`,
);

let total = 0;
for (const name of readdirSync(out)) {
  const data = readFileSync(join(out, name));
  const gz = gzipSync(data, { level: 9 });
  writeFileSync(join(out, `${name}.gz`), gz);
  total += gz.length;
  if (process.argv.includes('--sizes')) console.log(`${name}: ${data.length} bytes, ${gz.length} gzipped`);
}
if (process.argv.includes('--sizes')) console.log(`total gzipped: ${(total / 1024).toFixed(1)} KiB`);
