import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { node } from '@opentelemetry/sdk-node';
import { createLogger, startTelemetry } from './index';

// Records spans without exporting them; this test file runs in a process of its own.
const provider = new node.NodeTracerProvider();
provider.register();
afterAll(() => provider.shutdown());

describe('telemetry', () => {
  it('stays off when no OTEL_* variable asks for it', () => {
    expect(startTelemetry('x', {}).enabled).toBe(false);
    expect(
      startTelemetry('x', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h', OTEL_SDK_DISABLED: 'true' }).enabled,
    ).toBe(false);
  });

  it('writes trace_id and span_id of the active span on every log line', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const log = createLogger('svc', {}, sink);
    let ids = { traceId: '', spanId: '' };
    trace.getTracer('test').startActiveSpan('work', (span) => {
      ids = span.spanContext();
      log.info('inside');
      span.end();
    });
    log.info('outside');
    expect(lines[0]).toMatchObject({
      service: 'svc',
      msg: 'inside',
      trace_id: ids.traceId,
      span_id: ids.spanId,
    });
    expect(ids.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(lines[1]).not.toHaveProperty('trace_id');
  });
});
