export { a2aPlugin } from './plugin';
export type { A2aOptions, A2aPluginOptions, A2aInternals } from './plugin';
export { buildCard, CARD_PATH, JSONRPC_PATH, REST_PATH, SKILL_DEFS } from './card';
export { AskExecutor, readMessage } from './executor';
export { KvTaskStore, KvPushStore, TASKS_BUCKET, PUSH_BUCKET } from './store';
export {
  GuardedPushSender,
  checkWebhookUrl,
  isPrivateAddress,
  signature,
  SIGNATURE_HEADER,
  TOKEN_HEADER,
} from './push';
export type { PushOptions, DeliveryReport } from './push';
