import { z } from 'zod';
import type { Env, ServiceDeclaration } from './declare';

/** A service's configuration could not be read from the environment. */
export class ServiceConfigError extends Error {
  constructor(service: string, issues: string) {
    super(`${service}: bad configuration\n${issues}`);
    this.name = 'ServiceConfigError';
  }
}

/** Reads a declaration's config from `env`; throws ServiceConfigError naming each bad variable. */
export function readConfig<Config>(decl: ServiceDeclaration<Config>, env: Env): Config {
  const parsed = decl.config.safeParse(env);
  if (!parsed.success) throw new ServiceConfigError(decl.name, z.prettifyError(parsed.error));
  return parsed.data;
}

/** Schema parts for environment variables: unset or empty means the default. */
export const envVar = {
  /** A whole number ≥ min. */
  int: (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
    z.preprocess(
      (v) => (v === undefined || v === '' ? undefined : v),
      z.coerce.number().int().min(min).max(max).default(fallback),
    ),
  /** A whole number ≥ min, or undefined when unset. */
  optionalInt: (min = 0, max = Number.MAX_SAFE_INTEGER) =>
    z.preprocess(
      (v) => (v === undefined || v === '' ? undefined : v),
      z.coerce.number().int().min(min).max(max).optional(),
    ),
  /** A flag: 1/true/yes or 0/false/no. */
  flag: (fallback: boolean) =>
    z.preprocess((v) => {
      if (v === undefined || v === '') return fallback;
      if (typeof v !== 'string') return v;
      if (/^(1|true|yes|on)$/i.test(v)) return true;
      if (/^(0|false|no|off)$/i.test(v)) return false;
      return v;
    }, z.boolean()),
  /** A string, or undefined when unset or empty. */
  optional: () => z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
};

/**
 * A config schema from a reader of the environment that throws on a bad value (the services'
 * existing `…FromEnv` functions): its error becomes the schema's issue.
 */
export function fromEnv<Config>(read: (env: Env) => Config): z.ZodType<Config, unknown> {
  return z
    .custom<Env>((v) => typeof v === 'object' && v !== null)
    .transform((env, ctx) => {
      try {
        return read(env);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    }) as unknown as z.ZodType<Config, unknown>;
}
