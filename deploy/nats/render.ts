/**
 * Writes the NATS authorization of deploy/nats from libs/bus/src/permissions.ts: auth.conf (what
 * docker-compose mounts) and the users' permissions in values.yaml (the Helm chart's), keeping
 * the rest of values.yaml and its comments. Run it after changing the permission table:
 *
 *   npx tsx deploy/nats/render.ts
 *
 * deploy/deploy.test.ts fails while either file differs from the table.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { NATS_USERS, natsPermissions, passwordEnvVar, renderNatsAuthConfig } from '@askbus/bus';

const here = dirname(fileURLToPath(import.meta.url));

writeFileSync(join(here, 'auth.conf'), renderNatsAuthConfig());

const valuesFile = join(here, 'values.yaml');
const values = parseDocument(readFileSync(valuesFile, 'utf8'));
values.setIn(
  ['config', 'merge', 'authorization', 'users'],
  NATS_USERS.map((user) => ({
    user,
    // The chart writes << … >> unquoted, so nats-server reads the variable from its environment.
    password: `<< $${passwordEnvVar(user)} >>`,
    permissions: natsPermissions(user),
  })),
);
writeFileSync(valuesFile, values.toString({ lineWidth: 0 }));
console.log(`wrote ${join(here, 'auth.conf')} and the users of ${valuesFile}`);
