import Anthropic from '@anthropic-ai/sdk';
import { withJsonInstructions } from './openai';
import type { AdapterRequest, LlmAdapter, Tier, Usage } from './types';

export interface AnthropicOptions {
  apiKey?: string;
  baseURL?: string;
  models: Record<Tier, string>;
  temperature?: number;
}

/** Claude through the official SDK; JSON answers by instructions, parsed by the wrapper. */
export class AnthropicAdapter implements LlmAdapter {
  readonly name = 'anthropic';
  private readonly client: Anthropic;

  constructor(private readonly opts: AnthropicOptions) {
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      baseURL: opts.baseURL,
      maxRetries: 0,
      timeout: 600_000,
    });
  }

  modelFor(tier: Tier): string {
    return this.opts.models[tier];
  }

  private body(req: AdapterRequest) {
    const messages = withJsonInstructions(req);
    const system = messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    return {
      model: this.opts.models[req.tier],
      max_tokens: req.maxTokens,
      temperature: this.opts.temperature ?? 0,
      ...(system ? { system } : {}),
      messages: messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
    };
  }

  async complete(req: AdapterRequest): Promise<{ text: string; usage?: Usage }> {
    const res = await this.client.messages.create(
      { ...this.body(req), stream: false },
      { signal: req.signal },
    );
    const text = res.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return { text, usage: { tokensIn: res.usage.input_tokens, tokensOut: res.usage.output_tokens } };
  }

  async *stream(req: AdapterRequest): AsyncGenerator<{ delta?: string; usage?: Usage }> {
    const events = await this.client.messages.create(
      { ...this.body(req), stream: true },
      { signal: req.signal },
    );
    let tokensIn = 0;
    for await (const ev of events) {
      if (ev.type === 'message_start') tokensIn = ev.message.usage.input_tokens;
      else if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta')
        yield { delta: ev.delta.text };
      else if (ev.type === 'message_delta') yield { usage: { tokensIn, tokensOut: ev.usage.output_tokens } };
    }
  }
}
