import { describe, expect, it } from 'vitest';
import { ScoredItem, Understanding } from '@askbus/contracts';
import { abortableDelay, rankerOptionsFromEnv } from './index';
import { rankItems } from './rank';
import { movieBatch } from './fixtures';

describe('rankItems', () => {
  it('scores every item and returns them best first, ties in input order', () => {
    const ranked = rankItems('westerns with clint eastwood', movieBatch());
    expect(ranked.map((r) => r.url.split('/').pop())).toEqual([
      'pale-rider',
      'high-plains-drifter',
      'mystic-river',
      'open-range',
      'annie-hall',
    ]);
    expect(ranked.map((r) => r.score)).toEqual([100, 100, 68, 32, 0]);
    // the description is about the item, for people; why it scored so is in debug
    expect(ranked[0]!.description).toMatch(/^Pale Rider \(1985\): directed by Clint Eastwood/);
    expect(ranked[0]!.debug).toBe('matches: westerns, clint, eastwood');
    expect(ranked[4]!.debug).toContain('does not match: westerns, clint, eastwood');
    for (const r of ranked) expect(ScoredItem.safeParse(r).success).toBe(true);
  });

  it('with an understanding, scores by the constraints met and puts the asked facts first', () => {
    const understanding = Understanding.parse({
      text: 'westerns from the 1980s',
      constraints: [
        { kind: 'value', path: 'genre', values: ['western'], phrase: 'westerns', text: 'in Western' },
        {
          kind: 'range',
          target: { path: 'datePublished' },
          min: 1980,
          max: 1990,
          maxInclusive: false,
          phrase: 'from the 1980s',
          text: 'from the 1980s',
        },
      ],
      asked: ['genre', 'datePublished'],
    });
    const ranked = rankItems('westerns from the 1980s', movieBatch(), understanding);
    const top = ranked[0]!;
    expect(top.url).toMatch(/pale-rider/);
    expect(top.score).toBeGreaterThan(51);
    expect(top.debug).toBe('matches: in Western, from the 1980s');
    // an item that misses a constraint stays below NLWeb's threshold of 51
    for (const r of ranked.slice(1)) expect(r.score).toBeLessThanOrEqual(51);
  });

  it('is deterministic', () => {
    expect(rankItems('clint eastwood drama', movieBatch())).toEqual(
      rankItems('clint eastwood drama', movieBatch()),
    );
  });
});

describe('settings and delay', () => {
  it('reads ASKBUS_RANK_DELAY_MS', () => {
    expect(rankerOptionsFromEnv({})).toEqual({});
    expect(rankerOptionsFromEnv({ ASKBUS_RANK_DELAY_MS: '250' })).toEqual({ delayMs: 250 });
    expect(() => rankerOptionsFromEnv({ ASKBUS_RANK_DELAY_MS: 'soon' })).toThrow(/ASKBUS_RANK_DELAY_MS/);
    expect(() => rankerOptionsFromEnv({ ASKBUS_RANK_DELAY_MS: '-1' })).toThrow(/ASKBUS_RANK_DELAY_MS/);
  });

  it('stops waiting as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = abortableDelay(10_000, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(waiting).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(abortableDelay(0, controller.signal)).resolves.toBeUndefined();
  });
});
