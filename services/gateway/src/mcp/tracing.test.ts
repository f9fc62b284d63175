import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCollector, type OtlpSpan, type TestCollector } from '@askbus/telemetry/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTelemetry } from '@askbus/telemetry';
import type { Telemetry } from '@askbus/telemetry';
import { mcpWorld } from './testing';
import type { McpWorld } from './testing';

let collector: TestCollector;
let telemetry: Telemetry;
let world: McpWorld;
let base: string;

beforeAll(async () => {
  collector = await startTestCollector();
  // The SDK reads the standard variables itself; vitest runs this file in a process of its own.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  telemetry = startTelemetry('gateway-mcp-test');
  world = await mcpWorld();
  ({ base } = await world.gateway());
});

afterAll(async () => {
  await world?.stop();
  await telemetry?.shutdown();
  collector?.server.close();
});

const TRACE_PLAIN = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACE_SESSION = '5bf92f3577b34da6a3ce929d0e0e4737';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = (traceId: string): string => `00-${traceId}-${CALLER_SPAN}-01`;

/** The bus call to the router hangs under the MCP request's HTTP span, a child of the caller's span. */
function expectJoined(traceId: string): void {
  const spans = collector.spans.filter((s) => s.traceId === traceId);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const parentOf = (s: OtlpSpan): OtlpSpan | undefined =>
    s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
  const names = spans.map((s) => s.name).join(', ');
  const http = spans.filter((s) => s.parentSpanId === CALLER_SPAN);
  expect(http.length, `spans: ${names}`).toBeGreaterThan(0);
  const send = spans.filter((s) => s.name === 'send ask.v1.run');
  expect(send, `spans: ${names}`).toHaveLength(1);
  // Not a direct child of the caller's span (the traceparent fallback) but under the HTTP span.
  expect(send[0]!.parentSpanId).not.toBe(CALLER_SPAN);
  let up = parentOf(send[0]!);
  while (up && !http.includes(up)) up = parentOf(up);
  expect(up, `spans: ${names}`).toBeDefined();
  const handled = spans.find((s) => s.name === 'process ask.v1.run');
  expect(handled && parentOf(handled)).toBe(send[0]);
}

describe('MCP tool calls join the HTTP request span', () => {
  it('plain JSON-RPC POST and a Streamable HTTP session', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(TRACE_PLAIN) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'details', arguments: { item: 'Alien', site: 'movies' } },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result?: { structuredContent?: { item?: { name: string } } } };
    expect(body.result?.structuredContent?.item?.name).toBe('Alien');

    const client = new Client({ name: 'trace-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { traceparent: traceparent(TRACE_SESSION) } },
      }),
    );
    const r = await client.callTool({ name: 'ask', arguments: { query: 'space movies' } });
    expect(r.isError).toBeFalsy();
    await client.close();

    await telemetry.shutdown(); // flushes every span still buffered
    expectJoined(TRACE_PLAIN);
    expectJoined(TRACE_SESSION);
  });
});
