import {
  toMillis,
  taskState,
  type MediaFile,
  type ModelEntry,
  type Resource,
  type Submission,
  type TaskResult,
} from './types.js';

type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** The `data` of an envelope `{code, message, data}`; bodies without an envelope are their own data. */
export function envelopeData(body: unknown): unknown {
  return isObject(body) && 'data' in body && ('code' in body || 'message' in body) ? body.data : body;
}

/** A submission answer, or undefined when it lacks the task id the client needs. */
export function parseSubmission(body: unknown, slug: string): Submission | undefined {
  const data = envelopeData(body);
  if (!isObject(data)) return undefined;
  const taskId = text(data.task_id) ?? text(data.id);
  if (!taskId) return undefined;
  return { taskId, modelId: text(data.model_id) ?? slug, status: text(data.status) ?? 'pending' };
}

function parseResource(value: unknown): Resource | undefined {
  if (!isObject(value) || !text(value.url)) return undefined;
  const resource: Resource = { ...value, url: value.url as string, type: text(value.type) ?? 'document' };
  for (const key of ['width', 'height'] as const) if (number(value[key]) === undefined) delete resource[key];
  return resource;
}

export function parseTaskResult(body: unknown, taskId: string): TaskResult | undefined {
  const data = envelopeData(body);
  if (!isObject(data) || !text(data.status)) return undefined;
  const status = data.status as string;
  const result = isObject(data.result) ? data.result : {};
  const extensions = isObject(result.extensions) ? result.extensions : {};
  const resources = (Array.isArray(result.resources) ? result.resources : [])
    .map(parseResource)
    .filter((r): r is Resource => r !== undefined);
  const error = isObject(data.error)
    ? {
        ...(number(data.error.code) !== undefined ? { code: data.error.code as number } : {}),
        message: text(data.error.message) ?? JSON.stringify(data.error),
      }
    : text(data.error)
      ? { message: data.error as string }
      : undefined;
  const parsed: TaskResult = {
    taskId: text(data.task_id) ?? taskId,
    modelId: text(data.model_id) ?? '',
    status,
    state: taskState(status),
    resources,
    metadata: isObject(result.metadata) ? result.metadata : {},
  };
  const duration = number(data.duration);
  if (duration !== undefined) parsed.durationMs = duration;
  const submit = toMillis(extensions.submit_time);
  if (submit !== undefined) parsed.submitTime = submit;
  const end = toMillis(extensions.end_time);
  if (end !== undefined) parsed.endTime = end;
  const expires = toMillis(data.result_expires_at);
  if (expires !== undefined) parsed.resultExpiresAt = expires;
  if (error) parsed.error = error;
  return parsed;
}

/** `{"models":[…]}`, the array under `data`, or `data.models`: gateways answer the list in each of these shapes. */
export function parseModels(body: unknown): ModelEntry[] | undefined {
  const list =
    isObject(body) && Array.isArray(body.models)
      ? body.models
      : Array.isArray(envelopeData(body))
        ? (envelopeData(body) as unknown[])
        : isObject(envelopeData(body)) && Array.isArray((envelopeData(body) as Json).models)
          ? ((envelopeData(body) as Json).models as unknown[])
          : undefined;
  if (!list) return undefined;
  return list
    .filter(isObject)
    .filter((m) => text(m.slug))
    .map((m) => ({
      slug: m.slug as string,
      type: text(m.type) ?? 'unknown',
      ...(text(m.docs_url) ? { docsUrl: m.docs_url as string } : {}),
      ...(text(m.description) ? { description: m.description as string } : {}),
    }));
}

export function parseMediaFile(value: unknown): MediaFile | undefined {
  const data = envelopeData(value);
  if (!isObject(data)) return undefined;
  const fileId = text(data.file_id) ?? text(data.id);
  const url = text(data.download_url) ?? text(data.url);
  if (!fileId || !url) return undefined;
  const file: MediaFile = { fileId, url, type: text(data.type) ?? 'unknown' };
  if (text(data.filename)) file.filename = data.filename as string;
  if (number(data.size) !== undefined) file.size = data.size as number;
  const created = toMillis(data.created_at);
  if (created !== undefined) file.createdAt = created;
  const expires = toMillis(data.expires_at);
  if (expires !== undefined) file.expiresAt = expires;
  return file;
}

/** The public schema endpoint's `post.requestBody.content['application/json'].schema`. */
export function parseModelSchema(body: unknown): Json | undefined {
  if (!isObject(body)) return undefined;
  const post = isObject(body.post) ? body.post : undefined;
  const requestBody = post && isObject(post.requestBody) ? post.requestBody : undefined;
  const content = requestBody && isObject(requestBody.content) ? requestBody.content : undefined;
  const json = content && isObject(content['application/json']) ? content['application/json'] : undefined;
  return json && isObject(json.schema) ? json.schema : undefined;
}
