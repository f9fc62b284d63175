/**
 * The webhook address check (push.ts) against every spelling of a loopback or private address:
 * IPv4 in decimal, hex and octal, IPv4-mapped, -translated, -compatible and NAT64 IPv6, 6to4 and
 * Teredo, zone ids. Only public unicast passes.
 */
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPrivateAddress } from './push';

describe('webhook addresses', () => {
  it('refuses the loopback and private spellings of issue 19 and their kin', () => {
    for (const a of [
      '::127.0.0.1', // IPv4-compatible (deprecated): issue 19's http://[::127.0.0.1]/
      '::7f00:1',
      '::a00:1',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:0:127.0.0.1', // IPv4-translated (RFC 6145)
      '64:ff9b::127.0.0.1', // NAT64 of loopback
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254 (cloud metadata)
      '64:ff9b:1::a00:1', // local-use NAT64 (RFC 8215)
      '2002:7f00:1::', // 6to4
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      '2001:db8::1', // documentation
      'fe80::1%eth0',
      'fec0::1',
      'fd12:3456::1',
      'ff02::1',
      '100::1',
      '1::1', // outside 2000::/3: unassigned
      '2130706433', // 127.0.0.1 in decimal
      '0x7f000001',
      '0x7f.1',
      '0177.0.0.1',
      '127.1',
      '017700000001',
      '10.0.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '198.18.0.1',
      '192.0.2.1',
      'not-an-address',
      '',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
  });

  it('lets public unicast through, IPv4, IPv6, and NAT64 of a public IPv4', () => {
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700::1111',
      '2a00:1450:4001::200e',
      '64:ff9b::808:808',
      '::ffff:8.8.8.8',
      '[2606:4700::1111]',
    ])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('checkWebhookUrl refuses URLs that spell loopback otherwise', async () => {
    for (const url of [
      'http://[::127.0.0.1]/',
      'http://[::ffff:127.0.0.1]:8080/hook',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'https://[fe80::1]/',
    ])
      await expect(checkWebhookUrl(url, false), url).rejects.toThrow(/private, loopback or link-local/);
    await expect(checkWebhookUrl('http://[::127.0.0.1]/', true)).resolves.toBeInstanceOf(URL);
  });
});
