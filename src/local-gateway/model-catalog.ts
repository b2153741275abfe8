import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaPriceRule, type PriceRule } from '../model-schemas/prices.js';
import { packageRoot } from '../package-root.js';

/** A model the gateway serves, read from its bundled schema file in `schemas/models/`. */
export interface ServedModel {
  slug: string;
  type: 'text-to-image' | 'image-to-image' | 'text-to-video' | 'image-to-video' | 'video-to-video';
  title: string;
  description: string;
  docsUrl: string;
  /** The JSON Schema of the request body, exactly as the file holds it. */
  schema: Record<string, unknown>;
  examples: unknown[];
  /** How the model is charged: the schema's `x-price`, the same rule the client estimates with. */
  price: PriceRule;
}

interface SchemaFile {
  title: string;
  description: string;
  'x-model': { slug: string; type: ServedModel['type']; docs_url: string };
  examples?: unknown[];
}

/** Loads every `schemas/models/*.json`; the gateway, the client and the analyzer all read these same files. */
export function loadServedModels(): Map<string, ServedModel> {
  const folder = join(packageRoot(), 'schemas', 'models');
  const models = new Map<string, ServedModel>();
  for (const name of readdirSync(folder)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const schema = JSON.parse(readFileSync(join(folder, name), 'utf8')) as SchemaFile & Record<string, unknown>;
    const meta = schema['x-model'];
    const price = schemaPriceRule(schema);
    if (!price) throw new Error(`Internal error: schemas/models/${name} has no x-price`);
    models.set(meta.slug, {
      slug: meta.slug,
      type: meta.type,
      title: schema.title,
      description: schema.description,
      docsUrl: meta.docs_url,
      schema,
      examples: schema.examples ?? [],
      price,
    });
  }
  return models;
}
