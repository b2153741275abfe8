import type { Command } from 'commander';
import { MODEL_SLUG } from '../model-schemas/bundled.js';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { GatewayRefusal, UsageError } from './errors.js';
import { printError, printJson, printLine, printTable } from './output.js';
import { schemaCacheDir } from './pipeline-home.js';
import { unwrap } from './unwrap.js';

const MODEL_TYPES = ['text-to-image', 'image-to-image', 'text-to-video', 'image-to-video', 'video-to-video'];

type Property = {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  description?: string;
  pattern?: string;
  items?: Property;
};

function constraints(property: Property): string {
  const parts: string[] = [];
  if (property.enum) parts.push(property.enum.map(String).join(' | '));
  if (property.minimum !== undefined || property.maximum !== undefined)
    parts.push(`${property.minimum ?? ''}..${property.maximum ?? ''}`);
  if (property.minLength !== undefined || property.maxLength !== undefined)
    parts.push(`${property.minLength ?? 0}..${property.maxLength ?? ''} chars`);
  if (property.minItems !== undefined || property.maxItems !== undefined)
    parts.push(`${property.minItems ?? 0}..${property.maxItems ?? ''} items`);
  if (property.items?.enum) parts.push(`each ${property.items.enum.map(String).join(' | ')}`);
  if (property.pattern && property.description) parts.push(property.description);
  return parts.join(', ');
}

export function registerModelsCommand(program: Command): void {
  const models = program.command('models').description("The gateway's active models and their input schemas.");

  addConnectionOptions(models.command('list').description('List the active models.'))
    .option('--type <type>', `only models of this type (${MODEL_TYPES.join(', ')})`)
    .option('--json', 'print JSON')
    .action(async (flags: ConnectionFlags & { type?: string; json?: boolean }) => {
      if (flags.type && !MODEL_TYPES.includes(flags.type))
        throw new UsageError(`--type must be one of ${MODEL_TYPES.join(', ')}, got ${JSON.stringify(flags.type)}`);
      await withConnection(flags, async ({ client }) => {
        const list = unwrap(await client.models()).filter((m) => !flags.type || m.type === flags.type);
        if (flags.json)
          return printJson(
            list.map((m) => ({
              slug: m.slug,
              type: m.type,
              docs_url: m.docsUrl ?? null,
              description: m.description ?? null,
            })),
          );
        if (list.length === 0)
          return printLine(`the gateway has no model${flags.type ? ` of type ${flags.type}` : ''}`);
        printTable(
          ['SLUG', 'TYPE', 'DESCRIPTION'],
          list.map((m) => [m.slug, m.type, m.description]),
        );
      });
    });

  addConnectionOptions(
    models
      .command('schema')
      .description('Show the input fields of a model: live from the gateway, else cached, else bundled.')
      .argument('<slug>', 'provider/model_id'),
  )
    .option('--json', 'print the JSON Schema')
    .action(async (slug: string, flags: ConnectionFlags & { json?: boolean }) => {
      if (!MODEL_SLUG.test(slug))
        throw new UsageError(`a model slug has the form provider/model_id, got ${JSON.stringify(slug)}`);
      await withConnection(flags, async ({ client, clock }) => {
        const { CachedSchemaSource } = await import('../gateway/schema-source.js');
        // Asked of the gateway every time (a cached copy of any age is taken only when it cannot
        // answer): this command is how a user sees, and refreshes, the schema a run will check.
        const source = new CachedSchemaSource(client, schemaCacheDir(), clock, 0);
        const found = await source.get(slug);
        if (!found)
          throw new GatewayRefusal({
            reason: 'not-found',
            status: 404,
            category: 'Not found',
            detail: slug,
            message: `no schema for model ${slug}: the gateway has none and none is bundled`,
            retryable: false,
            outcomeUnknown: false,
          });
        if (found.origin !== 'live')
          printError(
            `(the gateway's schema could not be read; showing the ${found.origin === 'cache' ? 'cached' : found.origin} copy)`,
          );
        if (flags.json) return printJson(found.schema);
        const properties = (found.schema.properties ?? {}) as Record<string, Property>;
        const required = new Set((found.schema.required as string[] | undefined) ?? []);
        const { mediaFields } = await import('../model-schemas/validate.js');
        const media = new Map(mediaFields(found.schema).map((m) => [m.field, m.media]));
        printTable(
          ['FIELD', 'TYPE', 'REQUIRED', 'ALLOWED', 'DEFAULT'],
          Object.entries(properties).map(([name, p]) => [
            name,
            `${p.type === 'array' ? `list of ${p.items?.type ?? 'any'}` : (p.type ?? 'any')}${media.has(name) ? ` (${media.get(name)} URL or local file)` : ''}`,
            required.has(name) ? 'yes' : '',
            constraints(p),
            p.default === undefined ? '' : JSON.stringify(p.default),
          ]),
        );
      });
    });
}
