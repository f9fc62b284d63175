/** The agent card: the skills are the gateway's tools (ask, list_sites, who). */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';

export const JSONRPC_PATH = '/a2a';
export const REST_PATH = '/a2a/rest';
export const CARD_PATH = '/.well-known/agent-card.json';
export const AUTH_SCHEME = 'bearer';

const skill = (
  s: Pick<AgentSkill, 'id' | 'name' | 'description' | 'tags' | 'examples'> & Partial<AgentSkill>,
): AgentSkill => ({
  inputModes: ['text/plain', 'application/json'],
  outputModes: ['application/json', 'text/markdown'],
  securityRequirements: [],
  ...s,
});

export const SKILL_DEFS: AgentSkill[] = [
  skill({
    id: 'ask',
    name: 'Ask the site',
    description:
      "Answers a question in plain language about the sites' schema.org data (recipes, movies, products, …) " +
      'with ranked items, streamed as they are scored. Options go in a data part: site, mode ' +
      '(list | summarize | generate), max_results, prev. The default skill; choose another with ' +
      'message metadata {"skill": "list_sites" | "who"} or a data part {"skill": …}.',
    tags: ['search', 'schema.org', 'nlweb'],
    examples: ['spicy vegetarian recipes', 'space movies from the 80s'],
  }),
  skill({
    id: 'list_sites',
    name: 'List the sites',
    description: 'Lists the loaded sites with their item counts and schema.org types.',
    tags: ['sites'],
    examples: ['which sites are loaded?'],
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['application/json', 'text/plain'],
  }),
  skill({
    id: 'who',
    name: 'Which sites can answer',
    description: 'Ranks the loaded sites by how many of their items match a question, with their best score.',
    tags: ['sites', 'routing'],
    examples: ['who knows about fast cars?'],
    outputModes: ['application/json', 'text/plain'],
  }),
];

export interface CardOptions {
  version: string;
  /** Whether a bearer token is required (declares the security scheme and the extended card). */
  auth: boolean;
  /** Serve the v0.3 names (interfaces declared for protocol version 0.3 too). */
  legacy: boolean;
  pushNotifications: boolean;
}

export function buildCard(base: string, opts: CardOptions, extended = false): AgentCard {
  const root = base.replace(/\/+$/, '');
  const versions = opts.legacy ? ['1.0', '0.3'] : ['1.0'];
  return {
    name: 'askbus',
    description:
      "A natural-language endpoint for web sites' schema.org data (NLWeb): ask a question, get ranked items.",
    supportedInterfaces: versions.flatMap((protocolVersion) => [
      { url: `${root}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion },
      { url: `${root}${REST_PATH}`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion },
    ]),
    provider: { organization: 'askbus', url: root },
    version: opts.version,
    capabilities: {
      streaming: true,
      pushNotifications: opts.pushNotifications,
      extensions: [],
      extendedAgentCard: opts.auth,
    },
    securitySchemes: opts.auth
      ? {
          [AUTH_SCHEME]: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: { description: 'The gateway token', scheme: 'Bearer', bearerFormat: '' },
            },
          },
        }
      : {},
    securityRequirements: opts.auth ? [{ schemes: { [AUTH_SCHEME]: { list: [] } } }] : [],
    defaultInputModes: ['text/plain', 'text/markdown', 'application/json'],
    defaultOutputModes: ['application/json', 'text/markdown', 'text/plain'],
    skills: extended
      ? SKILL_DEFS.map((s) => ({
          ...s,
          description: `${s.description} Tasks are kept in NATS JetStream KV and survive gateway restarts.`,
        }))
      : SKILL_DEFS,
    signatures: [],
  };
}
