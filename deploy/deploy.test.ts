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
import { renderKustomization, type K8sObject } from './render';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

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

type Container = {
  name: string;
  image: string;
  args?: string[];
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

    it('scales rankers with an autoscaler', () => {
      const [hpa] = of('HorizontalPodAutoscaler') as (K8sObject & {
        spec: { scaleTargetRef: { name: string }; minReplicas: number; maxReplicas: number };
      })[];
      expect(hpa!.spec.scaleTargetRef.name).toBe('askbus-ranker');
      expect(workloads.some((w) => w.metadata.name === 'askbus-ranker')).toBe(true);
      expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
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
      expect(a['nginx.ingress.kubernetes.io/configuration-snippet']).toMatch(/Upgrade \$http_upgrade/);
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
  it('turns JetStream on for the official chart', () => {
    const values = parse(readFileSync(join(here, 'nats/values.yaml'), 'utf8')) as {
      config: { jetstream: { enabled: boolean } };
    };
    expect(values.config.jetstream.enabled).toBe(true);
  });
});

describe('docker-compose.yml', () => {
  it('runs the same services as the manifests, and NATS with JetStream', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { command?: string[] }>;
    };
    const commands = Object.entries(compose.services)
      .filter(([name]) => name !== 'nats')
      .map(([, s]) => s.command?.[0])
      .sort();
    expect(commands).toEqual(readdirServices());
    expect(compose.services.nats!.command).toContain('-js');
  });
});

/** Every service of services/ that has a main.ts: each must be deployed. */
function readdirServices(): string[] {
  return readdirSync(join(root, 'services'))
    .filter((s) => existsSync(join(root, 'services', s, 'src/main.ts')))
    .sort();
}
