/**
 * Renders everything deploy/ derives from the service declarations: the NATS authorization
 * (deploy/nats/auth.conf and the users of deploy/nats/values.yaml), the workloads of
 * deploy/base/services.yaml, the services of docker-compose.yml, and a project reference per
 * service folder in the root tsconfig.json (so `tsc -b` checks a new service too).
 *
 *   npm run deploy:render
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { loadSystem } from '@askbus/service';
import { renderNatsFiles } from './nats/render';
import { renderCompose, renderServiceManifests, withServiceReferences } from './services';

const here = dirname(fileURLToPath(import.meta.url));
const system = await loadSystem();
const nats = renderNatsFiles(system, readFileSync(join(here, 'nats/values.yaml'), 'utf8'));
const compose = join(here, '../docker-compose.yml');
const rootTsconfig = join(here, '../tsconfig.json');
const outputs: [string, string][] = [
  [join(here, 'nats/auth.conf'), nats.authConf],
  [join(here, 'nats/values.yaml'), nats.values],
  [join(here, 'base/services.yaml'), renderServiceManifests(system)],
  [compose, renderCompose(readFileSync(compose, 'utf8'), system)],
  [rootTsconfig, withServiceReferences(readFileSync(rootTsconfig, 'utf8'), system)],
];
// Written as the repository's formatter writes YAML, so `prettier --check` and the render agree.
for (const [file, text] of outputs) {
  const options = await resolveConfig(file);
  writeFileSync(file, file.endsWith('.conf') ? text : await format(text, { ...options, filepath: file }));
}
console.log(`wrote ${outputs.map(([f]) => f).join(', ')}`);
