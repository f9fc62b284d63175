import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Bus } from '@askbus/bus';

/** Buckets for NATS calls and handlers: a local hop is ~1 ms, a model call seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The buses reporting into each registry (askbus up has several in one process). */
const busesOf = new WeakMap<Registry, Bus[]>();

/** One Prometheus registry per process, with Node's own metrics. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * Request, error and latency metrics of every subject a bus serves and calls, and the
 * requests in flight. Several buses (askbus up runs every service in one process) share one
 * registry, told apart by the `service` label.
 */
export function instrumentBus(bus: Bus, registry: Registry): void {
  const metric = <T>(name: string, make: () => T): T =>
    (registry.getSingleMetric(name) as T | undefined) ?? make();
  const handled = metric(
    'askbus_requests_handled_total',
    () =>
      new Counter({
        name: 'askbus_requests_handled_total',
        help: 'Requests handled, by service, subject and outcome (ok or an error code)',
        labelNames: ['service', 'subject', 'outcome'],
        registers: [registry],
      }),
  );
  const handledSeconds = metric(
    'askbus_request_duration_seconds',
    () =>
      new Histogram({
        name: 'askbus_request_duration_seconds',
        help: 'Time to handle a request (streams: until the end marker)',
        labelNames: ['service', 'subject'],
        buckets: LATENCY_BUCKETS,
        registers: [registry],
      }),
  );
  const calls = metric(
    'askbus_calls_total',
    () =>
      new Counter({
        name: 'askbus_calls_total',
        help: 'Calls made to other services, by subject and outcome',
        labelNames: ['service', 'subject', 'outcome'],
        registers: [registry],
      }),
  );
  const callSeconds = metric(
    'askbus_call_duration_seconds',
    () =>
      new Histogram({
        name: 'askbus_call_duration_seconds',
        help: 'Time of a call to another service, as the caller sees it',
        labelNames: ['service', 'subject'],
        buckets: LATENCY_BUCKETS,
        registers: [registry],
      }),
  );
  let buses = busesOf.get(registry);
  if (!buses) busesOf.set(registry, (buses = []));
  const all = buses;
  metric(
    'askbus_requests_in_flight',
    () =>
      new Gauge({
        name: 'askbus_requests_in_flight',
        help: 'Requests being handled right now',
        labelNames: ['service'],
        registers: [registry],
        collect() {
          this.reset();
          for (const b of all) this.inc({ service: b.service }, b.stats.inFlight);
        },
      }),
  );
  metric(
    'askbus_refused_total',
    () =>
      new Counter({
        name: 'askbus_refused_total',
        help: 'Requests not answered because their reply subject was not an inbox (what=reply), and cancels from a user that neither made the call nor started the query (what=cancel)',
        labelNames: ['service', 'what'],
        registers: [registry],
        collect() {
          this.reset();
          for (const b of all) {
            this.inc({ service: b.service, what: 'reply' }, b.stats.refusedReplies);
            this.inc({ service: b.service, what: 'cancel' }, b.stats.refusedCancels);
          }
        },
      }),
  );
  buses.push(bus);
  const service = bus.service;
  bus.observe({
    handled: (subject, outcome, seconds) => {
      handled.inc({ service, subject, outcome });
      handledSeconds.observe({ service, subject }, seconds);
    },
    called: (subject, outcome, seconds) => {
      calls.inc({ service, subject, outcome });
      callSeconds.observe({ service, subject }, seconds);
    },
  });
}

/** What an LLM client counts (libs/llm's Llm.counters, fallbacks and circuit breakers). */
export interface LlmCounterSource {
  provider: string;
  counters: {
    calls: number;
    failures: number;
    malformedOutputs: number;
    retries: number;
    tokensIn: number;
    tokensOut: number;
    refusedOpen?: number;
    retriesDenied?: number;
  };
  /** Answers the local scorer or composer gave instead of a failing model, by task and reason. */
  fallbackCounts?(): { task: string; reason: string; count: number }[];
  /** The circuit breaker of each model called so far. */
  breakerStates?(): { model: string; state: 'closed' | 'open' | 'half_open' }[];
}

const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

/** The LLM clients reporting into each registry (askbus up has several in one process). */
const llmsOf = new WeakMap<Registry, { service: string; llm: LlmCounterSource }[]>();

/**
 * LLM calls, failures, tokens, fallbacks and circuit breakers of a service, read from its
 * client at scrape time. Several clients may report into one registry (askbus up: two rankers,
 * the router, the tools); clients with the same labels add up.
 */
export function instrumentLlm(service: string, llm: LlmCounterSource, registry: Registry): void {
  const known = llmsOf.get(registry);
  if (known) {
    known.push({ service, llm });
    return;
  }
  const all = [{ service, llm }];
  llmsOf.set(registry, all);
  const labelsOf = (s: { service: string; llm: LlmCounterSource }) => ({
    service: s.service,
    provider: s.llm.provider,
  });
  const read: [string, string, (c: LlmCounterSource['counters']) => number][] = [
    ['askbus_llm_calls_total', 'Language-model calls', (c) => c.calls],
    ['askbus_llm_failures_total', 'Language-model calls that failed (after retries)', (c) => c.failures],
    [
      'askbus_llm_malformed_outputs_total',
      'Answers that did not parse against their schema',
      (c) => c.malformedOutputs,
    ],
    ['askbus_llm_retries_total', 'Retried attempts (429, 5xx, timeouts)', (c) => c.retries],
    [
      'askbus_llm_retries_denied_total',
      "Retries not made because the query's retry budget was spent",
      (c) => c.retriesDenied ?? 0,
    ],
    [
      'askbus_llm_circuit_refusals_total',
      "Calls refused at once because the model's circuit breaker was open",
      (c) => c.refusedOpen ?? 0,
    ],
    ['askbus_llm_input_tokens_total', 'Prompt tokens sent', (c) => c.tokensIn],
    ['askbus_llm_output_tokens_total', 'Completion tokens received', (c) => c.tokensOut],
  ];
  for (const [name, help, get] of read) {
    new Counter({
      name,
      help,
      labelNames: ['service', 'provider'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of all) this.inc(labelsOf(s), get(s.llm.counters));
      },
    });
  }
  new Counter({
    name: 'askbus_llm_fallbacks_total',
    help: 'Answers the local scorer or composer gave because the model failed, by task and reason',
    labelNames: ['service', 'provider', 'task', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of all) {
        for (const f of s.llm.fallbackCounts?.() ?? [])
          this.inc({ ...labelsOf(s), task: f.task, reason: f.reason }, f.count);
      }
    },
  });
  new Gauge({
    name: 'askbus_llm_circuit_state',
    help: "Circuit breakers of each model in each state (closed, open, half_open): 1 or 0 for a service's one client",
    labelNames: ['service', 'provider', 'model', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of all) {
        for (const b of s.llm.breakerStates?.() ?? []) {
          for (const state of BREAKER_STATES)
            this.inc({ ...labelsOf(s), model: b.model, state }, b.state === state ? 1 : 0);
        }
      }
    },
  });
}
