import {
  completeOrLocal,
  extractParams,
  fillTemplate,
  taskPrompt,
  ToolScoreAnswer,
  type Llm,
} from '@askbus/llm';
import { paramNames, type ToolDef } from '@askbus/tools';

/** NLWeb's thresholds (router.py): the first score ≥ 90 stops the others; below 70 is dropped. */
export interface SelectionSettings {
  /** null: no early termination (every scoring call runs to the end). */
  earlyStop: number | null;
  minScore: number;
  /** Tools kept, best first. */
  keep: number;
}
export const defaultSelectionSettings: SelectionSettings = { earlyStop: 90, minScore: 70, keep: 3 };

export interface ToolChoice {
  tool: ToolDef;
  score: number;
  params: Record<string, unknown>;
}

export interface SelectionStats {
  /** Scoring calls started. */
  calls: number;
  /** Calls that answered before the selection ended. */
  completed: number;
  /** Calls cancelled by early termination (their answers were not waited for). */
  saved: number;
  failed: number;
  elapsedMs: number;
  /**
   * Tools the local tool scorer scored because the model failed on them (an error, a timeout, a
   * malformed answer, an open circuit), and why, by reason.
   */
  scoredLocally?: number;
  fallbackReasons?: Record<string, number>;
  /** Why no model was asked. */
  skipped?: 'single_tool' | 'explicit' | 'no_tools';
}

/** The builtin search tool, for a site whose tools.xml section has none. */
export const SEARCH_TOOL: ToolDef = {
  name: 'search',
  enabled: true,
  method: 'builtin',
  examples: ['search'],
  prompt: 'search',
  returnStruc: { score: 'integer', search_query: 'string' },
  line: 0,
  type: 'Thing',
};

/**
 * Scores every tool for a query with the model, all calls in flight at once, each with its own
 * AbortSignal. The first score ≥ earlyStop ends the selection and cancels the calls still
 * running; the answers in hand below minScore are dropped; with none left, search at score 0.
 * A tool the model fails on is scored by the local tool scorer instead (counted in the stats);
 * `queryId` names the query whose retry budget the calls share.
 */
export async function selectTools(
  llm: Llm,
  tools: readonly ToolDef[],
  query: string,
  itemType: string,
  signal: AbortSignal,
  settings: SelectionSettings = defaultSelectionSettings,
  understood?: { intent: 'search' | 'details' | 'compare'; named: string[]; asked: string[] },
  queryId?: string,
): Promise<{ ranked: ToolChoice[]; stats: SelectionStats }> {
  const started = Date.now();
  const stats: SelectionStats = { calls: 0, completed: 0, saved: 0, failed: 0, elapsedMs: 0 };
  const fallback = (): ToolChoice => ({
    tool: tools.find((t) => t.name === 'search') ?? SEARCH_TOOL,
    score: 0,
    params: { search_query: query },
  });
  if (tools.length <= 1) {
    const only = tools[0];
    stats.skipped = only ? 'single_tool' : 'no_tools';
    return {
      ranked: [only ? { tool: only, score: 100, params: extractParams(only.name, query) } : fallback()],
      stats,
    };
  }
  const answers: ToolChoice[] = [];
  const calls = tools.map(() => new AbortController());
  const pending = new Set(calls.keys());
  await new Promise<void>((resolve) => {
    let stopped = false;
    const finish = (): void => {
      if (stopped) return;
      stopped = true;
      signal.removeEventListener('abort', finish);
      stats.saved = pending.size;
      for (const i of pending) calls[i]!.abort();
      resolve();
    };
    signal.addEventListener('abort', finish, { once: true });
    tools.forEach((tool, i) => {
      stats.calls++;
      const task = {
        kind: 'tool_score' as const,
        query,
        itemType,
        tool: { name: tool.name, examples: tool.examples, params: paramNames(tool) },
        ...(understood ? { understood } : {}),
      };
      const prompt = `${fillTemplate(tool.prompt, { 'request.query': query, 'request.itemType': itemType })}\nAnswer with JSON of this structure: ${JSON.stringify(tool.returnStruc)}`;
      completeOrLocal(llm, {
        messages: [{ role: 'user', content: taskPrompt(prompt, task) }],
        tier: 'high',
        jsonSchema: ToolScoreAnswer,
        schemaName: 'tool_score',
        task,
        signal: AbortSignal.any([signal, calls[i]!.signal]),
        ...(queryId ? { queryId } : {}),
      })
        .then(({ answer, fallback }) => {
          if (stopped) return;
          pending.delete(i);
          stats.completed++;
          if (fallback) {
            stats.scoredLocally = (stats.scoredLocally ?? 0) + 1;
            const reasons = (stats.fallbackReasons ??= {});
            reasons[fallback.reason] = (reasons[fallback.reason] ?? 0) + 1;
          }
          const { score, ...params } = answer;
          answers.push({ tool, score, params });
          if (settings.earlyStop !== null && score >= settings.earlyStop) finish();
        })
        .catch(() => {
          if (stopped) return;
          pending.delete(i);
          stats.failed++;
        })
        .finally(() => {
          if (pending.size === 0) finish();
        });
    });
  });
  stats.elapsedMs = Date.now() - started;
  const ranked = answers
    .filter((a) => a.score >= settings.minScore)
    .sort((a, b) => b.score - a.score)
    .slice(0, settings.keep);
  return { ranked: ranked.length ? ranked : [fallback()], stats };
}
