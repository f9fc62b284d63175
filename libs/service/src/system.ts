import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { contracts, toolHandlerOf } from '@askbus/contracts';
import { NatsAuthorization, type NatsPrincipal } from '@askbus/bus';
import { startOrder } from './order';
import type { ServiceDeclaration } from './declare';

/** `askbus load` and friends: a client of the retriever, with a NATS user of its own. */
export const LOADER: NatsPrincipal = {
  name: 'loader',
  serves: [],
  calls: [contracts.sites, contracts.upsert, contracts.delete],
};

/** The folder whose subfolders are the services (each with src/service.ts). */
export const SERVICES_DIR = fileURLToPath(new URL('../../../services/', import.meta.url));

const Contractish = z.object({ subject: z.string() }).passthrough();
/** The shape a declaration module's default export must have (its types are checked by tsc). */
const DeclarationShape = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/),
  description: z.string().min(1),
  serves: z.array(Contractish),
  calls: z.array(z.union([Contractish, z.object({ kind: z.literal('every-tool') })])),
  config: z.custom<z.ZodType>((v) => typeof (v as { safeParse?: unknown })?.safeParse === 'function'),
  start: z.custom<() => unknown>((v) => typeof v === 'function'),
});

/** Every service of the system, as their declarations say, and what follows from them. */
export class System {
  readonly authorization: NatsAuthorization;

  constructor(readonly services: readonly ServiceDeclaration[]) {
    this.authorization = new NatsAuthorization([...services, LOADER]);
  }

  service(name: string): ServiceDeclaration {
    const s = this.services.find((d) => d.name === name);
    if (!s)
      throw new Error(`no service "${name}" (declared: ${this.services.map((d) => d.name).join(', ')})`);
    return s;
  }

  /** The tool handlers some service serves (`tool.v1.<handler>.run`), with the service. */
  toolHandlers(): Map<string, string> {
    const out = new Map<string, string>();
    for (const s of this.services)
      for (const c of s.serves) {
        const handler = toolHandlerOf(c.subject);
        if (handler) out.set(handler, s.name);
      }
    return out;
  }

  /**
   * A tool of config/tools.xml is valid when a service declares its handler: the handlers named
   * there that no service serves, as an error naming them.
   */
  checkTools(handlers: readonly string[]): void {
    const served = this.toolHandlers();
    const missing = [...new Set(handlers.filter((h) => !served.has(h)))];
    if (missing.length > 0)
      throw new Error(
        `config/tools.xml names handler${missing.length > 1 ? 's' : ''} ${missing.map((h) => `"${h}"`).join(', ')} ` +
          `that no service declares (services/<name>/src/service.ts serving toolContract('<handler>')); ` +
          `declared: ${[...served.keys()].join(', ')}`,
      );
  }

  /** The services in start order (each after those it calls). */
  startOrder(): ServiceDeclaration[] {
    return startOrder(this.services);
  }
}

const cache = new Map<string, Promise<System>>();

/** Reads the declaration of every folder of `servicesDir` that has src/service.ts. */
export function loadSystem(servicesDir: string = SERVICES_DIR): Promise<System> {
  let system = cache.get(servicesDir);
  if (!system) {
    system = discover(servicesDir);
    cache.set(servicesDir, system);
  }
  return system;
}

async function discover(servicesDir: string): Promise<System> {
  // A folder may be a symlink (statSync follows it).
  const folders = readdirSync(servicesDir)
    .filter((name) => statSync(join(servicesDir, name)).isDirectory())
    .filter((name) => existsSync(join(servicesDir, name, 'src', 'service.ts')))
    .sort();
  const services = await Promise.all(
    folders.map(async (folder) => {
      // Imported by its real path, so its own imports resolve where it lives.
      const file = realpathSync(join(servicesDir, folder, 'src', 'service.ts'));
      const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
      const checked = DeclarationShape.safeParse(mod.default);
      if (!checked.success)
        throw new Error(
          `${file}: its default export is not a service declaration: ${z.prettifyError(checked.error)}`,
        );
      const decl = mod.default as ServiceDeclaration;
      if (decl.name !== folder)
        throw new Error(`${file}: declares "${decl.name}", but its folder is "${folder}"`);
      return decl;
    }),
  );
  return new System(services);
}
