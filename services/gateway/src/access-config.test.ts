import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testBus, testNats } from '@askbus/bus/testing';
import { AccessConfigError, accessConfig } from './access-config';
import { buildGateway } from './index';

const noFile = (): string => {
  throw new Error('no file expected');
};

describe('accessConfig', () => {
  it('is open with nothing configured: no keys, no limits', () => {
    expect(accessConfig({}, {}, {}, noFile)).toEqual({ keys: [], ratePerMinute: 0, maxStreamsPerClient: 0 });
  });

  it('reads ASKBUS_API_KEYS (client:key pairs, bare keys named by position) and the limits', () => {
    const config = accessConfig(
      {},
      {},
      {
        ASKBUS_API_KEYS: ' alice:alice-key-1 , bare-key-22,bob:b:with:colons ',
        ASKBUS_RATE_LIMIT_PER_MINUTE: '120',
        ASKBUS_MAX_STREAMS_PER_CLIENT: '4',
      },
      noFile,
    );
    expect(config).toEqual({
      keys: [
        { client: 'alice', key: 'alice-key-1' },
        { client: 'key-2', key: 'bare-key-22' },
        { client: 'bob', key: 'b:with:colons' },
      ],
      ratePerMinute: 120,
      maxStreamsPerClient: 4,
    });
  });

  it('adds the keys of ASKBUS_API_KEYS_FILE (one a line, # comments, blank lines)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-keys-'));
    const file = join(dir, 'keys');
    writeFileSync(file, '# the partners\ncarol:carol-key-1\n\n  # old\nbare-file-key\r\n');
    const config = accessConfig({}, {}, { ASKBUS_API_KEYS: 'alice:alice-key-1', ASKBUS_API_KEYS_FILE: file });
    expect(config.keys).toEqual([
      { client: 'alice', key: 'alice-key-1' },
      { client: 'carol', key: 'carol-key-1' },
      { client: 'key-3', key: 'bare-file-key' },
    ]);
  });

  it('takes auth.keys over the environment, and adds the legacy tokens for their surface only', () => {
    const config = accessConfig(
      { keys: [{ client: 'opt', key: 'option-key-1' }], ratePerMinute: 5 },
      { mcp: 'abc', a2a: 'def' },
      { ASKBUS_API_KEYS: 'env:env-key-123', ASKBUS_RATE_LIMIT_PER_MINUTE: '99' },
      noFile,
    );
    expect(config.keys).toEqual([
      { client: 'opt', key: 'option-key-1' },
      { client: 'mcp-token', key: 'abc', surfaces: ['mcp'] },
      { client: 'a2a-token', key: 'def', surfaces: ['a2a'] },
    ]);
    expect(config.ratePerMinute).toBe(5);
  });

  it('refuses a bad configuration with a message that names the entry, never the key', () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ ASKBUS_API_KEYS: 'alice:short' }, /ASKBUS_API_KEYS entry 1: a key has at least 8 characters/],
      [{ ASKBUS_API_KEYS: 'ok:okay-key-1,bad name:secret-key-9' }, /entry 2: a client name is/],
      [{ ASKBUS_API_KEYS: 'a:same-key-123,b:same-key-123' }, /the key of client "b" is configured twice/],
      [{ ASKBUS_API_KEYS: 'a:tab\there-key' }, /printable ASCII without spaces/],
      [{ ASKBUS_RATE_LIMIT_PER_MINUTE: 'lots' }, /ASKBUS_RATE_LIMIT_PER_MINUTE/],
      [{ ASKBUS_MAX_STREAMS_PER_CLIENT: '-1' }, /ASKBUS_MAX_STREAMS_PER_CLIENT must be 0 or more/],
      [{ ASKBUS_RATE_LIMIT_PER_MINUTE: '1.5' }, /whole number/],
      [
        { ASKBUS_API_KEYS_FILE: '/no/such/keys/file' },
        /ASKBUS_API_KEYS_FILE \/no\/such\/keys\/file cannot be read \(ENOENT\)/,
      ],
    ];
    for (const [env, message] of cases) {
      let error: unknown;
      try {
        accessConfig({}, {}, env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(AccessConfigError);
      expect((error as Error).message).toMatch(message);
      for (const secret of ['short', 'secret-key-9', 'same-key-123']) {
        expect((error as Error).message).not.toContain(secret);
      }
    }
    expect(() => accessConfig({ keys: [{ client: 'x', key: '' }] }, {}, {})).toThrow(/auth\.keys\[0\]/);
  });

  it('a bad configuration stops buildGateway before it serves anything', async () => {
    const nats = await testNats();
    const bus = await testBus(nats.url, 'gateway');
    const saved = process.env.ASKBUS_API_KEYS;
    process.env.ASKBUS_API_KEYS = 'alice:short';
    try {
      await expect(buildGateway(bus)).rejects.toThrow(AccessConfigError);
    } finally {
      if (saved === undefined) delete process.env.ASKBUS_API_KEYS;
      else process.env.ASKBUS_API_KEYS = saved;
      await bus.drain();
      await nats.stop();
    }
  });
});
