/**
 * The Grafana dashboard of deploy/monitoring queries only metrics askbus serves: each name in its
 * expressions is registered by the telemetry library or the router (a histogram's _bucket
 * series by its histogram), so a renamed metric fails here rather than as an empty panel.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

const registered = new Set(
  [
    'libs/telemetry/src/metrics.ts',
    'services/router/src/routing-telemetry.ts',
    'services/router/src/service.ts',
  ].flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/name: '(askbus_\w+)'/g)].map((m) => m[1]!),
  ),
);

it('queries only metrics that askbus registers, in panels of its routing and services', () => {
  const dashboard = JSON.parse(readFileSync(join(here, 'monitoring/grafana-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  expect(dashboard.panels.length).toBeGreaterThanOrEqual(8);
  const used = new Set<string>();
  for (const panel of dashboard.panels) {
    expect(panel.targets.length, panel.title).toBeGreaterThan(0);
    for (const { expr } of panel.targets)
      for (const [name] of expr.matchAll(/askbus_\w+/g)) used.add(name.replace(/_bucket$/, ''));
  }
  for (const name of used) expect(registered, name).toContain(name);
  for (const routing of [
    'askbus_router_tool_chosen_total',
    'askbus_router_tool_scoring_calls_total',
    'askbus_router_fast_track_total',
    'askbus_llm_fallbacks_total',
  ])
    expect(used).toContain(routing);
});
