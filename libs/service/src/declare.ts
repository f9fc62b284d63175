/**
 * A service's declaration: the one place that says what it is (name), what it serves and calls
 * on NATS, what configuration it reads, and how it starts. Its main.ts runs it as a process
 * (runMain), `askbus up` runs every declaration in one process (runInProcess), and the NATS
 * permissions, the tool subjects and the deployment manifests are derived from the declarations.
 */
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Bus, NatsPrincipal } from '@askbus/bus';
import type { LlmCounterSource } from '@askbus/telemetry';

/** The environment a service's config schema reads (process.env, or `askbus up`'s). */
export type Env = Readonly<Record<string, string | undefined>>;

/** What a service's start function gets. */
export interface ServiceContext<Config> {
  /** The declared name (also its NATS user, its queue group and its telemetry service name). */
  name: string;
  bus: Bus;
  log: Logger;
  config: Config;
  /** Metrics of this process (`/metrics`): the gateway serves them under `askbus up`. */
  registry: Registry;
  /** Aborts when the service is asked to stop. */
  signal: AbortSignal;
}

/** What a started service hands back. */
export interface ServiceHandle {
  /** Stops taking new work before the bus drains (the gateway closes HTTP). */
  stop?: () => Promise<void>;
  /** Releases what the handlers used, after the bus drained (a database pool, an index). */
  close?: () => Promise<void>;
  /** Its language-model client, for the LLM metrics (fallbacks, circuit breakers). */
  llm?: LlmCounterSource;
  /** Where it listens, for a service that serves HTTP. */
  url?: string;
  /** What to log about it once it serves. */
  describe?: Record<string, unknown>;
}

/** How the manifests run a service (deploy/render-services.ts). */
export interface DeployHints {
  /** Replicas of its Deployment (default 1); ignored under an autoscaler. */
  replicas?: number;
  /** Memory request and limit, e.g. '128Mi' / '512Mi' (defaults: 128Mi / 512Mi). */
  memory?: { request: string; limit: string };
  /** CPU request (default 100m). */
  cpu?: string;
  /**
   * A HorizontalPodAutoscaler instead of fixed replicas, on the requests each pod is handling
   * (askbus_requests_in_flight through the Prometheus adapter) and CPU: for services that wait
   * on a model or on other services, where CPU alone does not follow the load.
   */
  autoscale?: { min: number; max: number; inFlightPerPod: number };
}

export interface ServiceDeclaration<Config = unknown> extends NatsPrincipal {
  readonly name: string;
  /** One sentence: what it does, for the README's map and the manifests' comments. */
  readonly description: string;
  /** Parses the environment into the service's config; a bad value is a clear error at start. */
  readonly config: z.ZodType<Config, unknown>;
  readonly start: (ctx: ServiceContext<Config>) => Promise<ServiceHandle | void> | ServiceHandle | void;
  /**
   * Hand-written manifests instead of the rendered Deployment (the gateway's Service and
   * Ingress, the retriever's volume, the ranker's autoscaler): the file under deploy/base.
   */
  readonly manifest?: string;
  readonly deploy?: DeployHints;
}

/** Declares a service (an identity function that checks the declaration's types). */
export function defineService<Config>(declaration: ServiceDeclaration<Config>): ServiceDeclaration<Config> {
  return declaration;
}
