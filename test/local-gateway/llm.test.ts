import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { http } from '../support/http.js';

const PROMPTS_SCHEMA = {
  type: 'object',
  required: ['prompts'],
  additionalProperties: false,
  properties: { prompts: { type: 'array', items: { type: 'string' } } },
};

const RICH_SCHEMA = {
  type: 'object',
  required: ['title', 'score', 'tags', 'colour', 'site'],
  properties: {
    title: { type: 'string', minLength: 10, maxLength: 40 },
    score: { type: 'integer', minimum: 1, maximum: 5 },
    tags: {
      type: 'array',
      minItems: 2,
      maxItems: 4,
      items: { type: 'string', enum: ['bike', 'solar', 'city', 'design'] },
    },
    colour: { type: 'string', pattern: '^#[0-9a-f]{6}$' },
    site: { type: 'string', format: 'uri' },
    nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
};

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);

describe('text gateway', () => {
  let gateway: LocalGateway;
  let api: ReturnType<typeof http>;
  beforeAll(async () => {
    gateway = await startLocalGateway({ seed: 11, rpm: 1000 });
    api = http(gateway);
  });
  afterAll(() => gateway.close());

  const chat = (body: Record<string, unknown>) =>
    api.post('/llm/v1/chat/completions', { model: 'vendor-x/writer-1', ...body });
  const user = (content: string) => [{ role: 'user', content }];

  describe('chat completions', () => {
    it('answers in the public Chat Completions shape, deterministically', async () => {
      const first = await chat({
        messages: [{ role: 'system', content: 'You are terse.' }, ...user('Describe golden hour photography')],
      });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        object: 'chat.completion',
        model: 'vendor-x/writer-1',
        choices: [{ index: 0, message: { role: 'assistant', content: expect.any(String) }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: expect.any(Number),
          completion_tokens: expect.any(Number),
          total_tokens: expect.any(Number),
        },
      });
      expect(first.body.id).toMatch(/^chatcmpl-/);
      expect(first.body.choices[0].message.content).toMatch(/golden/);
      const again = await chat({
        messages: [{ role: 'system', content: 'You are terse.' }, ...user('Describe golden hour photography')],
      });
      expect(again.body.choices[0].message.content).toBe(first.body.choices[0].message.content);
      const other = await chat({ messages: user('Describe sourdough bread') });
      expect(other.body.choices[0].message.content).not.toBe(first.body.choices[0].message.content);
    });

    it('answers JSON that validates against a json_schema response format, with as many items as asked', async () => {
      const answer = await chat({
        messages: user('Write 4 image prompts about solar-powered cargo bikes'),
        response_format: { type: 'json_schema', json_schema: { name: 'prompts', schema: PROMPTS_SCHEMA } },
      });
      const json = JSON.parse(answer.body.choices[0].message.content);
      expect(ajv.validate(PROMPTS_SCHEMA, json)).toBe(true);
      expect(json.prompts).toHaveLength(4);
      expect(json.prompts.join(' ')).toMatch(/cargo|solar|bikes/);
      const rich = await chat({
        messages: user('Rate this design'),
        response_format: { type: 'json_schema', json_schema: { name: 'r', schema: RICH_SCHEMA, strict: true } },
      });
      expect(ajv.validate(RICH_SCHEMA, JSON.parse(rich.body.choices[0].message.content)), ajv.errorsText()).toBe(true);
    });

    it('answers a JSON object for json_object', async () => {
      const answer = await chat({ messages: user('Give me JSON'), response_format: { type: 'json_object' } });
      expect(typeof JSON.parse(answer.body.choices[0].message.content)).toBe('object');
    });

    it('stops at max_tokens with finish_reason length', async () => {
      const answer = await chat({ messages: user('Tell me about cargo bikes in cities'), max_tokens: 5 });
      expect(answer.body.choices[0].finish_reason).toBe('length');
      expect(answer.body.usage.completion_tokens).toBe(5);
      expect(answer.body.choices[0].message.content.length).toBeLessThanOrEqual(20);
    });

    it.each([
      [
        { messages: user('x') },
        'gpt-4o',
        404,
        'Not found: model "gpt-4o" is not available; text model ids have the form provider/name',
      ],
      [{ messages: [] }, 'a/b', 400, 'Invalid parameters: messages must be a non-empty list of messages'],
      [
        { messages: user('x'), response_format: { type: 'xml' } },
        'a/b',
        400,
        'Invalid parameters: response_format.type must be one of text, json_object, json_schema (got "xml")',
      ],
      [
        {
          messages: user('x'),
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nonsense' } } },
        },
        'a/b',
        400,
        expect.stringMatching(/^Invalid parameters: the JSON Schema could not be used: /),
      ],
      [
        { messages: user('x'), stream: true },
        'a/b',
        400,
        'Invalid parameters: stream is not supported by the local gateway; send stream: false',
      ],
    ])('refuses %j with model %s', async (body, model, status, message) => {
      const answer = await api.post('/llm/v1/chat/completions', { model, ...body });
      expect(answer.status).toBe(status);
      expect(answer.body).toEqual({ code: status, message });
    });
  });

  describe('responses', () => {
    it('answers in the public Responses shape, with text.format json_schema', async () => {
      const answer = await api.post('/llm/v1/responses', {
        model: 'vendor-x/writer-1',
        instructions: 'You are an art director.',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Write 2 image prompts about cargo bikes' }] }],
        text: { format: { type: 'json_schema', name: 'prompts', schema: PROMPTS_SCHEMA } },
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        object: 'response',
        status: 'completed',
        model: 'vendor-x/writer-1',
        usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
      });
      const [message] = answer.body.output;
      expect(message).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
      expect(message.content[0].type).toBe('output_text');
      const json = JSON.parse(message.content[0].text);
      expect(ajv.validate(PROMPTS_SCHEMA, json)).toBe(true);
      expect(json.prompts).toHaveLength(2);
    });

    it('takes a plain string input and marks a cut answer incomplete', async () => {
      const answer = await api.post('/llm/v1/responses', {
        model: 'a/b',
        input: 'Tell me about tomatoes on a balcony',
        max_output_tokens: 3,
      });
      expect(answer.body.status).toBe('incomplete');
      expect(answer.body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    });

    it('answers 404 for a bare model name', async () => {
      expect((await api.post('/llm/v1/responses', { model: 'writer', input: 'x' })).status).toBe(404);
    });
  });

  describe('messages', () => {
    it.each(['/llm/v1/messages', '/llm/messages'])(
      'answers in the public Messages shape at %s, JSON from a schema in the system prompt',
      async (path) => {
        const system = `Answer with JSON that matches this schema:\n\`\`\`json\n${JSON.stringify(RICH_SCHEMA)}\n\`\`\``;
        const answer = await api.post(path, {
          model: 'vendor-y/claude-x',
          max_tokens: 500,
          system,
          messages: user('Rate the solar cargo bike design'),
        });
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({
          type: 'message',
          role: 'assistant',
          model: 'vendor-y/claude-x',
          stop_reason: 'end_turn',
          stop_sequence: null,
        });
        expect(answer.body.id).toMatch(/^msg_/);
        const json = JSON.parse(answer.body.content[0].text);
        expect(ajv.validate(RICH_SCHEMA, json), ajv.errorsText()).toBe(true);
      },
    );

    it('requires max_tokens, as the public protocol does', async () => {
      const answer = await api.post('/llm/v1/messages', { model: 'a/b', messages: user('x') });
      expect(answer.body).toEqual({ code: 400, message: 'Invalid parameters: max_tokens is required' });
    });

    it('answers plain text without a schema and stops at max_tokens', async () => {
      const answer = await api.post('/llm/v1/messages', {
        model: 'a/b',
        max_tokens: 4,
        messages: user('Tell me about composting at home'),
      });
      expect(answer.body.stop_reason).toBe('max_tokens');
      expect(answer.body.usage.output_tokens).toBe(4);
    });
  });
});
