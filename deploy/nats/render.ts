/**
 * The NATS authorization of deploy/nats, from the service declarations: auth.conf (what
 * docker-compose mounts) and the users' permissions in values.yaml (the Helm chart's), keeping
 * the rest of values.yaml and its comments. `npm run deploy:render` writes them.
 */
import { parseDocument } from 'yaml';
import { passwordEnvVar, renderNatsAuthConfig } from '@askbus/bus';
import type { System } from '@askbus/service';

export function renderNatsFiles(system: System, valuesText: string): { authConf: string; values: string } {
  const auth = system.authorization;
  const values = parseDocument(valuesText);
  values.setIn(
    ['config', 'merge', 'authorization', 'users'],
    auth.users.map((user) => ({
      user,
      // The chart writes << … >> unquoted, so nats-server reads the variable from its environment.
      password: `<< $${passwordEnvVar(user)} >>`,
      permissions: auth.permissions(user),
    })),
  );
  return { authConf: renderNatsAuthConfig(auth), values: values.toString({ lineWidth: 0 }) };
}
