import { describe, expect, it } from 'vitest';
import { ancestry } from './schema-types';
import { loadTools, parseToolsXml, ToolsConfigError, toolsFor } from './tools-xml';

const tool = (name: string, extra = '') => `
      <Tool name="${name}" enabled="true">
        <method>code</method>
        <handler>details</handler>
        <example>tell me about X</example>
        <prompt>Score whether the query asks about ${name}.</prompt>
        <returnStruc>{"score": "integer", "item_name": "string"}</returnStruc>${extra}
      </Tool>`;
const file = (body: string) => `<Tools>\n  <Site id="default">\n${body}\n  </Site>\n</Tools>\n`;

function rejects(xml: string, handlers?: string[]): ToolsConfigError {
  try {
    parseToolsXml(xml, 'bad.xml', handlers ? { handlers } : {});
  } catch (err) {
    expect(err).toBeInstanceOf(ToolsConfigError);
    return err as ToolsConfigError;
  }
  throw new Error('accepted a bad file');
}

describe('schema.org hierarchy', () => {
  it('chains real ancestors to Thing', () => {
    expect(ancestry('Movie')).toEqual(['Movie', 'CreativeWork', 'Thing']);
    expect(ancestry('Car')).toEqual(['Car', 'Vehicle', 'Product', 'Thing']);
    expect(ancestry('Recipe')).toEqual(['Recipe', 'HowTo', 'CreativeWork', 'Thing']);
    expect(ancestry('Restaurant')).toEqual([
      'Restaurant',
      'FoodEstablishment',
      'LocalBusiness',
      'Organization',
      'Thing',
    ]);
    expect(ancestry('Gizmo')).toEqual(['Gizmo', 'Thing']);
    expect(ancestry('Item')).toEqual(['Thing']);
    expect(ancestry('constructor')).toEqual(['constructor', 'Thing']);
  });
});

describe('config/tools.xml', () => {
  it('loads and gives each type its inherited tools', () => {
    const config = loadTools();
    expect(toolsFor(config, 'movies', 'Movie').map((t) => t.name)).toEqual([
      'search',
      'details',
      'compare',
      'ensemble',
    ]);
    const recipe = toolsFor(config, 'recipes', 'Recipe');
    expect(recipe.map((t) => t.name)).toContain('recipe_substitutions');
    // Recipe's own details replaces Thing's.
    expect(recipe.find((t) => t.name === 'details')?.type).toBe('Recipe');
    expect(toolsFor(config, 'all', 'Thing').map((t) => t.name)).toEqual(['search', 'who']);
  });

  it('lets a more specific type override and disable an inherited tool', () => {
    const xml = file(
      `    <Thing>${tool('details')}${tool('compare')}\n    </Thing>\n    <Movie>${tool('compare').replace('enabled="true"', 'enabled="false"')}${tool('details').replace('about details', 'about movie details')}\n    </Movie>`,
    );
    const tools = toolsFor(parseToolsXml(xml), 'movies', 'Movie');
    expect(tools.map((t) => `${t.name}@${t.type}`)).toEqual(['details@Movie']);
  });
});

describe('a bad tools file is rejected with the line and the reason', () => {
  it('malformed XML', () => {
    const e = rejects('<Tools>\n  <Site id="default">\n    <Thing>\n  </Site>\n</Tools>');
    expect(e.line).toBe(4);
    expect(e.message).toMatch(/^bad\.xml:4: /);
  });
  it('unknown schema type', () => {
    const e = rejects(file(`    <Moviee>${tool('details')}\n    </Moviee>`));
    expect(e.line).toBe(3);
    expect(e.reason).toMatch(/Moviee.*not a known schema\.org type/);
  });
  it('tool without examples', () => {
    const e = rejects(
      file(`    <Thing>${tool('details').replace(/<example>.*<\/example>/, '')}\n    </Thing>`),
    );
    expect(e.line).toBe(4);
    expect(e.reason).toMatch(/example/);
  });
  it('returnStruc that is not JSON, or has no score', () => {
    expect(
      rejects(file(`    <Thing>${tool('details').replace('"score": "integer", ', '')}\n    </Thing>`)).reason,
    ).toMatch(/score/);
    expect(
      rejects(file(`    <Thing>${tool('details').replace('{"score"', '{score')}\n    </Thing>`)).reason,
    ).toMatch(/not JSON/);
  });
  it('unknown handler, bad name, missing handler', () => {
    expect(
      rejects(file(`    <Thing>${tool('details').replace('>details<', '>nope<')}\n    </Thing>`), ['details'])
        .reason,
    ).toMatch(/unknown handler "nope"/);
    // Without a list of handlers any well-formed name parses; the system checks it is declared.
    expect(
      rejects(file(`    <Thing>${tool('details').replace('>details<', '>No Pe<')}\n    </Thing>`)).reason,
    ).toMatch(/handler name/);
    expect(rejects(file(`    <Thing>${tool('Bad Name')}\n    </Thing>`)).reason).toMatch(/tool name/);
    expect(
      rejects(file(`    <Thing>${tool('details').replace('<handler>details</handler>', '')}\n    </Thing>`))
        .reason,
    ).toMatch(/handler/);
  });
  it('no Tools root, no Site, bad enabled', () => {
    expect(rejects('<Config/>').reason).toMatch(/<Tools>/);
    expect(rejects('<Tools></Tools>').reason).toMatch(/no <Site>/);
    expect(
      rejects(file(`    <Thing>${tool('details').replace('"true"', '"yes"')}\n    </Thing>`)).reason,
    ).toMatch(/enabled/);
  });
});
