import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { JSONSchemaFaker } from 'json-schema-faker';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { hashToInt } from '../random.js';

/**
 * The local text model: deterministic answers derived from the prompt. Plain requests get a few
 * sentences built from the prompt's own key words; requests with a JSON Schema get JSON that
 * validates against it (fake values from json-schema-faker, free-text strings from the prompt).
 */
export interface Completion {
  text: string;
  /** True when `maxTokens` cut the answer short. */
  truncated: boolean;
  /** The stop sequence the answer ended at (left out of `text`), when one did. */
  stoppedAt?: string;
  inputTokens: number;
  outputTokens: number;
}

export interface CompletionRequest {
  /** Everything the model reads: system text and messages, in order. The answer depends on all of it. */
  prompt: string;
  /** What the answer is about: the last user message. */
  focus: string;
  /** A JSON Schema the answer must satisfy, or `{}` for "any JSON object". */
  jsonSchema?: Record<string, unknown>;
  maxTokens?: number;
  /** Sequences the answer stops before, as the public protocols' `stop` and `stop_sequences`. */
  stop?: readonly string[];
}

const STOP_WORDS = new Set(
  'a an the and or but of to in on at for with from by about as is are was were be been this that these those it its into over under your you we our they their write give make create using use please some any each per than then there here what which who how why when where very more most less also only just not no yes can will would should could may might must do does did has have had i me my'.split(
    ' ',
  ),
);

export const approximateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function keywords(prompt: string): string[] {
  const seen = new Set<string>();
  for (const word of prompt.toLowerCase().match(/[\p{L}][\p{L}\p{N}-]{2,}/gu) ?? []) {
    if (!STOP_WORDS.has(word)) seen.add(word);
  }
  return [...seen];
}

function seededRandom(seed: number): () => number {
  const generator = xoroshiro128plus(seed);
  return () => uniformFloat64(generator);
}

const OPENERS = [
  'A cinematic view of',
  'A bright studio shot of',
  'An aerial photograph of',
  'A minimal poster of',
  'A warm, golden-hour scene of',
  'A close-up detail of',
  'A playful illustration of',
  'A wide hero image of',
];
const CLOSERS = [
  'in soft natural light',
  'with a clean, uncluttered background',
  'in muted earth tones with one electric accent',
  'shot on a 35 mm lens',
  'with gentle depth of field',
  'in crisp morning air',
  'framed for a 16:9 banner',
  'with bold negative space',
];

/** A sentence about the prompt's key words; `salt` varies it between siblings. */
function phrase(words: string[], random: () => number, salt: number): string {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length) % list.length]!;
  const focus =
    words.length === 0
      ? 'the subject'
      : Array.from({ length: Math.min(3, words.length) }, (_, i) => words[(salt + i * 2) % words.length]).join(' ');
  return `${pick(OPENERS)} ${focus} ${pick(CLOSERS)}`;
}

function fitLength(text: string, schema: Record<string, unknown>): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let out = text;
  while (out.length < min) out += ` ${text}`;
  return out.length > max ? out.slice(0, max) : out;
}

/** The first number from 1 to 50 in the prompt: "write 3 prompts" asks for three items. */
function requestedCount(prompt: string): number | undefined {
  const match = /\b([1-9]|[1-4][0-9]|50)\b/.exec(prompt);
  return match ? Number(match[1]) : undefined;
}

/** Replaces faker words in free-text strings with prompt-derived phrases, and sizes string lists as asked. */
function humanise(
  schema: unknown,
  value: unknown,
  context: { words: string[]; random: () => number; count: number | undefined; salt: number; root: unknown },
): unknown {
  if (!schema || typeof schema !== 'object') return value;
  const s = resolveRef(schema as Record<string, unknown>, context.root);
  if (typeof value === 'string') {
    const constrained = 'format' in s || 'pattern' in s || 'enum' in s || 'const' in s;
    return constrained ? value : fitLength(phrase(context.words, context.random, context.salt++), s);
  }
  if (Array.isArray(value)) {
    const items =
      s.items && typeof s.items === 'object' ? resolveRef(s.items as Record<string, unknown>, context.root) : undefined;
    const min = typeof s.minItems === 'number' ? s.minItems : 0;
    const max = typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY;
    const free = items !== undefined && !('enum' in items) && !('format' in items) && !('pattern' in items);
    // A list of free text or of objects takes the count the message asks for ("write 3 prompts");
    // without one, a list the schema leaves unbounded keeps to a handful, as a model's answer would.
    const length =
      context.count !== undefined && free && (items.type === 'string' || items.type === 'object')
        ? Math.min(max, Math.max(min, context.count))
        : Math.min(value.length, Math.max(min, Math.min(max, 5)));
    if (length === value.length) return value.map((item) => humanise(items, item, context));
    const list = Array.from({ length }, (_, i) =>
      items?.type === 'string' ? '' : value[i % Math.max(1, value.length)],
    );
    return list.map((item) => humanise(items, item, context));
  }
  if (value && typeof value === 'object') {
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, humanise(properties[k], v, context)]));
  }
  return value;
}

/**
 * A schema with a local `$ref` (`#/$defs/Item`, as Zod and Pydantic write reused types) replaced
 * by what it points at, its own other keywords kept; any other schema as it is.
 */
function resolveRef(schema: Record<string, unknown>, root: unknown, depth = 0): Record<string, unknown> {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#') || depth > 20) return schema;
  let target: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean))
    target =
      target && typeof target === 'object'
        ? (target as Record<string, unknown>)[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')]
        : undefined;
  if (!target || typeof target !== 'object') return schema;
  const { $ref: _ref, ...rest } = schema;
  return resolveRef({ ...(target as Record<string, unknown>), ...rest }, root, depth + 1);
}

const ajv = new Ajv({ strict: false, allErrors: false });
addFormats.default(ajv);

export function complete(request: CompletionRequest): Completion {
  const seed = hashToInt(request.prompt + JSON.stringify(request.jsonSchema ?? null));
  const random = seededRandom(seed);
  const words = keywords(request.focus);
  const text = request.jsonSchema
    ? JSON.stringify(fakeJson(request.jsonSchema, request.focus, words, seed))
    : prose(words, random);
  const inputTokens = approximateTokens(request.prompt);
  // JSON is never cut, by a stop sequence or a token limit: a truncated document would be worse than a long one.
  const stop = request.jsonSchema ? undefined : firstStop(text, request.stop ?? []);
  if (stop) {
    const kept = text.slice(0, stop.at);
    if (request.maxTokens === undefined || approximateTokens(kept) <= request.maxTokens)
      return {
        text: kept,
        truncated: false,
        stoppedAt: stop.sequence,
        inputTokens,
        outputTokens: approximateTokens(kept),
      };
  }
  const fullTokens = approximateTokens(text);
  if (!request.jsonSchema && request.maxTokens !== undefined && fullTokens > request.maxTokens) {
    return {
      text: text.slice(0, request.maxTokens * 4),
      truncated: true,
      inputTokens,
      outputTokens: request.maxTokens,
    };
  }
  return { text, truncated: false, inputTokens, outputTokens: fullTokens };
}

/** Where the earliest of `sequences` begins in `text`, and which it is. */
function firstStop(text: string, sequences: readonly string[]): { at: number; sequence: string } | undefined {
  let found: { at: number; sequence: string } | undefined;
  for (const sequence of sequences) {
    const at = sequence.length > 0 ? text.indexOf(sequence) : -1;
    if (at >= 0 && (found === undefined || at < found.at)) found = { at, sequence };
  }
  return found;
}

function prose(words: string[], random: () => number): string {
  const sentences = Array.from({ length: 3 }, (_, i) => `${phrase(words, random, i)}.`);
  return `${sentences.join(' ')}${words.length ? ` Key points: ${words.slice(0, 6).join(', ')}.` : ''}`;
}

function fakeJson(schema: Record<string, unknown>, prompt: string, words: string[], seed: number): unknown {
  const validate = ajv.compile(schema);
  let fallback: unknown = {};
  for (let attempt = 0; attempt < 5; attempt++) {
    JSONSchemaFaker.option({
      random: seededRandom(seed + attempt),
      alwaysFakeOptionals: false,
      optionalsProbability: 0.5,
      maxItems: 5,
      failOnInvalidTypes: false,
      failOnInvalidFormat: false,
    });
    const raw = JSONSchemaFaker.generate(schema as never);
    const shaped = humanise(schema, raw, {
      words,
      random: seededRandom(seed + attempt),
      count: requestedCount(prompt),
      salt: 0,
      root: schema,
    });
    if (validate(shaped)) return shaped;
    if (validate(raw)) fallback = raw;
  }
  return fallback;
}
