// An llm step's answer that is not what its schema asks: the failure quotes it, since nothing else
// keeps it (the journal, the console and the report have only the failure's message).
import { describe, expect, it } from 'vitest';
import { runLlm } from '../../src/actions/llm/run.js';
import type { GatewayClient } from '../../src/gateway/client.js';
import { ok } from '../../src/result.js';

/** A client whose chat call answers `content`. */
const answering = (content: string) =>
  ({
    llm: async () =>
      ok({ choices: [{ message: { role: 'assistant', content } }], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
  }) as unknown as GatewayClient;

const input = {
  model: 'vendor-x/writer-1',
  prompt: 'three prompts',
  schema: { type: 'object', required: ['prompts'], properties: { prompts: { type: 'array' } } },
};

describe('an llm answer its schema refuses', () => {
  it('is quoted in the failure, cut at 300 characters', async () => {
    const wrong = await runLlm({ client: answering('{"shots": ["a red fox"]}') }, input, new AbortController().signal);
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) {
      expect(wrong.error.reason).toBe('invalid-output');
      expect(wrong.error.message).toBe(
        `the answer of vendor-x/writer-1 does not match the step's schema: data must have required property 'prompts'; it answered: {"shots": ["a red fox"]}`,
      );
    }
    const long = await runLlm(
      { client: answering(`{"shots": "${'x'.repeat(400)}"}`) },
      input,
      new AbortController().signal,
    );
    if (!long.ok) expect(long.error.message).toMatch(/it answered: \{"shots": "x+… \(413 characters\)$/);
    const prose = await runLlm(
      { client: answering('Sure!\nHere are   prompts.') },
      input,
      new AbortController().signal,
    );
    if (!prose.ok)
      expect(prose.error.message).toBe('the answer of vendor-x/writer-1 is not JSON: Sure! Here are prompts.');
  });
});
