import { z } from 'zod';
import { AnthropicAdapter } from './anthropic';
import { Llm, type LlmOptions } from './client';
import { LocalAdapter } from './local';
import { OpenAiCompatibleAdapter } from './openai';

export const LlmConfig = z.object({
  provider: z.enum(['local', 'openai', 'anthropic']).default('local'),
  baseURL: z.string().url().optional(),
  apiKey: z.string().optional(),
  apiVersion: z.string().optional(),
  modelLow: z.string().optional(),
  modelHigh: z.string().optional(),
  jsonMode: z.enum(['json_schema', 'json_object', 'none']).default('json_schema'),
  concurrency: z.coerce.number().int().min(1).max(10_000).default(16),
  timeoutMs: z.coerce.number().int().min(1).max(600_000).default(30_000),
  maxRetries: z.coerce.number().int().min(0).max(10).default(2),
  backoffMs: z.coerce.number().int().min(0).max(60_000).default(250),
  /** Retries one query may make in all, in each service process. */
  retryBudget: z.coerce.number().int().min(0).max(1_000).default(4),
  /** Consecutive failed attempts that open a model's circuit breaker. */
  breakerFailures: z.coerce.number().int().min(1).max(1_000).default(5),
  /** How long an open circuit refuses calls before it lets one trial call through. */
  breakerCooldownMs: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
});
export type LlmConfig = z.infer<typeof LlmConfig>;

/**
 * ASKBUS_LLM_PROVIDER=local|openai|anthropic, ASKBUS_LLM_BASE_URL, ASKBUS_LLM_API_KEY,
 * ASKBUS_LLM_API_VERSION (Azure), ASKBUS_LLM_MODEL_LOW/HIGH, ASKBUS_LLM_JSON_MODE,
 * ASKBUS_LLM_CONCURRENCY, ASKBUS_LLM_TIMEOUT_MS, ASKBUS_LLM_RETRIES (per call),
 * ASKBUS_LLM_RETRY_BUDGET (per query), ASKBUS_LLM_BACKOFF_MS, ASKBUS_LLM_BREAKER_FAILURES,
 * ASKBUS_LLM_BREAKER_COOLDOWN_MS.
 */
export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const v = (name: string): string | undefined => {
    const x = env[name]?.trim();
    return x ? x : undefined;
  };
  const parsed = LlmConfig.safeParse({
    provider: v('ASKBUS_LLM_PROVIDER'),
    baseURL: v('ASKBUS_LLM_BASE_URL'),
    apiKey: v('ASKBUS_LLM_API_KEY'),
    apiVersion: v('ASKBUS_LLM_API_VERSION'),
    modelLow: v('ASKBUS_LLM_MODEL_LOW'),
    modelHigh: v('ASKBUS_LLM_MODEL_HIGH'),
    jsonMode: v('ASKBUS_LLM_JSON_MODE'),
    concurrency: v('ASKBUS_LLM_CONCURRENCY'),
    timeoutMs: v('ASKBUS_LLM_TIMEOUT_MS'),
    maxRetries: v('ASKBUS_LLM_RETRIES'),
    backoffMs: v('ASKBUS_LLM_BACKOFF_MS'),
    retryBudget: v('ASKBUS_LLM_RETRY_BUDGET'),
    breakerFailures: v('ASKBUS_LLM_BREAKER_FAILURES'),
    breakerCooldownMs: v('ASKBUS_LLM_BREAKER_COOLDOWN_MS'),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`LLM configuration is invalid at ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The provider a configuration names, behind the common wrapper. */
export function createLlm(config: Partial<LlmConfig> = {}, extra: Pick<LlmOptions, 'log'> = {}): Llm {
  const c = LlmConfig.parse(config);
  const wrapper: LlmOptions = {
    concurrency: c.concurrency,
    timeoutMs: c.timeoutMs,
    maxRetries: c.maxRetries,
    backoffMs: c.backoffMs,
    retryBudget: c.retryBudget,
    breaker: { failures: c.breakerFailures, cooldownMs: c.breakerCooldownMs },
    ...extra,
  };
  const high = c.modelHigh ?? c.modelLow;
  const low = c.modelLow ?? c.modelHigh;
  switch (c.provider) {
    case 'local':
      return new Llm(new LocalAdapter(), wrapper);
    case 'openai':
      return new Llm(
        new OpenAiCompatibleAdapter({
          baseURL: c.baseURL,
          apiKey: c.apiKey ?? process.env.OPENAI_API_KEY,
          apiVersion: c.apiVersion,
          jsonMode: c.jsonMode,
          models: { low: low ?? 'gpt-4.1-mini', high: high ?? 'gpt-4.1' },
        }),
        wrapper,
      );
    case 'anthropic':
      return new Llm(
        new AnthropicAdapter({
          baseURL: c.baseURL,
          apiKey: c.apiKey ?? process.env.ANTHROPIC_API_KEY,
          models: { low: low ?? 'claude-3-5-haiku-latest', high: high ?? 'claude-3-7-sonnet-latest' },
        }),
        wrapper,
      );
  }
}

/** The provider the environment names (ASKBUS_LLM_*); the local default when none is set. */
export function llmFromEnv(env: NodeJS.ProcessEnv = process.env, extra: Pick<LlmOptions, 'log'> = {}): Llm {
  return createLlm(llmConfigFromEnv(env), extra);
}
