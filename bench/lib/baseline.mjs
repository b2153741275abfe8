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
    const response = await fetch(`${gateway.base_url}/media/files`, { method: 'POST', headers: { Authorization: `Bearer ${gateway.api_key}` }, body: form });
    if (response.status === 429) {
      await sleep(1000);
      continue;
    }
    return (await response.json()).data.download_url;
  }
}
