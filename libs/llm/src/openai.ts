import OpenAI from 'openai';
import type { AdapterRequest, ChatMessage, LlmAdapter, Tier, Usage } from './types';

export interface OpenAiCompatibleOptions {
  /** e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama), a vLLM or llama.cpp server. */
  baseURL?: string;
  apiKey?: string;
  models: Record<Tier, string>;
  /** Azure OpenAI: `api-version` query parameter (baseURL is then …/openai/deployments/<name>). */
  apiVersion?: string;
  /**
   * How JSON answers are asked for: `json_schema` (OpenAI, Azure, vLLM, Ollama, llama.cpp),
   * `json_object`, or `none` (instructions only). The instructions are always sent too.
   */
  jsonMode?: 'json_schema' | 'json_object' | 'none';
  temperature?: number;
}

/** Any server that speaks OpenAI's chat completions, through the official SDK. */
export class OpenAiCompatibleAdapter implements LlmAdapter {
  readonly name = 'openai';
  private readonly client: OpenAI;

  constructor(private readonly opts: OpenAiCompatibleOptions) {
    this.client = new OpenAI({
      baseURL: opts.baseURL,
      apiKey: opts.apiKey || 'none',
      maxRetries: 0, // the Llm wrapper retries
      timeout: 600_000, // the Llm wrapper times out each attempt
      ...(opts.apiVersion
        ? {
            defaultQuery: { 'api-version': opts.apiVersion },
            defaultHeaders: { 'api-key': opts.apiKey ?? '' },
          }
        : {}),
    });
  }

  modelFor(tier: Tier): string {
    return this.opts.models[tier];
  }

  private body(req: AdapterRequest) {
    const mode = this.opts.jsonMode ?? 'json_schema';
    const response_format = !req.json
      ? undefined
      : mode === 'json_schema'
        ? {
            type: 'json_schema' as const,
            json_schema: { name: req.json.name, schema: req.json.schema, strict: false },
          }
        : mode === 'json_object'
          ? { type: 'json_object' as const }
          : undefined;
    return {
      model: this.opts.models[req.tier],
      messages: withJsonInstructions(req),
      max_tokens: req.maxTokens,
      temperature: this.opts.temperature ?? 0,
      ...(response_format ? { response_format } : {}),
    };
  }

  async complete(req: AdapterRequest): Promise<{ text: string; usage?: Usage }> {
    const res = await this.client.chat.completions.create(
      { ...this.body(req), stream: false },
      { signal: req.signal },
    );
    const text = res.choices[0]?.message?.content ?? '';
    return {
      text,
      usage: res.usage
        ? { tokensIn: res.usage.prompt_tokens, tokensOut: res.usage.completion_tokens }
        : undefined,
    };
  }

  async *stream(req: AdapterRequest): AsyncGenerator<{ delta?: string; usage?: Usage }> {
    const stream = await this.client.chat.completions.create(
      { ...this.body(req), stream: true, stream_options: { include_usage: true } },
      { signal: req.signal },
    );
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta?.content;
      if (delta) yield { delta };
      if (chunk.usage) {
        yield { usage: { tokensIn: chunk.usage.prompt_tokens, tokensOut: chunk.usage.completion_tokens } };
      }
    }
  }
}

/** NLWeb's instruction for JSON answers, as a system message in front of the prompt. */
export function withJsonInstructions(req: AdapterRequest): ChatMessage[] {
  if (!req.json) return req.messages;
  return [
    {
      role: 'system',
      content: `Provide a valid JSON response matching this schema: ${JSON.stringify(req.json.schema)}`,
    },
    ...req.messages,
  ];
}
