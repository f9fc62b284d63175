import OpenAI from 'openai';
import { normalize, type EmbeddingProvider } from './provider';

export interface OpenAIEmbeddingsOptions {
  /** Any OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (default: OPENAI_BASE_URL or OpenAI). */
  baseURL?: string;
  apiKey?: string;
  /** e.g. text-embedding-3-small */
  model: string;
  /** Vector length the model returns (asked for when the model supports `dimensions`). */
  dimensions: number;
  /** Ask the endpoint for `dimensions` (OpenAI's text-embedding-3 models can shorten vectors). */
  requestDimensions?: boolean;
  /** Texts per request (default 96). */
  batchSize?: number;
  /** Retries of a failed request, with exponential backoff (default 3). */
  maxRetries?: number;
  timeoutMs?: number;
  /** Longest text sent, in characters (longer ones are cut). */
  maxChars?: number;
  fetch?: typeof fetch;
}

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint, in batches, with retries on
 * rate limits, server errors and network failures (the SDK's own backoff honours Retry-After).
 * Vectors are normalized to unit length so cosine is a dot product everywhere.
 */
export class OpenAIEmbeddings implements EmbeddingProvider {
  readonly id: string;
  readonly dimensions: number;
  private readonly client: OpenAI;
  private readonly batchSize: number;
  private readonly maxChars: number;

  constructor(private readonly opts: OpenAIEmbeddingsOptions) {
    this.dimensions = opts.dimensions;
    this.batchSize = opts.batchSize ?? 96;
    this.maxChars = opts.maxChars ?? 8_000;
    this.client = new OpenAI({
      apiKey: opts.apiKey ?? process.env.OPENAI_API_KEY ?? 'none',
      ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
      maxRetries: opts.maxRetries ?? 3,
      timeout: opts.timeoutMs ?? 60_000,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    this.id = `openai/${opts.baseURL ?? 'default'}/${opts.model}/d${opts.dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize).map((t) => t.slice(0, this.maxChars) || ' ');
      const res = await this.client.embeddings.create({
        model: this.opts.model,
        input: batch,
        encoding_format: 'float',
        ...(this.opts.requestDimensions ? { dimensions: this.dimensions } : {}),
      });
      const data = [...res.data].sort((a, b) => a.index - b.index);
      if (data.length !== batch.length)
        throw new Error(`embeddings: sent ${batch.length} texts, got ${data.length} vectors`);
      for (const d of data) {
        if (d.embedding.length !== this.dimensions) {
          throw new Error(`embeddings: expected ${this.dimensions} dimensions, got ${d.embedding.length}`);
        }
        out.push(normalize([...d.embedding]));
      }
    }
    return out;
  }
}

/**
 * The provider the configuration names: ASKBUS_EMBEDDINGS=openai with ASKBUS_EMBEDDINGS_MODEL,
 * ASKBUS_EMBEDDINGS_DIMENSIONS, OPENAI_BASE_URL, OPENAI_API_KEY; anything else (default) is
 * undefined, meaning the local model.
 */
export function embeddingsFromEnv(env: NodeJS.ProcessEnv = process.env): EmbeddingProvider | undefined {
  if (env.ASKBUS_EMBEDDINGS !== 'openai') return undefined;
  const model = env.ASKBUS_EMBEDDINGS_MODEL || 'text-embedding-3-small';
  const dimensions = Number(env.ASKBUS_EMBEDDINGS_DIMENSIONS || 1536);
  return new OpenAIEmbeddings({
    model,
    dimensions,
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
    ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
  });
}
