import Anthropic from '@anthropic-ai/sdk';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * The built-in text gateway driven by the official SDKs, as a user's own script would drive it:
 * OpenAI's `baseURL` is `{llm_url}/v1`, Anthropic's is `{llm_url}`. Retries are off so that every
 * failure is seen as the gateway sent it.
 */

const MODEL = 'vendor-x/writer-1';
const PROMPTS_SCHEMA = {
  type: 'object',
  required: ['prompts'],
  additionalProperties: false,
  properties: { prompts: { type: 'array', items: { type: 'string' } } },
};
const ajv = new Ajv({ strict: false });
const user = (content: string) => [{ role: 'user' as const, content }];

function sdks(gateway: LocalGateway, apiKey = gateway.apiKey) {
  return {
    openai: new OpenAI({ baseURL: `${gateway.llmUrl}/v1`, apiKey, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: gateway.llmUrl, apiKey, maxRetries: 0 }),
  };
}

describe('the official SDKs against the built-in text gateway', () => {
  let gateway: LocalGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  beforeAll(async () => {
    gateway = await startLocalGateway({ seed: 5, rpm: 10_000 });
    ({ openai, anthropic } = sdks(gateway));
  });
  afterAll(() => gateway.close());

  describe('Chat Completions', () => {
    const ask = { model: MODEL, messages: user('Describe a solar cargo bike crossing a rainy city at dusk') };

    it('streams chunks whose joined text is the non-streamed text, then the usage', async () => {
      const whole = await openai.chat.completions.create(ask);
      const stream = await openai.chat.completions.create({
        ...ask,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThan(4);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === MODEL)).toBe(true);
      expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(whole.choices[0]!.message.content);
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      // With include_usage the last chunk has no choices and the usage of the whole answer.
      expect(chunks.at(-1)!.choices).toEqual([]);
      expect(chunks.at(-1)!.usage).toEqual(whole.usage);
    });

    it('assembles the same completion with the stream helper', async () => {
      const whole = await openai.chat.completions.create(ask);
      const final = await openai.chat.completions.stream(ask).finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe(whole.choices[0]!.message.content);
      expect(final.choices[0]!.finish_reason).toBe('stop');
    });

    it('streams JSON-schema output that parses and validates once joined', async () => {
      const request = {
        model: MODEL,
        messages: user('Write 3 image prompts about solar cargo bikes'),
        response_format: {
          type: 'json_schema' as const,
          json_schema: { name: 'prompts', schema: PROMPTS_SCHEMA, strict: false },
        },
      };
      const stream = await openai.chat.completions.create({ ...request, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      const json = JSON.parse(text);
      expect(ajv.validate(PROMPTS_SCHEMA, json), ajv.errorsText()).toBe(true);
      expect(json.prompts).toHaveLength(3);
      const whole = await openai.chat.completions.create(request);
      expect(text).toBe(whole.choices[0]!.message.content);
    });

    it('ends a cut answer with finish_reason length', async () => {
      const stream = await openai.chat.completions.create({ ...ask, max_tokens: 5, stream: true });
      const reasons = [];
      for await (const chunk of stream) reasons.push(chunk.choices[0]?.finish_reason);
      expect(reasons.at(-1)).toBe('length');
    });
  });

  describe('Responses', () => {
    const ask = {
      model: MODEL,
      instructions: 'You are an art director.',
      input: 'Describe a rooftop garden of tomatoes in the morning',
    };

    it('streams output_text deltas in the public event order; the final response is the non-streamed one', async () => {
      const whole = await openai.responses.create(ask);
      const stream = openai.responses.stream(ask);
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const final = await stream.finalResponse();
      expect(text).toBe(whole.output_text);
      expect(final.output_text).toBe(whole.output_text);
      expect(final).toMatchObject({ id: expect.stringMatching(/^resp_/), status: 'completed', usage: whole.usage });
      const distinct = types.filter((type, i) => type !== types[i - 1]);
      expect(distinct).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
    });

    it('streams with create({stream: true}) too, numbering the events', async () => {
      const whole = await openai.responses.create(ask);
      const stream = await openai.responses.create({ ...ask, stream: true });
      const events = [];
      for await (const event of stream) events.push(event);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
      const text = events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
      expect(text).toBe(whole.output_text);
    });

    it('streams JSON-schema output that parses and validates once joined', async () => {
      const stream = openai.responses.stream({
        model: MODEL,
        input: 'Write 2 image prompts about cargo bikes',
        text: { format: { type: 'json_schema', name: 'prompts', schema: PROMPTS_SCHEMA, strict: false } },
      });
      let text = '';
      stream.on('response.output_text.delta', (event) => {
        text += event.delta;
      });
      const final = await stream.finalResponse();
      expect(final.output_text).toBe(text);
      const parsed = JSON.parse(text);
      expect(ajv.validate(PROMPTS_SCHEMA, parsed), ajv.errorsText()).toBe(true);
      expect(parsed.prompts).toHaveLength(2);
    });

    it('ends a cut answer with response.incomplete', async () => {
      const final = await openai.responses.stream({ ...ask, max_output_tokens: 3 }).finalResponse();
      expect(final.status).toBe('incomplete');
      expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      // The message cut short is incomplete too, streamed or not.
      expect(final.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
      const whole = await openai.responses.create({ ...ask, max_output_tokens: 3 });
      expect(whole.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    });
  });

  describe('Messages', () => {
    const ask = {
      model: 'vendor-y/claude-x',
      max_tokens: 400,
      messages: user('Describe a night market under paper lanterns'),
    };

    it('streams text deltas in the public event order; the final message is the non-streamed one', async () => {
      const whole = await anthropic.messages.create(ask);
      const stream = anthropic.messages.stream(ask);
      let text = '';
      stream.on('text', (delta) => {
        text += delta;
      });
      const final = await stream.finalMessage();
      const wholeText = whole.content[0]!.type === 'text' ? whole.content[0]!.text : undefined;
      expect(text).toBe(wholeText);
      expect(await stream.finalText()).toBe(wholeText);
      expect(final).toMatchObject({ stop_reason: 'end_turn', usage: whole.usage, model: 'vendor-y/claude-x' });

      const raw = await anthropic.messages.create({ ...ask, stream: true });
      const types: string[] = [];
      for await (const event of raw) types.push(event.type);
      expect(types.filter((type, i) => type !== types[i - 1])).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
    });

    it('streams JSON-schema output (output_config.format) that parses once joined', async () => {
      const stream = anthropic.messages.stream({
        ...ask,
        messages: user('Write 4 image prompts about lanterns'),
        output_config: { format: { type: 'json_schema', schema: PROMPTS_SCHEMA } },
      });
      const json = JSON.parse(await stream.finalText());
      expect(ajv.validate(PROMPTS_SCHEMA, json), ajv.errorsText()).toBe(true);
      expect(json.prompts).toHaveLength(4);
    });

    it('ends a cut answer with stop_reason max_tokens', async () => {
      const final = await anthropic.messages.stream({ ...ask, max_tokens: 4 }).finalMessage();
      expect(final.stop_reason).toBe('max_tokens');
      expect(final.usage.output_tokens).toBe(4);
    });
  });

  describe('stop sequences, tools and request ids', () => {
    const about = user('Describe a solar cargo bike crossing a rainy city at dusk');

    it('stops before a stop sequence: chat stop, and Messages stop_sequences with its stop_reason', async () => {
      const whole = (await openai.chat.completions.create({ model: MODEL, messages: about })).choices[0]!.message
        .content!;
      const word = whole.split(' ')[3]!;
      const stopped = await openai.chat.completions.create({ model: MODEL, messages: about, stop: [word, 'zzz'] });
      expect(stopped.choices[0]).toMatchObject({
        finish_reason: 'stop',
        message: { content: whole.slice(0, whole.indexOf(word)) },
      });
      const ask = { model: MODEL, max_tokens: 400, messages: about };
      const text = (await anthropic.messages.create(ask)).content
        .map((b) => (b.type === 'text' ? b.text : ''))
        .join('');
      const at = text.split(' ')[2]!;
      const cut = await anthropic.messages.create({ ...ask, stop_sequences: [at] });
      expect(cut).toMatchObject({
        stop_reason: 'stop_sequence',
        stop_sequence: at,
        content: [{ text: text.slice(0, text.indexOf(at)) }],
      });
      const streamed = await anthropic.messages.stream({ ...ask, stop_sequences: [at] }).finalMessage();
      expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: at, content: cut.content });
      // A sequence that never comes changes nothing.
      expect(await anthropic.messages.create({ ...ask, stop_sequences: ['never here'] })).toMatchObject({
        stop_reason: 'end_turn',
        stop_sequence: null,
      });
    });

    it('refuses a tool_choice that demands a call, and answers in text when the choice is left to the model', async () => {
      const tools = [
        {
          type: 'function' as const,
          function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
        },
      ];
      await expect(
        openai.chat.completions.create({ model: MODEL, messages: about, tools, tool_choice: 'required' }),
      ).rejects.toThrow(
        /^400 Invalid parameters: tool_choice "required" demands a tool call, and the local gateway's text models call no tools/,
      );
      await expect(
        anthropic.messages.create({
          model: MODEL,
          max_tokens: 100,
          messages: about,
          tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
          tool_choice: { type: 'any' },
        }),
      ).rejects.toThrow(Anthropic.BadRequestError);
      const auto = await openai.chat.completions.create({ model: MODEL, messages: about, tools });
      expect(auto.choices[0]!.message.content!.length).toBeGreaterThan(0);
      // Several choices are refused, not answered with one that a client would take for all.
      await expect(openai.chat.completions.create({ model: MODEL, messages: about, n: 2 })).rejects.toThrow(
        /^400 Invalid parameters: n 2 asks for several choices/,
      );
      expect((await openai.chat.completions.create({ model: MODEL, messages: about, n: 1 })).choices).toHaveLength(1);
    });

    it('takes the history of a tool call as the public APIs give it: chat tool_calls with null content, Responses function_call items', async () => {
      const chat = await openai.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'user', content: 'What is the weather in Lyon?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"rain"}' },
        ],
      });
      expect(chat.choices[0]!.message.content!.length).toBeGreaterThan(0);
      const responses = await openai.responses.create({
        model: MODEL,
        input: [
          { role: 'user', content: 'What is the weather in Lyon?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Lyon"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"sky":"rain"}' },
        ],
      });
      expect(responses.output_text.length).toBeGreaterThan(0);
      await expect(
        openai.responses.create({
          model: MODEL,
          input: [{ type: 'function_call_output', call_id: 'call_1' } as never],
        }),
      ).rejects.toThrow(/^400 Invalid parameters: input\[0\]\.output must be a string/);
    });

    it('checks a role and a temperature as the public APIs do', async () => {
      await expect(
        openai.chat.completions.create({ model: MODEL, messages: [{ role: 'bogus' as 'user', content: 'hi' }] }),
      ).rejects.toThrow(
        /^400 Invalid parameters: messages\[0\]\.role must be one of system, developer, user, assistant, tool, function/,
      );
      await expect(
        anthropic.messages.create({
          model: MODEL,
          max_tokens: 10,
          messages: about,
          temperature: 5,
        } as Anthropic.MessageCreateParamsNonStreaming),
      ).rejects.toThrow('temperature must be a number from 0 to 1 (got 5)');
    });

    it('gives every answer, an error too, a request id the SDKs expose', async () => {
      const { request_id } = await openai.chat.completions.create({ model: MODEL, messages: about }).withResponse();
      expect(request_id).toMatch(/^req_[0-9a-f]{32}$/);
      const reply = await anthropic.messages.create({ model: MODEL, max_tokens: 10, messages: about });
      expect(reply._request_id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(reply._request_id).not.toBe(request_id);
      const failure = await openai.chat.completions
        .create({ model: 'bare', messages: about })
        .catch((error: unknown) => error);
      expect((failure as InstanceType<typeof OpenAI.NotFoundError>).requestID).toMatch(/^req_/);
    });

    it('answers an Anthropic SDK in the Messages error shape wherever it calls (its models list is not served)', async () => {
      const failure = await anthropic.models.list().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.NotFoundError);
      expect((failure as InstanceType<typeof Anthropic.NotFoundError>).error).toEqual({
        type: 'error',
        error: { type: 'not_found_error', message: 'Not found: no endpoint GET /llm/v1/models' },
      });
    });
  });

  describe('errors the SDKs read', () => {
    const NOT_AVAILABLE =
      '404 Not found: model "gpt-4o-mini" is not available; text model ids have the form provider/name';

    it('a wrong model is a NotFoundError carrying the gateway message, streamed or not', async () => {
      const chat = { model: 'gpt-4o-mini', messages: user('hi') };
      await expect(openai.chat.completions.create(chat)).rejects.toThrow(OpenAI.NotFoundError);
      await expect(openai.chat.completions.create({ ...chat, stream: true })).rejects.toThrow(NOT_AVAILABLE);
      await expect(openai.responses.create({ model: 'gpt-4o-mini', input: 'hi' })).rejects.toThrow(NOT_AVAILABLE);
      const failure = await anthropic.messages
        .create({ model: 'gpt-4o-mini', max_tokens: 10, messages: user('hi') })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.NotFoundError);
      expect((failure as InstanceType<typeof Anthropic.NotFoundError>).error).toEqual({
        type: 'error',
        error: {
          type: 'not_found_error',
          message: 'Not found: model "gpt-4o-mini" is not available; text model ids have the form provider/name',
        },
      });
      await expect(
        anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 10, messages: user('hi') }).finalMessage(),
      ).rejects.toThrow(Anthropic.NotFoundError);
    });

    it('a wrong key is an AuthenticationError carrying the gateway message', async () => {
      const wrong = sdks(gateway, 'not-a-key');
      const failure = await wrong.openai.chat.completions
        .create({ model: MODEL, messages: user('hi'), stream: true })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((failure as Error).message).toBe('401 Authentication failed: the API key is not valid or not active');
      await expect(
        wrong.anthropic.messages.stream({ model: MODEL, max_tokens: 10, messages: user('hi') }).finalMessage(),
      ).rejects.toThrow(Anthropic.AuthenticationError);
    });

    it('invalid parameters are a BadRequestError naming the field', async () => {
      await expect(openai.chat.completions.create({ model: MODEL, messages: [], stream: true })).rejects.toMatchObject({
        status: 400,
        message: '400 Invalid parameters: messages must be a non-empty list of messages',
      });
      await expect(anthropic.messages.create({ model: MODEL, max_tokens: 0, messages: user('hi') })).rejects.toThrow(
        Anthropic.BadRequestError,
      );
    });
  });
});

describe('faults and rate limits on streams', () => {
  let gateway: LocalGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('drop-after cuts a chat stream mid-way: the SDK throws after some chunks, it does not hang', async () => {
    gateway = await startLocalGateway({ seed: 5 });
    const { openai } = sdks(gateway);
    gateway.injectFault({ kind: 'drop-after', route: 'POST /llm/v1/chat/completions' });
    const stream = await openai.chat.completions.create({ model: MODEL, messages: user('a long story'), stream: true });
    let received = 0;
    const failure = await (async () => {
      for await (const _ of stream) received++;
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(received).toBeGreaterThan(0);
    const stats = gateway.stats();
    expect(stats.faults_injected).toMatchObject({ 'drop-after': 1 });
    // Counted once, as a dropped connection, though its status line had gone out as 200.
    expect(stats.requests.by_status).toEqual({ '0': 1 });
  });

  it('drop-after cuts a responses stream and a messages stream: both helpers reject', async () => {
    gateway = await startLocalGateway({ seed: 5 });
    const { openai, anthropic } = sdks(gateway);
    gateway.injectFault({ kind: 'drop-after', route: 'POST /llm/v1/responses' });
    gateway.injectFault({ kind: 'drop-after', route: 'POST /llm/v1/messages' });
    await expect(openai.responses.stream({ model: MODEL, input: 'a long story' }).finalResponse()).rejects.toThrow();
    const stream = anthropic.messages.stream({ model: MODEL, max_tokens: 300, messages: user('a long story') });
    let deltas = '';
    stream.on('text', (delta) => {
      deltas += delta;
    });
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(deltas.length).toBeGreaterThan(0);
  });

  it('malformed-json mid-stream is an SDK error after the chunks before it', async () => {
    gateway = await startLocalGateway({ seed: 5 });
    // The SDK logs the unparsable event before throwing; that log is expected here.
    const openai = new OpenAI({
      baseURL: `${gateway.llmUrl}/v1`,
      apiKey: gateway.apiKey,
      maxRetries: 0,
      logLevel: 'off',
    });
    gateway.injectFault({ kind: 'malformed-json', route: 'POST /llm/v1/chat/completions' });
    const stream = await openai.chat.completions.create({ model: MODEL, messages: user('a long story'), stream: true });
    let received = 0;
    const failure = await (async () => {
      for await (const _ of stream) received++;
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SyntaxError);
    expect(received).toBeGreaterThan(0);
  });

  it('malformed-json mid-stream is an error on Messages and Responses too: the cut-off event keeps its name', async () => {
    gateway = await startLocalGateway({ seed: 5 });
    const quiet = { apiKey: gateway.apiKey, maxRetries: 0, logLevel: 'off' as const };
    const openai = new OpenAI({ ...quiet, baseURL: `${gateway.llmUrl}/v1` });
    const anthropic = new Anthropic({ ...quiet, baseURL: gateway.llmUrl });
    gateway.injectFault({ kind: 'malformed-json', route: 'POST /llm/v1/messages' });
    gateway.injectFault({ kind: 'malformed-json', route: 'POST /llm/v1/responses' });
    const readAll = async (stream: AsyncIterable<unknown>) => {
      let received = 0;
      const failure = await (async () => {
        for await (const _ of stream) received++;
      })().catch((error: unknown) => error);
      return { received, failure };
    };
    // An event the SDK could not parse, not a stream that ends early as if it were whole.
    const messages = await readAll(
      await anthropic.messages.create({ model: MODEL, max_tokens: 300, messages: user('a long story'), stream: true }),
    );
    expect(messages.failure).toBeInstanceOf(Error);
    expect(messages.received).toBeGreaterThan(0);
    const responses = await readAll(
      await openai.responses.create({ model: MODEL, input: 'a long story', stream: true }),
    );
    expect(responses.failure).toBeInstanceOf(Error);
    expect(responses.received).toBeGreaterThan(0);
  });

  it('delay pauses a stream mid-way, then the rest arrives intact', async () => {
    gateway = await startLocalGateway({ seed: 5 });
    const { anthropic } = sdks(gateway);
    const ask = { model: MODEL, max_tokens: 300, messages: user('a long story about kites') };
    const whole = await anthropic.messages.create(ask);
    // A pause long beside the stream's own gaps (milliseconds): under load the event before it can
    // reach the client late and shorten the gap seen there, so the bound leaves room for that.
    gateway.injectFault({ kind: 'delay', delay_ms: 400, route: 'POST /llm/v1/messages' });
    const stream = anthropic.messages.stream(ask);
    const arrivals: number[] = [];
    stream.on('streamEvent', () => arrivals.push(performance.now()));
    const final = await stream.finalMessage();
    expect(final.content).toEqual(whole.content);
    const longestGap = Math.max(...arrivals.slice(1).map((at, i) => at - arrivals[i]!));
    expect(longestGap).toBeGreaterThanOrEqual(300);
    expect(arrivals[0]).toBeLessThan(arrivals.at(-1)! - 300);
  });

  it('a stream over the rate limit is a 429 the SDKs see as RateLimitError', async () => {
    // 12:00:10: the window resets at 12:01:00.
    gateway = await startLocalGateway({ seed: 5, rpm: 1, clock: new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 10)) });
    const { openai, anthropic } = sdks(gateway);
    const first = await openai.chat.completions.create({ model: MODEL, messages: user('hi'), stream: true });
    for await (const _ of first) {
      // Drained: the one request of the window.
    }
    const refused = await openai.chat.completions
      .create({ model: MODEL, messages: user('hi'), stream: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused).toMatchObject({
      status: 429,
      message: '429 Rate limit exceeded: 1 requests per minute, retry after 50 seconds',
    });
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('50');
    await expect(
      anthropic.messages.stream({ model: MODEL, max_tokens: 10, messages: user('hi') }).finalMessage(),
    ).rejects.toThrow(Anthropic.RateLimitError);
  });
});
