import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';

/**
 * NATS service discovery (ADR-32, "Service API" v1): every bus answers $SRV.PING, $SRV.INFO and
 * $SRV.STATS (all services, by name, by name and id), so `nats micro ls` and friends see each
 * askbus process with its endpoints and counts. @nats-io/services implements the same protocol
 * but owns the endpoint subscriptions, and its handlers cannot stream replies the way askbus does
 * (chunks, heartbeats, end markers), so the bus answers the discovery subjects itself.
 */

export interface EndpointStats {
  name: string;
  subject: string;
  queue_group: string;
  num_requests: number;
  num_errors: number;
  last_error: string;
  /** Nanoseconds, as the protocol counts them. */
  processing_time: number;
  average_processing_time: number;
}

export class Discovery {
  readonly id = randomUUID().replaceAll('-', '').slice(0, 22);
  private readonly started = new Date().toISOString();
  private readonly endpoints = new Map<string, EndpointStats>();
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
    private readonly version: string,
    /** Whether a request's reply subject may be answered (the bus's check; it logs and counts). */
    mayAnswer: (msg: Msg) => boolean,
  ) {
    const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const answers = {
      PING: () => ({ type: 'io.nats.micro.v1.ping_response', ...this.identity() }),
      INFO: () => ({
        type: 'io.nats.micro.v1.info_response',
        ...this.identity(),
        description: `askbus ${name}`,
        endpoints: [...this.endpoints.values()].map((e) => ({
          name: e.name,
          subject: e.subject,
          queue_group: e.queue_group,
          metadata: null,
        })),
      }),
      STATS: () => ({
        type: 'io.nats.micro.v1.stats_response',
        ...this.identity(),
        started: this.started,
        endpoints: [...this.endpoints.values()],
      }),
    };
    for (const [verb, answer] of Object.entries(answers)) {
      for (const subject of [`$SRV.${verb}`, `$SRV.${verb}.${name}`, `$SRV.${verb}.${name}.${this.id}`]) {
        this.subs.push(
          nc.subscribe(subject, {
            callback: (_e, msg) => {
              if (mayAnswer(msg)) msg.respond(encode(answer()));
            },
          }),
        );
      }
    }
  }

  private identity() {
    return { name: this.name, id: this.id, version: this.version, metadata: { proto: 'askbus' } };
  }

  addEndpoint(subject: string, queue: string): void {
    this.endpoints.set(subject, {
      name: subject.replaceAll('.', '-'),
      subject,
      queue_group: queue,
      num_requests: 0,
      num_errors: 0,
      last_error: '',
      processing_time: 0,
      average_processing_time: 0,
    });
  }

  /** The counts of one endpoint, as $SRV.STATS reports them. */
  endpoint(subject: string): Readonly<EndpointStats> | undefined {
    return this.endpoints.get(subject);
  }

  record(subject: string, seconds: number, error?: string): void {
    const e = this.endpoints.get(subject);
    if (!e) return;
    e.num_requests++;
    e.processing_time += Math.round(seconds * 1e9);
    e.average_processing_time = Math.round(e.processing_time / e.num_requests);
    if (error) {
      e.num_errors++;
      e.last_error = error;
    }
  }

  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }
}
