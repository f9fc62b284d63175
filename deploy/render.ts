/**
 * Renders a Kustomize directory offline, for the features askbus's manifests use: resources
 * (files and directories), namespace, labels, images, replicas and JSON 6902 patches. The tests
 * check the result against the Kubernetes schemas; `kubectl kustomize` renders the same files.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
};

interface Kustomization {
  namespace?: string;
  resources?: string[];
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { target: { kind: string; name: string }; patch: string }[];
}

type PatchOp = { op: 'replace' | 'add' | 'remove'; path: string; value?: unknown };

export function renderKustomization(dir: string): K8sObject[] {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
  let objects: K8sObject[] = [];
  for (const r of k.resources ?? []) {
    const path = join(dir, r);
    if (statSync(path).isDirectory()) objects.push(...renderKustomization(path));
    else
      objects.push(
        ...parseAllDocuments(readFileSync(path, 'utf8'))
          .map((d) => d.toJS() as K8sObject | null)
          .filter((o): o is K8sObject => o !== null),
      );
  }
  for (const l of k.labels ?? []) {
    for (const o of objects) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
  }
  for (const img of k.images ?? []) {
    for (const c of containersOf(objects)) {
      const [name, tag] = splitImage(c.image);
      if (name === img.name || name === img.newName) {
        c.image = `${img.newName ?? name}:${img.newTag ?? tag ?? 'latest'}`;
      }
    }
  }
  for (const r of k.replicas ?? []) {
    const target = objects.find(
      (o) => o.metadata.name === r.name && ['Deployment', 'StatefulSet'].includes(o.kind),
    );
    if (!target) throw new Error(`replicas: no workload named ${r.name}`);
    target.spec = { ...target.spec, replicas: r.count };
  }
  for (const p of k.patches ?? []) {
    const target = objects.find((o) => o.kind === p.target.kind && o.metadata.name === p.target.name);
    if (!target) throw new Error(`patch: no ${p.target.kind} named ${p.target.name}`);
    for (const op of parse(p.patch) as PatchOp[]) applyOp(target, op);
  }
  if (k.namespace) {
    objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
  }
  return objects;
}

function containersOf(objects: K8sObject[]): { image: string }[] {
  return objects.flatMap((o) => {
    const template = (o.spec as { template?: { spec?: { containers?: { image: string }[] } } } | undefined)
      ?.template;
    return template?.spec?.containers ?? [];
  });
}

function splitImage(image: string): [string, string | undefined] {
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, undefined];
}

function applyOp(target: unknown, op: PatchOp): void {
  const keys = op.path
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = keys.pop();
  if (last === undefined) throw new Error(`patch path ${op.path} is empty`);
  let node = target as Record<string, unknown>;
  for (const key of keys) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) throw new Error(`patch path ${op.path}: no ${key}`);
    node = next as Record<string, unknown>;
  }
  if (Array.isArray(node)) {
    // JSON Patch on an array: `-` appends, an index inserts (add), replaces or removes.
    const at = last === '-' ? node.length : Number(last);
    if (!Number.isInteger(at) || at < 0 || at > node.length)
      throw new Error(`patch path ${op.path}: bad index`);
    if (op.op === 'add') node.splice(at, 0, op.value);
    else if (at >= node.length) throw new Error(`patch ${op.op} ${op.path}: nothing there`);
    else if (op.op === 'remove') node.splice(at, 1);
    else node[at] = op.value;
    return;
  }
  if (op.op === 'remove') delete node[last];
  else if (op.op === 'replace' && !(last in node)) throw new Error(`patch replace ${op.path}: nothing there`);
  else node[last] = op.value;
}
