import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import { ToolHandlerName } from '@askbus/contracts';
import { ancestry, canonicalType, isKnownType } from './schema-types';

/** config/tools.xml of this repository. */
export const DEFAULT_TOOLS_PATH = fileURLToPath(new URL('../../../config/tools.xml', import.meta.url));

/** A bad tools file: where (line, from 1) and why. */
export class ToolsConfigError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${source}:${line}: ${reason}`);
    this.name = 'ToolsConfigError';
  }
}

const Name = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a tool name is lower case letters, digits and _');

/** The JSON an LLM fills in for a tool: field → description of the value; always a score. */
const ReturnStruc = z
  .string()
  .transform((s, ctx) => {
    try {
      return JSON.parse(s) as unknown;
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `returnStruc is not JSON (${(err as Error).message})` });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(z.string(), z.unknown())
      .refine((r) => 'score' in r, { message: 'returnStruc must have a "score" field' }),
  );

export const ToolDef = z
  .object({
    name: Name,
    enabled: z.boolean(),
    method: z.enum(['builtin', 'code', 'extension']),
    handler: ToolHandlerName.optional(),
    examples: z.array(z.string().min(1)).min(1, 'a tool needs at least one <example>'),
    prompt: z.string().min(10, 'a tool needs a <prompt>'),
    returnStruc: ReturnStruc,
  })
  .refine((t) => t.method === 'builtin' || t.handler !== undefined, {
    message: 'a tool that is not builtin needs a <handler>',
    path: ['handler'],
  });
export type ToolDef = z.infer<typeof ToolDef> & { line: number; type: string };

export interface ToolsConfig {
  source: string;
  /** site id → schema type → tools declared for that type. */
  sites: Map<string, Map<string, ToolDef[]>>;
}

export interface ParseOptions {
  /**
   * Handlers a non-builtin tool may name (default: any well-formed name; the services that
   * declare them are checked where the whole system is known, see @askbus/service checkTools).
   */
  handlers?: readonly string[];
}

const META = XMLParser.getMetaDataSymbol();

/** Parses and validates tools.xml text; throws ToolsConfigError with the line and the reason. */
export function parseToolsXml(xml: string, source = 'tools.xml', opts: ParseOptions = {}): ToolsConfig {
  const handlers = opts.handlers ? new Set(opts.handlers) : undefined;
  const syntax = XMLValidator.validate(xml);
  if (syntax !== true) throw new ToolsConfigError(source, syntax.err.line, syntax.err.msg);
  const lineAt = (node: unknown): number => {
    const idx = (node as Record<symbol, { startIndex?: number } | undefined>)[META as symbol]?.startIndex;
    if (idx === undefined) return 1;
    let line = 1;
    for (let i = 0; i < idx && i < xml.length; i++) if (xml.charCodeAt(i) === 10) line++;
    return line;
  };
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    captureMetaData: true,
    trimValues: true,
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name, jpath, _leaf, isAttribute) =>
      !isAttribute &&
      (name === 'Site' || name === 'Tool' || name === 'example' || String(jpath).split('.').length === 3),
  });
  const doc = parser.parse(xml) as Record<string, unknown>;
  if (!('Tools' in doc)) throw new ToolsConfigError(source, 1, 'the root element must be <Tools>');
  const root = (typeof doc.Tools === 'object' && doc.Tools !== null ? doc.Tools : {}) as Record<
    string,
    unknown
  >;
  if (Object.keys(root).length === 0) throw new ToolsConfigError(source, 1, '<Tools> has no <Site>');
  if (!root || typeof root !== 'object')
    throw new ToolsConfigError(source, 1, 'the root element must be <Tools>');
  const sites = new Map<string, Map<string, ToolDef[]>>();
  const siteNodes = (root.Site ?? []) as Record<string, unknown>[];
  if (siteNodes.length === 0) throw new ToolsConfigError(source, lineAt(root), '<Tools> has no <Site>');
  for (const site of siteNodes) {
    const id = site['@_id'];
    if (typeof id !== 'string' || id === '')
      throw new ToolsConfigError(source, lineAt(site), '<Site> needs an id');
    if (sites.has(id)) throw new ToolsConfigError(source, lineAt(site), `site "${id}" is declared twice`);
    const types = new Map<string, ToolDef[]>();
    sites.set(id, types);
    for (const [key, value] of Object.entries(site)) {
      if (key.startsWith('@_')) continue;
      for (const typeNode of value as Record<string, unknown>[]) {
        const line = lineAt(typeNode);
        if (!isKnownType(key))
          throw new ToolsConfigError(source, line, `<${key}> is not a known schema.org type`);
        const type = canonicalType(key);
        const tools = types.get(type) ?? [];
        types.set(type, tools);
        if (typeof typeNode !== 'object' || typeNode === null) {
          throw new ToolsConfigError(source, line, `<${key}> holds no <Tool>`);
        }
        for (const [child, v] of Object.entries(typeNode)) {
          if (child !== 'Tool')
            throw new ToolsConfigError(source, line, `<${key}> may hold only <Tool>, not <${child}>`);
          for (const toolNode of v as Record<string, unknown>[]) {
            tools.push(readTool(toolNode, lineAt(toolNode), type));
          }
        }
      }
    }
  }
  return { source, sites };

  function readTool(node: Record<string, unknown>, line: number, type: string): ToolDef {
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const enabled = text(node['@_enabled']) ?? 'true';
    if (enabled !== 'true' && enabled !== 'false') {
      throw new ToolsConfigError(source, line, `enabled must be "true" or "false", not "${enabled}"`);
    }
    const raw = {
      name: text(node['@_name']),
      enabled: enabled === 'true',
      method: text(node.method) ?? 'code',
      handler: text(node.handler),
      examples: ((node.example ?? []) as unknown[]).map((e) => (typeof e === 'string' ? e : '')),
      prompt: text(node.prompt) ?? '',
      returnStruc: text(node.returnStruc) ?? '',
    };
    const parsed = ToolDef.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.length ? `${issue.path.join('.')}: ` : '';
      throw new ToolsConfigError(source, line, `tool "${raw.name ?? '?'}": ${field}${issue.message}`);
    }
    const tool = parsed.data;
    if (tool.handler !== undefined && handlers && !handlers.has(tool.handler)) {
      throw new ToolsConfigError(source, line, `tool "${tool.name}": unknown handler "${tool.handler}"`);
    }
    const names = new Set(Object.keys(node).filter((k) => !k.startsWith('@_')));
    for (const k of names) {
      if (!['method', 'handler', 'example', 'prompt', 'returnStruc', 'argument', 'path'].includes(k)) {
        throw new ToolsConfigError(source, line, `tool "${tool.name}": unexpected <${k}>`);
      }
    }
    return { ...tool, line, type };
  }
}

/** Reads and validates a tools file (ASKBUS_TOOLS, else config/tools.xml). */
export function loadTools(
  path = process.env.ASKBUS_TOOLS || DEFAULT_TOOLS_PATH,
  opts: ParseOptions = {},
): ToolsConfig {
  return parseToolsXml(readFileSync(path, 'utf8'), path, opts);
}

/**
 * The enabled tools for an item type on a site (else the `default` site): the type's own and its
 * ancestors', a more specific type's tool replacing an ancestor's of the same name.
 */
export function toolsFor(config: ToolsConfig, site: string, itemType: string): ToolDef[] {
  const types = config.sites.get(site) ?? config.sites.get('default');
  if (!types) return [];
  const byName = new Map<string, ToolDef>();
  for (const t of ancestry(itemType)) {
    for (const tool of types.get(t) ?? []) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  }
  return [...byName.values()].filter((t) => t.enabled);
}

/** The fields a tool's LLM answer carries besides the score. */
export function paramNames(tool: ToolDef): string[] {
  return Object.keys(tool.returnStruc).filter((k) => k !== 'score');
}

/** Every handler the tools of a config name (a service must declare each one). */
export function handlersOf(config: ToolsConfig): string[] {
  const out = new Set<string>();
  for (const types of config.sites.values())
    for (const tools of types.values())
      for (const t of tools) if (t.handler !== undefined) out.add(t.handler);
  return [...out];
}
