import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { passwordEnvVar, renderNatsAuthConfig, type NatsUser } from '@askbus/bus';
import { loadSystem } from '@askbus/service';
import { renderNatsFiles } from './nats/render';
import { renderKustomization, type K8sObject } from './render';
import { renderCompose, renderServiceManifests, withServiceReferences } from './services';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
// Every service as it declares itself, and the NATS users that follow.
const system = await loadSystem();
const NATS_USERS = system.authorization.users;
const natsPermissions = (user: string) => system.authorization.permissions(user);

// The Kubernetes OpenAPI schemas, as generated into kubernetes-models: validation is offline.
const models: Record<string, new (o: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** The Secret with one password per NATS user, read by the NATS chart and by the workloads. */
const NATS_SECRET = 'askbus-nats-users';

type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
};
type Container = {
  name: string;
  image: string;
  args?: string[];
  env?: EnvVar[];
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  resources?: { requests?: Record<string, string> };
};
type Workload = K8sObject & {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } };
  };
};

for (const overlay of ['dev', 'production']) {
  describe(`deploy/overlays/${overlay}`, () => {
    const objects = renderKustomization(join(here, 'overlays', overlay));
    const of = (kind: string) => objects.filter((o) => o.kind === kind);
    const workloads = objects.filter((o) => ['Deployment', 'StatefulSet'].includes(o.kind)) as Workload[];

    it('renders objects that are valid against the Kubernetes schemas', () => {
      expect(objects.length).toBeGreaterThan(10);
      for (const o of objects) {
        const Model = models[`${o.apiVersion}/${o.kind}`];
        expect(Model, `no schema for ${o.apiVersion} ${o.kind}`).toBeDefined();
        expect(() => new Model!(o as never).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
        expect(o.metadata.namespace).toBe(overlay === 'dev' ? 'askbus-dev' : 'askbus');
      }
    });

    it('runs every service, each with probes, resources, a tagged image and a disruption budget', () => {
      const services = readdirServices();
      expect(workloads.map((w) => w.spec.template.spec.containers[0]!.args?.[0]).sort()).toEqual(services);
      const pdbs = of('PodDisruptionBudget') as (K8sObject & {
        spec: { selector: { matchLabels: Record<string, string> } };
      })[];
      for (const w of workloads) {
        const [c] = w.spec.template.spec.containers;
        expect(c!.readinessProbe, w.metadata.name).toBeDefined();
        expect(c!.livenessProbe, w.metadata.name).toBeDefined();
        expect(c!.resources?.requests?.cpu, w.metadata.name).toBeDefined();
        expect(c!.image).toMatch(overlay === 'dev' ? /:dev$/ : /:0\.1\.0$/);
        const labels = w.spec.template.metadata.labels;
        for (const [k, v] of Object.entries(w.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
        const pdb = pdbs.find((p) =>
          Object.entries(p.spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
        );
        expect(pdb, `PodDisruptionBudget for ${w.metadata.name}`).toBeDefined();
      }
    });

    it('connects every service to NATS as its own user, the password from a Secret', () => {
      for (const w of workloads) {
        const [c] = w.spec.template.spec.containers;
        const service = c!.args![0]!;
        const env = new Map(c!.env?.map((e) => [e.name, e]));
        expect(NATS_USERS, w.metadata.name).toContain(service);
        expect(env.get('NATS_USER')?.value, w.metadata.name).toBe(service);
        expect(env.get('NATS_PASSWORD')?.valueFrom?.secretKeyRef, w.metadata.name).toEqual({
          name: NATS_SECRET,
          key: service,
        });
      }
    });

    it('gives the gateway its API keys from an optional Secret, and production a rate limit', () => {
      const gateway = workloads.find((w) => w.metadata.name === 'askbus-gateway');
      const env = new Map(gateway!.spec.template.spec.containers[0]!.env?.map((e) => [e.name, e]));
      expect(env.get('ASKBUS_API_KEYS')?.valueFrom?.secretKeyRef).toEqual({
        name: 'askbus-api-keys',
        key: 'keys',
        optional: true,
      });
      const limit = env.get('ASKBUS_RATE_LIMIT_PER_MINUTE')?.value;
      if (overlay === 'production') expect(limit).toBe('600');
      else expect(limit).toBeUndefined();
    });

    it('scales rankers and routers on the requests in flight, with no count pinned beside the autoscaler', () => {
      const hpas = of('HorizontalPodAutoscaler') as (K8sObject & {
        spec: {
          scaleTargetRef: { name: string };
          minReplicas: number;
          maxReplicas: number;
          metrics: { type: string; pods?: { metric: { name: string } } }[];
        };
      })[];
      expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['askbus-ranker', 'askbus-router']);
      for (const hpa of hpas) {
        const target = workloads.find((w) => w.metadata.name === hpa.spec.scaleTargetRef.name);
        expect(target, hpa.metadata.name).toBeDefined();
        expect(target!.spec.replicas, `${hpa.metadata.name} pins replicas`).toBeUndefined();
        expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
        expect(hpa.spec.metrics.find((m) => m.type === 'Pods')?.pods?.metric.name).toBe(
          'askbus_requests_in_flight',
        );
      }
      // The metric the autoscalers read is served by the Prometheus adapter from every pod's /metrics.
      const adapter = readFileSync(join(here, 'monitoring/prometheus-adapter-values.yaml'), 'utf8');
      expect(adapter).toMatch(/as: askbus_requests_in_flight/);
    });

    it('puts the gateway behind an ingress that neither buffers SSE nor cuts long streams', () => {
      const [ingress] = of('Ingress') as (K8sObject & {
        metadata: { annotations: Record<string, string> };
        spec: {
          rules: { http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[];
        };
      })[];
      const a = ingress!.metadata.annotations;
      expect(a['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
      expect(Number(a['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
      // Stock ingress-nginx (≥ 1.9) refuses snippet annotations; WebSocket upgrades need none.
      expect(Object.keys(a).filter((k) => k.endsWith('-snippet'))).toEqual([]);
      const tls = (ingress as unknown as { spec: { tls?: { hosts: string[]; secretName: string }[] } }).spec
        .tls;
      expect(tls?.[0]?.secretName).toBe('askbus-tls');
      expect(tls?.[0]?.hosts).toContain(
        ingress!.spec.rules[0] && (ingress!.spec as { rules: { host?: string }[] }).rules[0]!.host,
      );
      const backend = ingress!.spec.rules[0]!.http.paths[0]!.backend.service;
      const svc = of('Service').find((s) => s.metadata.name === backend.name) as
        (K8sObject & { spec: { ports: { name: string }[] } }) | undefined;
      expect(svc?.spec.ports.map((p) => p.name)).toContain(backend.port.name);
    });

    it('denies traffic by default and lets only askbus services reach NATS', () => {
      const policies = of('NetworkPolicy') as (K8sObject & {
        spec: { podSelector: Record<string, unknown> };
      })[];
      expect(policies.some((p) => Object.keys(p.spec.podSelector).length === 0)).toBe(true);
      expect(policies.map((p) => p.metadata.name)).toContain('nats-from-askbus');
    });
  });
}

describe('deploy/nats/values.yaml', () => {
  const values = parse(readFileSync(join(here, 'nats/values.yaml'), 'utf8')) as {
    config: {
      jetstream: { enabled: boolean };
      merge: { authorization: { users: { user: NatsUser; password: string; permissions: unknown }[] } };
    };
    container: { env: Record<string, EnvVar> };
  };

  it('turns JetStream on for the official chart', () => {
    expect(values.config.jetstream.enabled).toBe(true);
  });

  it('has a NATS user per service with exactly the permissions generated from the contracts', () => {
    const users = values.config.merge.authorization.users;
    expect(users.map((u) => u.user)).toEqual(NATS_USERS);
    for (const u of users) {
      expect(u.permissions, `permissions of ${u.user}`).toEqual(natsPermissions(u.user));
      // The chart writes << … >> unquoted: nats-server reads $NATS_PASSWORD_<USER> from its environment.
      expect(u.password).toBe(`<< $${passwordEnvVar(u.user)} >>`);
      expect(values.container.env[passwordEnvVar(u.user)]?.valueFrom?.secretKeyRef).toEqual({
        name: NATS_SECRET,
        key: u.user,
      });
    }
  });

  it('ships deploy/nats/auth.conf as renderNatsAuthConfig renders it', () => {
    expect(readFileSync(join(here, 'nats/auth.conf'), 'utf8')).toBe(
      renderNatsAuthConfig(system.authorization),
    );
  });
});

describe('docker-compose.yml', () => {
  it('runs the same services as the manifests, and NATS with JetStream', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
    };
    const commands = Object.entries(compose.services)
      .filter(([name]) => name !== 'nats')
      .map(([, s]) => s.command?.[0])
      .sort();
    expect(commands).toEqual(readdirServices());
    expect(compose.services.nats!.command).toContain('-js');
  });

  it('runs NATS with the generated users, and every service as its own user', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<
        string,
        { command: string[]; environment: Record<string, string>; volumes?: string[] }
      >;
    };
    const { nats, ...services } = compose.services;
    expect(nats!.command.join(' ')).toContain('-c /etc/nats/auth.conf');
    expect(nats!.volumes).toContain('./deploy/nats/auth.conf:/etc/nats/auth.conf:ro');
    for (const user of NATS_USERS) expect(nats!.environment[passwordEnvVar(user)]).toBeDefined();
    for (const [name, s] of Object.entries(services)) {
      const user = s.command[0] as NatsUser;
      expect(s.environment.NATS_USER, name).toBe(user);
      expect(s.environment.NATS_PASSWORD, name).toBe(nats!.environment[passwordEnvVar(user)]);
      expect(s.environment.NATS_URL, name).toBe('nats://nats:4222');
    }
  });
});

describe('rendered from the service declarations (npm run deploy:render)', () => {
  const read = (file: string) => readFileSync(join(root, file), 'utf8');

  it('ships the workloads of deploy/base/services.yaml as the declarations give them', () => {
    expect(parseAllDocs(read('deploy/base/services.yaml'))).toEqual(
      parseAllDocs(renderServiceManifests(system)),
    );
  });

  it('ships docker-compose.yml and the NATS values with every declared service and user', () => {
    const compose = read('docker-compose.yml');
    expect(parse(renderCompose(compose, system), { merge: true })).toEqual(parse(compose, { merge: true }));
    const values = read('deploy/nats/values.yaml');
    expect(parse(renderNatsFiles(system, values).values)).toEqual(parse(values));
    const tsconfig = read('tsconfig.json');
    expect(JSON.parse(withServiceReferences(tsconfig, system))).toEqual(JSON.parse(tsconfig));
  });

  it('deploys each declared service once: from its hand-written manifest or the rendered ones', () => {
    const base = parse(read('deploy/base/kustomization.yaml')) as { resources: string[] };
    for (const d of system.services) {
      if (d.manifest) {
        expect(base.resources, d.name).toContain(d.manifest);
        expect(read(`deploy/base/${d.manifest}`), d.name).toContain(`args: ['${d.name}']`);
      } else expect(read('deploy/base/services.yaml'), d.name).toContain(`name: askbus-${d.name}\n`);
    }
  });
});

function parseAllDocs(text: string): unknown[] {
  return text
    .split(/^---$/m)
    .map((d) => parse(d) as unknown)
    .filter((d) => d !== null);
}

/** Every service of services/ that has a main.ts: each must be deployed. */
function readdirServices(): string[] {
  return readdirSync(join(root, 'services'))
    .filter((s) => existsSync(join(root, 'services', s, 'src/main.ts')))
    .sort();
}
