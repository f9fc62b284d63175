import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { Service } from 'kubernetes-models/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { renderKustomization, type K8sObject } from './render';

const here = dirname(fileURLToPath(import.meta.url));
/** PostgreSQL with pgvector 0.8 (iterative HNSW scans), as PGlite's pgvector in the tests. */
const PGVECTOR_IMAGE = /^pgvector\/pgvector:0\.8\.\d+-pg1[5-7]$/;

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Workload = K8sObject & {
  spec: { template: { spec: { containers: { image: string; env?: Env[] }[] } } };
};

describe('deploy/overlays/pgvector', () => {
  const objects = renderKustomization(join(here, 'overlays', 'pgvector'));
  const find = (kind: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name);

  it('adds PostgreSQL with pgvector to the dev overlay, valid against the Kubernetes schemas', () => {
    const postgres = find('StatefulSet', 'askbus-postgres') as Workload | undefined;
    expect(postgres?.spec.template.spec.containers[0]!.image).toMatch(PGVECTOR_IMAGE);
    new StatefulSet(postgres as never).validate();
    new Service(find('Service', 'askbus-postgres') as never).validate();
    new PodDisruptionBudget(find('PodDisruptionBudget', 'askbus-postgres') as never).validate();
    new NetworkPolicy(find('NetworkPolicy', 'askbus-postgres-from-retriever') as never).validate();
    for (const o of objects) expect(o.metadata.namespace).toBe('askbus-dev');
  });

  it('points the retriever at it, the URL from a Secret', () => {
    const retriever = find('StatefulSet', 'askbus-retriever') as Workload;
    const env = retriever.spec.template.spec.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'ASKBUS_RETRIEVER_BACKENDS')?.value).toBe('pg');
    expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'askbus-postgres',
      key: 'url',
    });
  });
});

describe('docker-compose.pg.yml', () => {
  it('runs PostgreSQL with pgvector and points the retriever at it', () => {
    const compose = parse(readFileSync(join(here, '..', 'docker-compose.pg.yml'), 'utf8')) as {
      services: Record<string, { image?: string; environment: Record<string, string> }>;
    };
    expect(compose.services.postgres!.image).toMatch(PGVECTOR_IMAGE);
    expect(compose.services.retriever!.environment.DATABASE_URL).toMatch(/@postgres:5432\//);
  });
});
