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

    it('follows $ref into $defs, as Zod and Pydantic write schemas: text from the message, as many items as asked', async () => {
      const schema = {
        type: 'object',
        required: ['shots'],
        properties: { shots: { type: 'array', items: { $ref: '#/$defs/Shot' } } },
        $defs: {
          Shot: { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' } } },
        },
      };
      const answer = await chat({
        messages: user('Write 2 shots of kites over a beach'),
        response_format: { type: 'json_schema', json_schema: { name: 'shots', schema } },
      });
      const json = JSON.parse(answer.body.choices[0].message.content);
      expect(ajv.validate(schema, json), ajv.errorsText()).toBe(true);
      expect(json.shots).toHaveLength(2);
      for (const shot of json.shots) expect(shot.prompt).toMatch(/kites|beach|shots/);
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
        { messages: user('x'), stream: 'yes' },
        'a/b',
        400,
        'Invalid parameters: stream must be true or false (got "yes")',
      ],
      [
        { messages: user('x'), stream_options: { include_usage: true } },
        'a/b',
        400,
        'Invalid parameters: stream_options is only allowed when stream is true',
      ],
      [
        { messages: user('x'), stream: true },
        'gpt-4o',
        404,
        'Not found: model "gpt-4o" is not available; text model ids have the form provider/name',
      ],
    ])('refuses %j with model %s, in the public error shape', async (body, model, status, message) => {
      const answer = await api.post('/llm/v1/chat/completions', { model, ...body });
      expect(answer.status).toBe(status);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.body).toEqual({
        error: {
          message,
          type: 'invalid_request_error',
          param: null,
          code: status === 404 ? 'not_found' : null,
        },
      });
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

  describe('streams (stream: true) on the wire', () => {
    /** The events of a `text/event-stream` body: `event:` name (if any) and the `data:` text of each. */
    const eventsOf = (text: string) =>
      text
        .split('\n\n')
        .filter(Boolean)
        .map((block) => {
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)![1]!;
          return { event, data };
        });

    it('chat: chat.completion.chunk data lines, the finish_reason, then data: [DONE]', async () => {
      const ask = { model: 'a/b', messages: user('Describe golden hour photography') };
      const whole = await api.post('/llm/v1/chat/completions', ask);
      const answer = await api.post('/llm/v1/chat/completions', { ...ask, stream: true });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const events = eventsOf(answer.text);
      expect(events.at(-1)).toEqual({ event: undefined, data: '[DONE]' });
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
      expect(new Set(chunks.map((c) => c.object))).toEqual(new Set(['chat.completion.chunk']));
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
      expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
      expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(whole.body.choices[0].message.content);
      expect(chunks.every((c) => !('usage' in c))).toBe(true);
    });

    it('responses: named events with sequence numbers, ending with response.completed', async () => {
      const answer = await api.post('/llm/v1/responses', { model: 'a/b', input: 'Tell me about kites', stream: true });
      const events = eventsOf(answer.text);
      const data = events.map((e) => JSON.parse(e.data));
      expect(events.map((e) => e.event)).toEqual(data.map((d) => d.type));
      expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
      expect(data[0]).toMatchObject({ type: 'response.created', response: { status: 'in_progress', output: [] } });
      const last = data.at(-1);
      expect(last).toMatchObject({ type: 'response.completed', response: { status: 'completed' } });
      const deltas = data.filter((d) => d.type === 'response.output_text.delta').map((d) => d.delta);
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(last.response.output_text);
    });

    it('messages: message_start … message_stop, the usage in message_delta', async () => {
      const ask = { model: 'a/b', max_tokens: 200, messages: user('Tell me about kites') };
      const whole = await api.post('/llm/messages', ask);
      const answer = await api.post('/llm/messages', { ...ask, stream: true });
      const data = eventsOf(answer.text).map((e) => JSON.parse(e.data));
      expect(data[0]).toMatchObject({ type: 'message_start', message: { content: [], stop_reason: null } });
      expect(data.at(-2)).toEqual({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: whole.body.usage.output_tokens },
      });
      expect(data.at(-1)).toEqual({ type: 'message_stop' });
      const text = data.filter((d) => d.type === 'content_block_delta').map((d) => d.delta.text);
      expect(text.join('')).toBe(whole.body.content[0].text);
    });

    it('an injected status fault refuses a stream before it starts, in the protocol error shape', async () => {
      gateway.injectFault({ kind: 'status', status: 503, route: 'POST /llm/v1/messages' });
      const answer = await api.post('/llm/v1/messages', {
        model: 'a/b',
        max_tokens: 20,
        messages: user('x'),
        stream: true,
      });
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Service unavailable: injected fault 503' },
      });
      const unknown = await api.post('/llm/v1/embeddings', { model: 'a/b' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ message: 'Not found: no endpoint POST /llm/v1/embeddings' });
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
      expect(answer.body).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'Invalid parameters: max_tokens is required' },
      });
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
