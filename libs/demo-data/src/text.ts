/** Small string helpers shared by the converters. */

/** URL-safe slug: accents folded, lowercase, runs of anything else as one "-". */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || 'untitled';
}

/**
 * Hands out URLs that stay unique within one conversion: the second "ford-pinto-1975" becomes
 * "ford-pinto-1975-2". Input order decides, so the same data always gets the same URLs.
 */
export function uniqueUrls(): (base: string) => string {
  const issued = new Set<string>();
  return (base) => {
    let url = base;
    for (let n = 2; issued.has(url); n++) url = `${base}-${n}`;
    issued.add(url);
    return url;
  };
}

/** 3504 → "3,504" (fixed locale so output never depends on the machine). */
export const formatNumber = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

export const isNonEmpty = (s: string | null | undefined): s is string =>
  typeof s === 'string' && s.trim() !== '';

/**
 * Some titles in movies.json are Windows-1252 text that was read as Mac Roman ("AmÈlie" for
 * "Amélie", "pi˘" for "più"). This maps each Mac Roman character back to its byte and reads
 * that as Windows-1252. Applied only when every non-ASCII character is one Mac Roman has and
 * the text holds no lowercase accented letter (correct European text nearly always does).
 */
const WINDOWS_1252_80_9F = '€ ‚ƒ„…†‡ˆ‰Š‹Œ Ž  ‘’“”•–—˜™š›œ žŸ';
const MOJIBAKE = buildMojibakeTable();

function buildMojibakeTable(): Map<string, string> {
  const table = new Map<string, string>();
  try {
    const mac = new TextDecoder('macintosh');
    for (let b = 0x80; b <= 0xff; b++) {
      // Windows-1252 is Latin-1 except 0x80-0x9F (Node's decoder gives C1 controls there)
      const win = b < 0xa0 ? (WINDOWS_1252_80_9F[b - 0x80] ?? '') : String.fromCharCode(b);
      if (win.trim()) table.set(mac.decode(new Uint8Array([b])), win);
    }
  } catch {
    // a Node without these decoders (small-icu): leave text as it is
  }
  return table;
}

export function repairMojibake(text: string): string {
  const foreign = text.match(/[^\p{ASCII}]/gu);
  if (!foreign || MOJIBAKE.size === 0) return text;
  if (/[à-ÿ]/.test(text) || !foreign.every((c) => MOJIBAKE.has(c))) return text;
  return text.replace(/[^\p{ASCII}]/gu, (c) => MOJIBAKE.get(c) ?? c);
}
