// The common hand-written approach, for comparison: a fixed pool of concurrent tasks, a poll every
// second, and a 429 retried after a fixed second. It ignores the rate-limit headers.
import { setTimeout as sleep } from 'node:timers/promises';

async function call(gateway, method, path, body) {
  for (;;) {
    const response = await fetch(`${gateway.base_url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${gateway.api_key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json().catch(() => ({}));
    if (response.status === 429) {
      await sleep(1000);
      continue;
    }
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${json.message}`);
    return json;
  }
}

/** Submits every input to `slug` with `pool` tasks at once, polling each task every second; downloads its first resource. */
export async function baselineBatch(gateway, slug, inputs, pool) {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const input = inputs[next++];
      const submitted = await call(gateway, 'POST', `/${slug}`, input);
      const id = submitted.data.task_id;
      for (;;) {
        await sleep(1000);
        const task = await call(gateway, 'GET', `/tasks/${id}`);
        if (task.data.status === 'success') {
          const url = task.data.result.resources[0]?.url;
          if (url) await (await fetch(url)).arrayBuffer();
          break;
        }
        if (task.data.status === 'failed') throw new Error(`task ${id} failed`);
      }
    }
  };
  await Promise.all(Array.from({ length: pool }, worker));
  return { makespanMs: performance.now() - started };
}

/** Uploads a local file the plain way: one multipart POST. */
export async function baselineUpload(gateway, path, name) {
  const { readFile } = await import('node:fs/promises');
  const form = new FormData();
  form.append('file', new Blob([await readFile(path)]), name);
  for (;;) {
    const response = await fetch(`${gateway.base_url}/media/files`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${gateway.api_key}` },
      body: form,
    });
    if (response.status === 429) {
      await sleep(1000);
      continue;
    }
    return (await response.json()).data.download_url;
  }
}

/** A counting semaphore: the baseline's fixed pool of tasks in flight. */
export function pool(size) {
  let free = size;
  const waiting = [];
  return async (work) => {
    if (free === 0) await new Promise((resolve) => waiting.push(resolve));
    else free--;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

async function tool(gateway, url, body) {
  for (;;) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${gateway.api_key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status === 429) {
      await sleep(1000);
      continue;
    }
    return response.json();
  }
}

/** One task through the shared pool: submit, poll every second, answer the first resource's URL. */
async function task(gateway, slots, slug, input) {
  return slots(async () => {
    const submitted = await call(gateway, 'POST', `/${slug}`, input);
    for (;;) {
      await sleep(1000);
      const result = await call(gateway, 'GET', `/tasks/${submitted.data.task_id}`);
      if (result.data.status === 'success') {
        const url = result.data.result.resources[0].url;
        await (await fetch(url)).arrayBuffer();
        return url;
      }
      if (result.data.status === 'failed') throw new Error('task failed');
    }
  });
}

/** The launch-kit chain written by hand, one row after another step by step, all rows at once, tasks in one pool. */
export async function baselineChain(gateway, topics, assetsDir, size) {
  const started = performance.now();
  const slots = pool(size);
  await Promise.all(
    topics.map(async (topic) => {
      const search = await tool(gateway, `${gateway.tool_url}/v1/web-search`, {
        query: `${topic} design trends`,
        max_results: 5,
      });
      const fetched = await tool(gateway, `${gateway.tool_url}/v1/web-fetch`, {
        urls: search.results.map((r) => r.url),
      });
      const notes = fetched.results.map((p) => p.content).join('\n');
      const schema = {
        type: 'object',
        required: ['prompts'],
        properties: { prompts: { type: 'array', items: { type: 'string' } } },
      };
      const chat = await tool(gateway, `${gateway.llm_url}/v1/chat/completions`, {
        model: 'vendor-x/writer-1',
        messages: [
          { role: 'system', content: 'You are an art director.' },
          { role: 'user', content: `Write 3 image prompts about ${topic}, using these notes:\n${notes}` },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'p', schema } },
      });
      const prompts = JSON.parse(chat.choices[0].message.content).prompts;
      const heroes = await Promise.all(
        prompts.map((prompt) =>
          task(gateway, slots, 'vendor-a/vendor-a-v3-t2i', { prompt, aspect_ratio: '16:9', resolution: '2k' }),
        ),
      );
      const logo = await baselineUpload(gateway, `${assetsDir}logo.png`, 'logo.png');
      const branded = await task(gateway, slots, 'vendor-b/vendor-b-5.0-lite-edit', {
        prompt: 'Place the logo from the second image in the lower right corner.',
        image: [heroes[0], logo],
        size: '2048x1152',
        output_format: 'png',
      });
      const ride = await baselineUpload(gateway, `${assetsDir}ride.mp4`, 'ride.mp4');
      await task(gateway, slots, 'vendor-b/vendor-b-2.0-mini-v2v', {
        video_urls: [ride],
        prompt: 'Restyle the ride in the look of [Image 1].',
        reference_images: [branded],
        duration: 5,
        resolution: '720p',
      });
    }),
  );
  return { makespanMs: performance.now() - started };
}
