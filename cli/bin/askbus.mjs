#!/usr/bin/env node
// The askbus command. The client commands (ask, sites, load) run from the bundle `npm run build`
// makes (npm ci makes it too), so they start at once; `up`, and any command when the bundle is
// missing or older than a source it was built from, run the TypeScript through tsx.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const args = process.argv.slice(2);

/** The bundle, when it is there and no source it was built from changed since. */
function freshBundle() {
  try {
    const built = JSON.parse(readFileSync(join(here, '../build/inputs.json'), 'utf8'));
    for (const input of built.inputs)
      if (statSync(join(root, input)).mtimeMs > built.builtAt) return undefined;
    return join(here, '../build/askbus-client.mjs');
  } catch {
    return undefined;
  }
}

const bundle = ['ask', 'sites', 'load'].includes(args[0] ?? '') ? freshBundle() : undefined;
// ASKBUS_BIN_TRACE=1 says on stderr which way it ran (for tests and puzzled developers).
const trace = (how) => process.env.ASKBUS_BIN_TRACE === '1' && console.error(`askbus: ${how}`);
if (bundle) {
  trace('bundle');
  const { runClient } = await import(bundle);
  const code = await runClient(args);
  process.exit(code ?? 1);
}
trace('tsx');
const require = createRequire(import.meta.url);
const tsx = join(dirname(require.resolve('tsx/package.json')), 'dist/cli.mjs');
const result = spawnSync(process.execPath, [tsx, join(here, '../src/askbus.ts'), ...args], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
