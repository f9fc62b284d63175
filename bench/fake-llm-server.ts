/**
 * An OpenAI-compatible chat-completions server for tests and benchmarks only (never a model):
 * POST /v1/chat/completions, non-streaming and `stream: true` (SSE chunks in OpenAI's format),
 * with injected latency per request and a request counter. Its ranking answers are computed
 * by askbus's local scorer from the items in the prompt, so benchmark results mean something.
 * The implementation lives in @askbus/llm/testing so the library's own tests can use it; the
 * tools' tasks are answered by their definitions, imported here.
 *
 *   npx tsx bench/fake-llm-server.ts --port 8089 --latency 200
 *   ASKBUS_LLM_PROVIDER=openai ASKBUS_LLM_BASE_URL=http://127.0.0.1:8089/v1 npm run up
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startFakeLlm } from '@askbus/llm/testing';
// The tools' tasks (their local answers), so this server answers the tools' prompts too.
import '@askbus/tools';
import '@askbus/tool-compare/task';
import '@askbus/tool-ensemble/task';
import '@askbus/tool-recipe/task';

export { startFakeLlm, type FakeLlm, type FakeLlmOptions, type FakeFault } from '@askbus/llm/testing';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8089' },
      latency: { type: 'string', default: '200' },
    },
  });
  const fake = await startFakeLlm({ port: Number(values.port), latencyMs: Number(values.latency) });
  console.log(
    `fake OpenAI-compatible LLM on ${fake.baseURL} (latency ${fake.latencyMs} ms); Ctrl-C stops it`,
  );
  const stop = (): void => {
    console.log(`served ${fake.requests} requests`);
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
