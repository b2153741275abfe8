import { err, ok, type Result } from '../result.js';
import { MODEL_SLUG, type JsonSchema } from './bundled.js';

/**
 * How a model is charged: `usd` per unit, and the units a request uses. Units start at 1, are
 * multiplied by the value of each `multiply` field (the schema's default when the request leaves
 * it out), and by each `factors` entry whose field has that value: a number, or the name of a
 * numeric field whose value is the multiplier. The bundled schemas carry it as `x-price`; the
 * local gateway charges with it and the client estimates with it, so the two cannot disagree.
 *
 * `{ "usd": 0.03, "unit": "image", "multiply": ["n"], "factors": { "resolution": { "2k": 2 } } }`
 */
export interface PriceRule {
  usd: number;
  unit: string;
  multiply?: string[];
  factors?: Record<string, Record<string, number | string>>;
}

/** The price rule of each model slug; `undefined` means the price is unknown (never zero). */
export type PriceBook = (slug: string) => PriceRule | undefined;

type Input = Record<string, unknown>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A price rule from a schema's `x-price` or a price file. A bare number is a price per task (a
 * unit is one request) for a model without a bundled rule, and replaces `usd` of one that has it.
 */
export function parsePriceRule(value: unknown, where: string, base?: PriceRule): Result<PriceRule, string> {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return err(`${where} must be a price of at least 0 USD, got ${value}`);
    return ok(base ? { ...base, usd: value } : { usd: value, unit: 'task' });
  }
  if (!isObject(value)) return err(`${where} must be a number (USD) or a rule { usd, unit, multiply, factors }`);
  const unknownKey = Object.keys(value).find((key) => !['usd', 'unit', 'multiply', 'factors'].includes(key));
  if (unknownKey) return err(`${where} has an unknown key '${unknownKey}'; a rule has usd, unit, multiply, factors`);
  const { usd, unit, multiply, factors } = value;
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0)
    return err(`${where}.usd must be a number of at least 0`);
  if (unit !== undefined && typeof unit !== 'string')
    return err(`${where}.unit must be a string such as image or second`);
  if (multiply !== undefined && !(Array.isArray(multiply) && multiply.every((f) => typeof f === 'string'))) {
    return err(`${where}.multiply must be a list of field names`);
  }
  const checkedFactors = parseFactors(factors, `${where}.factors`);
  if (!checkedFactors.ok) return checkedFactors;
  return ok({
    usd,
    unit: unit ?? 'task',
    ...(multiply ? { multiply: multiply as string[] } : {}),
    ...(checkedFactors.value ? { factors: checkedFactors.value } : {}),
  });
}

function parseFactors(value: unknown, where: string): Result<PriceRule['factors'], string> {
  if (value === undefined) return ok(undefined);
  if (!isObject(value)) return err(`${where} must map a field to { value: multiplier }`);
  for (const [field, table] of Object.entries(value)) {
    if (!isObject(table)) return err(`${where}.${field} must map a value to a multiplier`);
    for (const [choice, factor] of Object.entries(table)) {
      const good = (typeof factor === 'number' && Number.isFinite(factor) && factor >= 0) || typeof factor === 'string';
      if (!good) return err(`${where}.${field}.${choice} must be a number of at least 0 or a field name`);
    }
  }
  return ok(value as PriceRule['factors']);
}

/** The `x-price` rule a bundled schema carries, if any. */
export function schemaPriceRule(schema: JsonSchema | undefined): PriceRule | undefined {
  if (schema === undefined) return undefined;
  // Read once per schema object: a plan prices every run of every step, 100,000 of them or more.
  if (rulesRead.has(schema)) return rulesRead.get(schema);
  const raw = schema['x-price'];
  let found: PriceRule | undefined;
  if (raw !== undefined) {
    const rule = parsePriceRule(raw, 'x-price');
    if (!rule.ok) throw new Error(`Internal error: a bundled schema's ${rule.error}`);
    found = rule.value;
  }
  rulesRead.set(schema, found);
  return found;
}

const rulesRead = new WeakMap<JsonSchema, PriceRule | undefined>();

/** A field's value, else the schema's default for it. */
function fieldValue(input: Input, schema: JsonSchema | undefined, field: string): unknown {
  if (input[field] !== undefined) return input[field];
  const properties = schema?.properties;
  return isObject(properties) && isObject(properties[field]) ? properties[field].default : undefined;
}

const numeric = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 1);

/** The units a request uses under a rule, with the schema's defaults for the fields it leaves out. */
export function unitsOf(rule: PriceRule, input: Input, schema: JsonSchema | undefined): number {
  let units = 1;
  for (const field of rule.multiply ?? []) units *= numeric(fieldValue(input, schema, field));
  for (const [field, table] of Object.entries(rule.factors ?? {})) {
    const factor = table[String(fieldValue(input, schema, field))];
    if (factor === undefined) continue;
    units *= typeof factor === 'number' ? factor : numeric(fieldValue(input, schema, factor));
  }
  return units;
}

/** USD to 4 decimals, the gateway's precision, kept as a number. */
export const roundUsd = (usd: number): number => Math.round(usd * 10_000) / 10_000;

/** What one request costs, in USD to 4 decimals. */
export function requestCost(rule: PriceRule, input: Input, schema: JsonSchema | undefined): number {
  return roundUsd((Math.round(rule.usd * 10_000) * unitsOf(rule, input, schema)) / 10_000);
}

/** `$0.0300`. */
/**
 * Dollars to four decimals, as the gateway bills; an amount that would show as `$0.0000` but is not
 * zero (a text call's price, a `--max-cost 0.00001`) shows its first significant digits instead.
 */
export const formatUsd = (usd: number): string => {
  const fixed = usd.toFixed(4);
  if (usd === 0 || Number(fixed) !== 0) return `$${fixed}`;
  const size = Math.abs(usd);
  // Two significant digits, trailing zeros dropped: 0.0000123 → 0.000012, 0.00001 → 0.00001.
  const digits = Math.min(12, 1 - Math.floor(Math.log10(size)));
  const text = size.toFixed(digits).replace(/0+$/, '');
  return text.endsWith('.') ? `$${fixed}` : `${usd < 0 ? '-' : ''}$${text}`;
};

/** Prices as a run sees them: the bundled (or cached live) schema's rule, unless a price file overrides it. */
export interface Pricing {
  rule(slug: string): PriceRule | undefined;
  /** What one request to the model costs, or `undefined` when its price is unknown. */
  cost(slug: string, input: Input): number | undefined;
  /**
   * What one request costs at most when the `open` fields' values are known only at run time: the
   * dearest of the values the schema allows them (an enum's, a number's maximum). `unbounded` names
   * the fields the schema does not bound, priced at their defaults. Undefined when the price is unknown.
   */
  dearest(slug: string, input: Input, open: readonly string[]): { usd: number; unbounded: string[] } | undefined;
}

/** The input fields a price rule reads: those it multiplies by, those with factors, and the fields a factor names. */
export function priceFields(rule: PriceRule | undefined): string[] {
  if (!rule) return [];
  const named = Object.values(rule.factors ?? {}).flatMap((table) =>
    Object.values(table).filter((factor): factor is string => typeof factor === 'string'),
  );
  return [...new Set([...(rule.multiply ?? []), ...Object.keys(rule.factors ?? {}), ...named])];
}

/**
 * The values a field may take that can matter to a price: an enum's, or a number's maximum (a
 * multiplier grows with its field). Undefined when the schema does not bound it.
 */
function valuesThatPrice(schema: JsonSchema | undefined, field: string): unknown[] | undefined {
  const properties = schema?.properties;
  const property = isObject(properties) ? properties[field] : undefined;
  if (!isObject(property)) return undefined;
  if (Array.isArray(property.enum) && property.enum.length > 0) return property.enum;
  if (typeof property.maximum === 'number') return [property.maximum];
  return undefined;
}

/** More choices than this over a request's open price fields are priced at their defaults: a plan prices every run. */
const MOST_CHOICES = 256;

function dearestCost(
  rule: PriceRule,
  input: Input,
  schema: JsonSchema | undefined,
  open: readonly string[],
): { usd: number; unbounded: string[] } {
  const unbounded: string[] = [];
  let choices: Input[] = [input];
  const fields = priceFields(rule);
  for (const field of open.filter((f) => fields.includes(f))) {
    const values = valuesThatPrice(schema, field);
    if (!values || choices.length * values.length > MOST_CHOICES) {
      unbounded.push(field);
      continue;
    }
    choices = choices.flatMap((choice) => values.map((value) => ({ ...choice, [field]: value })));
  }
  return { usd: Math.max(...choices.map((choice) => requestCost(rule, choice, schema))), unbounded };
}

/**
 * `schemaOf` gives each model's schema (its defaults price the fields a request leaves out);
 * `ruleSchemaOf`, where the rule is read when that schema has none: a live schema copied from the
 * gateway carries no `x-price`, the bundled copy does.
 */
export function pricingOf(
  schemaOf: (slug: string) => JsonSchema | undefined,
  overrides: Record<string, PriceRule> = {},
  ruleSchemaOf: (slug: string) => JsonSchema | undefined = () => undefined,
): Pricing {
  const rule = (slug: string) =>
    Object.hasOwn(overrides, slug)
      ? overrides[slug]
      : (schemaPriceRule(schemaOf(slug)) ?? schemaPriceRule(ruleSchemaOf(slug)));
  return {
    rule,
    cost(slug, input) {
      const found = rule(slug);
      return found ? requestCost(found, input, schemaOf(slug)) : undefined;
    },
    dearest(slug, input, open) {
      const found = rule(slug);
      return found ? dearestCost(found, input, schemaOf(slug), open) : undefined;
    },
  };
}

/**
 * A price file's map of model slug to rule (`--prices FILE`, `settings.prices`), checked: a bare
 * number replaces the price per unit of the model's bundled rule, or is a price per task.
 */
export function parsePriceTable(
  value: unknown,
  where: string,
  bundledRule: (slug: string) => PriceRule | undefined,
): Result<Record<string, PriceRule>, string> {
  if (!isObject(value))
    return err(`${where} must be a map of model slug to price, such as vendor-a/vendor-a-v3-t2i: 0.03`);
  const table: Record<string, PriceRule> = {};
  for (const [slug, raw] of Object.entries(value)) {
    if (!MODEL_SLUG.test(slug)) {
      return err(`${where}: '${slug}' is not a model slug (provider/model_id)`);
    }
    const rule = parsePriceRule(raw, `${where}: ${slug}`, bundledRule(slug));
    if (!rule.ok) return rule;
    table[slug] = rule.value;
  }
  return ok(table);
}
