import { EVERY_TOOL, toolHandlerOf, type Contract } from '@askbus/contracts';
import type { NatsPrincipal } from '@askbus/bus';

/**
 * The declarations in start order: a service starts after every service it calls (so the
 * gateway, which calls the router, starts last and listens once everything answers). Stopping
 * goes the other way round. Derived from serves/calls; a cycle is an error.
 */
export function startOrder<T extends NatsPrincipal>(declarations: readonly T[]): T[] {
  const servers = (c: Contract): T[] =>
    declarations.filter((d) => d.serves.some((s) => s.subject === c.subject));
  const dependsOn = (d: T): T[] =>
    d.calls.flatMap((c) =>
      c === EVERY_TOOL
        ? declarations.filter((x) => x.serves.some((s) => toolHandlerOf(s.subject) !== undefined))
        : servers(c as Contract),
    );
  const done = new Set<T>();
  const visiting = new Set<T>();
  const order: T[] = [];
  const visit = (d: T, path: string[]): void => {
    if (done.has(d)) return;
    if (visiting.has(d))
      throw new Error(`services call each other in a cycle: ${[...path, d.name].join(' → ')}`);
    visiting.add(d);
    for (const x of dependsOn(d)) if (x !== d) visit(x, [...path, d.name]);
    visiting.delete(d);
    done.add(d);
    order.push(d);
  };
  for (const d of declarations) visit(d, []);
  return order;
}
