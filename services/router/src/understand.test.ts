import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RangeConstraint } from '@askbus/contracts';
import { WordNet } from '@askbus/embeddings';
import { createLlm } from '@askbus/llm';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { testSite } from '@askbus/understand/testing';
import { Understander, type UnderstandPorts } from './understand';

/**
 * The router's understanding: profiles cached by version (a changed profile is fetched again),
 * and with a language model configured, the model's reading of the question checked against the
 * profile, with the local parse as its fallback when the model fails or answers nonsense.
 */
const cars = testSite('cars');
const profile = () => cars.catalog.profile('cars')!;

function ports(): UnderstandPorts & { profileCalls: number; full: number } {
  const p = {
    profileCalls: 0,
    full: 0,
    profiles: async (_site: readonly string[], known: Record<string, string>) => {
      p.profileCalls++;
      const prof = profile();
      if (known.cars === prof.version)
        return [{ site: 'cars', version: prof.version, unchanged: true as const }];
      p.full++;
      return [prof];
    },
    names: async (_site: readonly string[], text: string) => cars.catalog.names.find(text, new Set(['cars'])),
  };
  return p;
}

const signal = () => new AbortController().signal;

describe('Understander without a model', () => {
  it('parses against the profile, and asks only whether the profile changed once it has it', async () => {
    const p = ports();
    const u = new Understander(p, WordNet.get(), { profileTtlMs: 0, memoMs: 0 });
    const a = await u.understand('cars with more than 200 horsepower', ['cars'], signal());
    expect(a?.understanding.constraints[0]).toMatchObject({ kind: 'range', min: 200 });
    await u.understand('the heaviest cars', ['cars'], signal());
    expect(p.profileCalls).toBe(2);
    expect(p.full).toBe(1);
  });
});

describe('Understander with a language model (OpenAI-compatible fake over HTTP)', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => fake?.close());

  const understander = () =>
    new Understander(ports(), WordNet.get(), {
      memoMs: 0,
      llm: createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'x', maxRetries: 0 }),
    });

  it("uses the model's reading, checked against the profile: unknown properties and values are dropped", async () => {
    fake.fail({
      kind: 'answer',
      text: JSON.stringify({
        intent: 'search',
        free_text: '',
        item_names: [],
        asked_properties: [],
        ranges: [
          { property: 'weight', min: 4000, max: null, unit: 'lb' },
          { property: 'warp factor', min: 9, max: null, unit: null },
        ],
        values: [
          { property: 'countryOfOrigin', values: ['USA'], negated: false },
          { property: 'countryOfOrigin', values: ['Atlantis'], negated: false },
        ],
        order: [{ property: 'vehicleEngine.enginePower', direction: 'desc', superlative: true }],
      }),
    });
    const read = await understander().understand(
      'big american muscle cars over two tons',
      ['cars'],
      signal(),
    );
    const u = read!.understanding;
    expect(u.source).toBe('llm');
    // the prompt carried the site's profile
    expect(fake.prompts.at(-1)).toContain('weight (weight): number in lb');
    expect(u.constraints).toHaveLength(2);
    expect((u.constraints[0] as RangeConstraint).min).toBeCloseTo(4000 * 453.59237, 0);
    expect(u.constraints[1]).toMatchObject({ kind: 'value', path: 'countryOfOrigin', values: ['usa'] });
    expect(u.orders[0]).toMatchObject({ direction: 'desc', strength: 'sort' });
  });

  it('falls back to the local parse when the model fails or answers garbage', async () => {
    for (const fault of [{ kind: 'status', status: 500 } as const, { kind: 'malformed' } as const]) {
      fake.fail(fault);
      const read = await understander().understand('cars with more than 200 horsepower', ['cars'], signal());
      expect(read!.understanding.source).toBe('local');
      expect(read!.understanding.constraints[0]).toMatchObject({ kind: 'range', min: 200 });
    }
  });
});
