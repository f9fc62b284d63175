/**
 * Items whose URL already belongs to another site. An upsert leaves them where they are unless
 * its caller asks to move them (`askbus load --move`): a load of one site must not silently
 * take items out of another (issue 19).
 */
import type { StoredItem } from '@askbus/contracts';

export interface UpsertOptions {
  /** Move items whose URL another site holds into this one (default: refuse them). */
  move?: boolean;
}

/** An item refused because its URL is another site's. */
export interface RefusedItem {
  url: string;
  /** The site that holds the URL. */
  site: string;
}

export interface UpsertResult {
  upserted: number;
  total: number;
  /** Items left out because another site holds their URL (absent when none were). */
  refused?: RefusedItem[];
}

/** The items of `items` (all of `site`) whose URL `siteOf` says another site holds. */
export function heldElsewhere(
  items: readonly StoredItem[],
  site: string,
  siteOf: (url: string) => string | undefined,
): RefusedItem[] {
  const refused: RefusedItem[] = [];
  for (const item of items) {
    const holder = siteOf(item.url);
    if (holder !== undefined && holder !== site) refused.push({ url: item.url, site: holder });
  }
  return refused;
}
