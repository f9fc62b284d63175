import { describe, expect, it } from 'vitest';
import { takeSseData } from './testing';

describe('takeSseData', () => {
  it('takes whole frames, skips frames without data, keeps a partial frame for later', () => {
    const first = takeSseData(': keepalive\n\ndata: {"a":1}\n\nevent: x\ndata:{"b"');
    expect(first).toEqual({ data: ['{"a":1}'], rest: 'event: x\ndata:{"b"' });
    const second = takeSseData(`${first.rest}:2}\n\n`);
    expect(second).toEqual({ data: ['{"b":2}'], rest: '' });
    expect(takeSseData('data: line one\ndata: line two\n\n').data).toEqual(['line one\nline two']);
  });
});
