import type { LocalGateway } from '../../src/local-gateway/index.js';

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as is, with the given content type, instead of JSON. */
  raw?: { contentType: string; data: string | Buffer | FormData };
}

/** Plain HTTP against a gateway, as curl would send it: the tests' view from outside. */
export function http(gateway: Pick<LocalGateway, 'apiKey' | 'schemaUrl'>) {
  const origin = gateway.schemaUrl;
  async function send<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? gateway.apiKey : options.key;
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    let body: string | Buffer | FormData | undefined;
    if (options.raw) {
      body = options.raw.data;
      if (!(options.raw.data instanceof FormData)) headers['Content-Type'] = options.raw.contentType;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    const response = await fetch(`${origin}${path}`, { method, headers, body: body as RequestInit['body'] });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    get: <T = any>(path: string, options?: RequestOptions) => send<T>('GET', path, options),
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      send<T>('POST', path, { ...options, body }),
    delete: <T = any>(path: string, options?: RequestOptions) => send<T>('DELETE', path, options),
    send,
  };
}

/** Reads a PNG's width and height from its IHDR chunk. */
export function pngSize(bytes: Buffer): { width: number; height: number } {
  expectMagic(bytes.readUInt32BE(0) === 0x89504e47, 'PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function expectMagic(ok: boolean, what: string): void {
  if (!ok) throw new Error(`not a ${what} file`);
}

export async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** The addresses the project's own client takes, of a gateway on loopback. */
export const endpointsOf = (gateway: Pick<LocalGateway, 'baseUrl' | 'toolUrl' | 'llmUrl' | 'schemaUrl'>) => ({
  baseUrl: gateway.baseUrl,
  toolUrl: gateway.toolUrl,
  llmUrl: gateway.llmUrl,
  schemaUrl: gateway.schemaUrl,
});
