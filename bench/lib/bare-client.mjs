#!/usr/bin/env node
// The least any client must do for a batch of text-to-image tasks, with none of the engine: for each task
// the same three HTTP exchanges through undici as `pipeline run` (submission, one poll or more, download),
// its picture written to a `.part` file and renamed, and the same six journal lines, the two before and
// after a submission made durable by a shared fdatasync first. batch-100k runs it beside the engine, so
// the engine's cost per task is read against what the task itself costs on this machine.
//
// usage: node bench/lib/bare-client.mjs BASE_URL API_KEY TASKS CONCURRENCY DIR
// prints one line of JSON: tasks, CPU milliseconds (user + system, start-up included), peak RSS in KB.
import { closeSync, fdatasync, mkdirSync, openSync, writeSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';

const [base, key, tasksText, concurrencyText, dir] = process.argv.slice(2);
const tasks = Number(tasksText);
const outputs = join(dir, 'outputs');
mkdirSync(outputs, { recursive: true });
const dispatcher = new Agent({ connections: Number(concurrencyText) * 2 });
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

const journal = openSync(join(dir, 'journal.jsonl'), 'a');
let syncing;
function line(event) {
  writeSync(journal, `${JSON.stringify({ t: Date.now(), ...event })}\n`);
}
/** Makes every line written so far durable; lines written while a sync runs wait for it and share the next one. */
function durable() {
  if (syncing) {
    return syncing.then(() => durable());
  }
  syncing = new Promise((resolve, reject) =>
    fdatasync(journal, (error) => {
      syncing = undefined;
      if (error) reject(error);
      else resolve();
    }),
  );
  return syncing;
}

async function json(response) {
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${await response.body.text()}`);
  return response.body.json();
}

async function task(row) {
  line({ type: 'step-started', row, step: 'tile' });
  const slug = 'vendor-a/vendor-a-v3-t2i';
  const requestId = crypto.randomUUID();
  line({ type: 'request-sent', row, step: 'tile', index: 0, slug, request: requestId, cost_usd: 0.03 });
  await durable();
  const input = { prompt: `tile ${row}`, aspect_ratio: '1:1' };
  const submitted = await json(
    await request(`${base}/${slug}`, { method: 'POST', headers, body: JSON.stringify(input), dispatcher }),
  );
  const taskId = submitted.data.task_id;
  line({ type: 'task-submitted', row, step: 'tile', index: 0, slug, request: requestId, task_id: taskId, input });
  await durable();
  let polls = 0;
  let result;
  for (;;) {
    polls++;
    result = (await json(await request(`${base}/tasks/${taskId}`, { headers, dispatcher }))).data;
    if (result.status === 'success' || result.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  line({ type: 'task-finished', row, step: 'tile', index: 0, task_id: taskId, status: result.status, polls });
  const resource = result.result.resources[0];
  const download = await request(resource.url, { dispatcher });
  const body = Buffer.from(await download.body.arrayBuffer());
  const path = join(outputs, `row-${row}-tile.png`);
  const file = openSync(`${path}.part`, 'w');
  for (let written = 0; written < body.length; ) written += writeSync(file, body, written);
  closeSync(file);
  await rename(`${path}.part`, path);
  line({
    type: 'output-written',
    row,
    step: 'tile',
    index: 0,
    task_id: taskId,
    url: resource.url,
    path,
    bytes: body.length,
  });
  const resources = [{ ...resource, path }];
  line({ type: 'step-finished', row, step: 'tile', outputs: { task_id: taskId, resources, images: resources } });
}

let next = 0;
await Promise.all(
  Array.from({ length: Number(concurrencyText) }, async () => {
    while (next < tasks) await task(next++);
  }),
);
await durable();
const usage = process.resourceUsage();
console.log(
  JSON.stringify({ tasks, cpu_ms: (usage.userCPUTime + usage.systemCPUTime) / 1000, max_rss_kb: usage.maxRSS }),
);
await dispatcher.close();
