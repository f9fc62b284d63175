// Bundles the client commands (ask, sites, load) into cli/build/askbus-client.mjs, with a list
// of the sources it was built from, so cli/bin/askbus.mjs runs them as plain JavaScript and
// falls back to tsx when a source changed since. `--if-available` (npm's prepare) skips quietly
// where esbuild is not installed (an image installed with --omit=dev).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
let esbuild;
try {
  esbuild = await import('esbuild');
} catch (err) {
  if (process.argv.includes('--if-available')) process.exit(0);
  throw err;
}
// Third-party packages stay imports from node_modules; the workspace's TypeScript is bundled.
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const thirdParty = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).flatMap((name) => [
  name,
  `${name}/*`,
]);
const outdir = join(here, 'build');
mkdirSync(outdir, { recursive: true });
const result = await esbuild.build({
  entryPoints: [join(here, 'src/client-main.ts')],
  outfile: join(outdir, 'askbus-client.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: thirdParty,
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.keys(result.metafile.inputs).map((f) => relative(root, resolve(root, f)));
writeFileSync(join(outdir, 'inputs.json'), JSON.stringify({ builtAt: Date.now(), inputs }));
