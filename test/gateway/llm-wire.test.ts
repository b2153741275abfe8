import { describe, expect, it } from 'vitest';
import { llmAnswer, llmProtocol, llmRequest } from '../../src/gateway/llm-wire.js';

const SCHEMA = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };

describe('llmAnswer reads each protocol', () => {
  it('chat: a string content and prompt/completion token counts', () => {
    const body = {
      choices: [{ message: { role: 'assistant', content: 'Hello' } }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    };
    expect(llmAnswer('chat', body)).toEqual({
      text: 'Hello',
      usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    });
  });

  it('chat: a content array is joined, parts without text skipped', () => {
    const body = {
      choices: [
        { message: { content: [{ type: 'text', text: 'Hel' }, { type: 'image_url' }, { type: 'text', text: 'lo' }] } },
      ],
    };
    expect(llmAnswer('chat', body).text).toBe('Hello');
  });

  it('responses: output_text first, with input/output token counts', () => {
    const body = {
      output_text: 'Direct',
      output: [{ content: [{ text: 'ignored' }] }],
      usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 },
    };
    expect(llmAnswer('responses', body)).toEqual({
      text: 'Direct',
      usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 },
    });
  });

  it('responses: without output_text, the content of every output item, in order', () => {
    const body = {
      output: [
        { type: 'reasoning' },
        { content: [{ type: 'output_text', text: 'one ' }] },
        { content: [{ type: 'output_text', text: 'two' }] },
      ],
    };
    expect(llmAnswer('responses', body).text).toBe('one two');
  });

  it('messages: only the text blocks; the total is the sum when not given', () => {
    const body = {
      content: [
        { type: 'thinking', text: 'hmm' },
        { type: 'text', text: 'Answer' },
        { type: 'tool_use', id: 'x' },
      ],
      usage: { input_tokens: 20, output_tokens: 5 },
    };
    expect(llmAnswer('messages', body)).toEqual({
      text: 'Answer',
      usage: { input_tokens: 20, output_tokens: 5, total_tokens: 25 },
    });
  });

  it.each(['chat', 'responses', 'messages'])('%s: missing fields read as empty text and zero tokens', (protocol) => {
    expect(llmAnswer(protocol, {})).toEqual({
      text: '',
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    });
  });

  it('tolerates fields of the wrong shape', () => {
    expect(llmAnswer('chat', { choices: 'none', usage: 'many' })).toEqual({
      text: '',
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    });
    expect(llmAnswer('responses', { output: [null, { content: 'text' }] }).text).toBe('');
    expect(llmAnswer('messages', { content: [{ type: 'text', text: 42 }] }).text).toBe('');
    expect(llmAnswer('chat', { choices: [], usage: { prompt_tokens: '3' } }).usage.input_tokens).toBe(0);
  });
});

describe('llmRequest builds each protocol body', () => {
  const input = {
    model: 'text-model',
    system: 'Be brief.',
    prompt: 'Name it.',
    schema: SCHEMA,
    max_tokens: 100,
    temperature: 0.2,
  };

  it('chat: system and user messages, a json_schema response format', () => {
    expect(llmRequest('chat', input)).toEqual({
      model: 'text-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name it.' },
      ],
      max_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: SCHEMA, strict: false } },
      temperature: 0.2,
    });
  });

  it('responses: instructions, max_output_tokens and a text format', () => {
    expect(llmRequest('responses', input)).toEqual({
      model: 'text-model',
      input: 'Name it.',
      instructions: 'Be brief.',
      max_output_tokens: 100,
      text: { format: { type: 'json_schema', name: 'output', schema: SCHEMA, strict: false } },
      temperature: 0.2,
    });
  });

  it('messages: the schema goes into the system text; max_tokens defaults to 4096', () => {
    const body = llmRequest('messages', { model: 'text-model', prompt: 'Name it.', schema: SCHEMA });
    expect(body).toMatchObject({
      model: 'text-model',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'Name it.' }],
    });
    expect(body.system).toContain('Answer with JSON only');
    expect(body.system).toContain(JSON.stringify(SCHEMA));
  });

  it('leaves out what the step did not set', () => {
    expect(llmRequest('chat', { model: 'm', prompt: 'p' })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'p' }],
    });
    expect(llmRequest('messages', { model: 'm', prompt: 'p' })).toEqual({
      model: 'm',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'p' }],
    });
  });

  it('llmProtocol: chat unless the step names another known protocol', () => {
    expect([llmProtocol(undefined), llmProtocol('responses'), llmProtocol('messages'), llmProtocol('chat')]).toEqual([
      'chat',
      'responses',
      'messages',
      'chat',
    ]);
  });
});
