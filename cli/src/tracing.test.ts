import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCollector, type OtlpSpan, type TestCollector } from '@askbus/telemetry/testing';
import { startSystemTelemetry, type Telemetry } from '@askbus/telemetry';
import { startDemoSystem, type DemoSystem } from './testing';
import type { Running } from './up';

let collector: TestCollector;
let telemetry: Telemetry;
let system: DemoSystem;
let running: Running;

beforeAll(async () => {
  collector = await startTestCollector();
  // The SDK reads the standard variables itself; this test file runs in a process of its own.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  // As `askbus up` starts it: every service in this process, each span under its own service.name.
  telemetry = startSystemTelemetry('e2e');
  system = await startDemoSystem();
  running = system.running;
});

afterAll(async () => {
  await system?.stop();
  await telemetry?.shutdown();
  collector?.server.close();
});

describe('one trace per query across every service', () => {
  it('links gateway, router, retriever and ranker spans under the caller’s traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await fetch(
      `${running.url}/ask?query=westerns+with+clint+eastwood&site=movies&mode=summarize`,
      {
        headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
      },
    );
    expect(res.status).toBe(200);
    await res.text();
    await telemetry.shutdown(); // flushes every span still buffered

    const spans = collector.spans.filter((s) => s.traceId === traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const named = (name: string) => spans.filter((s) => s.name === name);
    const parentOf = (s: OtlpSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);

    // The gateway's HTTP span continues the caller's trace.
    const http = spans.find((s) => s.parentSpanId === callerSpan);
    expect(http, `spans: ${spans.map((s) => s.name).join(', ')}`).toBeDefined();

    const [sendAsk] = named('send ask.v1.run');
    expect(sendAsk).toBeDefined();
    // The bus call hangs somewhere under the HTTP span (Fastify adds handler spans between).
    let up = parentOf(sendAsk!);
    while (up && up !== http) up = parentOf(up);
    expect(up).toBe(http);

    const [processAsk] = named('process ask.v1.run');
    expect(parentOf(processAsk!)).toBe(sendAsk);

    const [sendSearch] = named('send retrieve.v1.search');
    expect(parentOf(sendSearch!)).toBe(processAsk);
    expect(parentOf(named('process retrieve.v1.search')[0]!)).toBe(sendSearch);

    const sendScore = named('send rank.v1.score');
    expect(sendScore.length).toBeGreaterThan(0);
    for (const s of sendScore) expect(parentOf(s)).toBe(processAsk);
    const processScore = named('process rank.v1.score');
    expect(processScore).toHaveLength(sendScore.length);
    for (const s of processScore) expect(sendScore).toContain(parentOf(s));

    // The summary is a model call: a span under the router's handler, with its token counts.
    const [llm] = spans.filter((s) => s.name.startsWith('chat '));
    expect(llm, 'an LLM span').toBeDefined();
    expect(parentOf(llm!)).toBe(processAsk);
    const attr = (k: string) => llm!.attributes?.find((a) => a.key === k)?.value;
    expect(attr('gen_ai.system')?.stringValue).toBe('local');
    expect(Number(attr('gen_ai.usage.output_tokens')?.intValue)).toBeGreaterThan(0);

    expect(attr('gen_ai.request.model')?.stringValue).toBeTruthy();

    // What the router decided is on the query's span: the tool, the scoring calls, FastTrack.
    const routed = (k: string) => processAsk!.attributes?.find((a) => a.key === k)?.value;
    expect(routed('askbus.tool')?.stringValue).toBe('search');
    expect(Number(routed('askbus.tool_selection.calls')?.intValue)).toBeGreaterThan(0);
    expect(routed('askbus.fast_track')?.stringValue).toMatch(/used|aborted|ineligible/);
    expect((processAsk as { events?: { name: string }[] }).events?.map((e) => e.name)).toContain(
      'tool selected',
    );

    // …and in the metrics every service adds to under askbus up.
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toMatch(/askbus_router_tool_chosen_total\{tool="search"\} [1-9]/);
    expect(metrics).toMatch(/askbus_router_tool_scoring_calls_total\{outcome="completed"\} [1-9]/);
    expect(metrics).toMatch(/askbus_router_fast_track_total\{outcome="(used|aborted|ineligible)"/);

    // One process, but each span names the service whose work it was.
    expect(http!.service).toBe('askbus-gateway');
    expect(sendAsk!.service).toBe('askbus-gateway');
    expect(processAsk!.service).toBe('askbus-router');
    expect(llm!.service).toBe('askbus-router');
    expect(named('process retrieve.v1.search')[0]!.service).toBe('askbus-retriever');
    for (const s of processScore) expect(s.service).toBe('askbus-ranker');
  });
});
