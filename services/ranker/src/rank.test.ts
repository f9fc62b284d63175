import { describe, expect, it } from 'vitest';
import { ScoredItem } from '@askbus/contracts';
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
    expect(ranked[0]!.description).toBe(
      'Western directed by Clint Eastwood (1985); matches: westerns, clint, eastwood',
    );
    expect(ranked[4]!.description).toContain('does not match: westerns, clint, eastwood');
    for (const r of ranked) expect(ScoredItem.safeParse(r).success).toBe(true);
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
