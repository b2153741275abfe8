import { describe, expect, it } from 'vitest';
import {
  envelopeData,
  parseMediaFile,
  parseModelSchema,
  parseModels,
  parseSubmission,
  parseTaskResult,
} from '../../src/gateway/parse.js';

const SECONDS = 1_763_726_400; // 2025-11-21, as a gateway answering in seconds sends it
const MILLIS = SECONDS * 1000;

describe('envelopeData', () => {
  it('unwraps {code, message, data}, and leaves other bodies as they are', () => {
    expect(envelopeData({ code: 0, message: 'success', data: { a: 1 } })).toEqual({ a: 1 });
    expect(envelopeData({ data: { a: 1 } })).toEqual({ data: { a: 1 } });
    expect(envelopeData([1, 2])).toEqual([1, 2]);
  });
});

describe('parseSubmission', () => {
  it('reads the task id, model and status; the slug and pending fill gaps', () => {
    expect(
      parseSubmission(
        { code: 0, message: 'success', data: { task_id: 't1', model_id: 'a/b', status: 'processing' } },
        'x/y',
      ),
    ).toEqual({ taskId: 't1', modelId: 'a/b', status: 'processing' });
    expect(parseSubmission({ id: 't2' }, 'x/y')).toEqual({ taskId: 't2', modelId: 'x/y', status: 'pending' });
  });

  it('is undefined without a task id', () => {
    expect(parseSubmission({ code: 0, message: 'success', data: { status: 'pending' } }, 'x/y')).toBeUndefined();
    expect(parseSubmission('text', 'x/y')).toBeUndefined();
  });
});

describe('parseTaskResult', () => {
  it('reads a finished task: resources, metadata, times in seconds or milliseconds', () => {
    const body = {
      code: 0,
      message: 'success',
      data: {
        task_id: 't1',
        model_id: 'a/b',
        status: 'success',
        duration: 1234,
        result_expires_at: SECONDS,
        result: {
          resources: [
            { url: 'https://r/1.png', type: 'image', width: 512, height: 'tall', role: 'main' },
            { type: 'image' },
            'junk',
          ],
          metadata: { seed: 4 },
          extensions: { submit_time: SECONDS, end_time: MILLIS + 5 },
        },
      },
    };
    expect(parseTaskResult(body, 'asked')).toEqual({
      taskId: 't1',
      modelId: 'a/b',
      status: 'success',
      state: 'succeeded',
      resources: [{ url: 'https://r/1.png', type: 'image', width: 512, role: 'main' }],
      metadata: { seed: 4 },
      durationMs: 1234,
      submitTime: MILLIS,
      endTime: MILLIS + 5,
      resultExpiresAt: MILLIS,
    });
  });

  it('maps any word to a state; unknown words count as running', () => {
    const state = (status: string) => parseTaskResult({ status }, 't')?.state;
    expect(['success', 'COMPLETED', 'done'].map(state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(['failed', 'canceled', 'expired'].map(state)).toEqual(['failed', 'failed', 'failed']);
    expect(['pending', 'queued', 'warming-up'].map(state)).toEqual(['running', 'running', 'running']);
  });

  it('reads an error as an object or as text; a resource without a type is a document', () => {
    expect(
      parseTaskResult({ status: 'failed', error: { code: 400, message: 'Invalid parameters: x' } }, 't')?.error,
    ).toEqual({ code: 400, message: 'Invalid parameters: x' });
    expect(parseTaskResult({ status: 'failed', error: 'boom' }, 't')?.error).toEqual({ message: 'boom' });
    expect(parseTaskResult({ status: 'failed', error: { detail: 1 } }, 't')?.error).toEqual({
      message: '{"detail":1}',
    });
    expect(parseTaskResult({ status: 'success', result: { resources: [{ url: 'u' }] } }, 't')?.resources).toEqual([
      { url: 'u', type: 'document' },
    ]);
  });

  it('is undefined without a status', () => {
    expect(parseTaskResult({ code: 0, message: 'success', data: { task_id: 't' } }, 't')).toBeUndefined();
    expect(parseTaskResult(null, 't')).toBeUndefined();
  });
});

describe('parseModels', () => {
  const entry = { slug: 'a/b', type: 'text-to-image', docs_url: 'https://d', description: 'B' };
  const parsed = [{ slug: 'a/b', type: 'text-to-image', docsUrl: 'https://d', description: 'B' }];

  it('reads {models: […]}, an envelope of a list, and an envelope of {models}', () => {
    expect(parseModels({ models: [entry] })).toEqual(parsed);
    expect(parseModels({ code: 0, message: 'success', data: [entry] })).toEqual(parsed);
    expect(parseModels({ code: 0, message: 'success', data: { models: [entry] } })).toEqual(parsed);
  });

  it('drops entries without a slug and defaults the type', () => {
    expect(parseModels({ models: [{ type: 'x' }, { slug: 'c/d' }, 7] })).toEqual([{ slug: 'c/d', type: 'unknown' }]);
    expect(parseModels({ nothing: true })).toBeUndefined();
  });
});

describe('parseMediaFile', () => {
  it('reads download_url or url, file_id or id, and converts times', () => {
    expect(
      parseMediaFile({
        code: 0,
        message: 'success',
        data: {
          file_id: 'f1',
          download_url: 'https://f/1',
          type: 'image',
          filename: 'a.png',
          size: 10,
          created_at: SECONDS,
          expires_at: MILLIS,
        },
      }),
    ).toEqual({
      fileId: 'f1',
      url: 'https://f/1',
      type: 'image',
      filename: 'a.png',
      size: 10,
      createdAt: MILLIS,
      expiresAt: MILLIS,
    });
    expect(parseMediaFile({ id: 'f2', url: 'https://f/2' })).toEqual({
      fileId: 'f2',
      url: 'https://f/2',
      type: 'unknown',
    });
  });

  it('is undefined without an id or a link', () => {
    expect(parseMediaFile({ file_id: 'f1' })).toBeUndefined();
    expect(parseMediaFile({ url: 'https://f/1' })).toBeUndefined();
  });
});

describe('parseModelSchema', () => {
  it('reads post.requestBody.content.application/json.schema, and nothing else', () => {
    const schema = { type: 'object', required: ['prompt'] };
    expect(parseModelSchema({ post: { requestBody: { content: { 'application/json': { schema } } } } })).toEqual(
      schema,
    );
    expect(parseModelSchema({ post: { requestBody: { content: {} } } })).toBeUndefined();
    expect(parseModelSchema({ schema })).toBeUndefined();
  });
});
