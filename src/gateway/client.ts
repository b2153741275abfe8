import type { Result } from '../result.js';
import type { SubmitOptions } from './tasks-api.js';
import { download, type Downloaded, type DownloadOptions } from './download.js';
import type { GatewayFailure } from './failures.js';
import { checkUploadable, deleteFile, listFiles, upload } from './files-api.js';
import { GatewayRequester, type GatewayClientOptions, type GatewayEndpoints } from './request-core.js';
import { account, models, modelSchema, submit, task } from './tasks-api.js';
import {
  llm,
  toolLogs,
  webFetch,
  webSearch,
  type LlmProtocol,
  type WebFetchOutcome,
  type WebSearchRequest,
  type WebSearchResult,
} from './tools-api.js';
import type { Account, FileList, MediaFile, ModelEntry, Submission, TaskResult } from './types.js';
import { UPLOAD_LIMIT_BYTES } from '../wire/limits.js';

export { checkUploadable };
export type {
  Downloaded,
  DownloadOptions,
  GatewayClientOptions,
  GatewayEndpoints,
  LlmProtocol,
  WebFetchOutcome,
  WebSearchRequest,
  WebSearchResult,
};

type Json = Record<string, unknown>;
type Page = { limit?: number; offset?: number };

/** Every endpoint of the gateway. Failures come back as values; nothing here throws for a gateway's answer. */
export interface GatewayClient {
  account(signal?: AbortSignal): Promise<Result<Account, GatewayFailure>>;
  models(signal?: AbortSignal): Promise<Result<ModelEntry[], GatewayFailure>>;
  modelSchema(slug: string, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  submit(slug: string, input: Json, options?: SubmitOptions): Promise<Result<Submission, GatewayFailure>>;
  task(taskId: string, signal?: AbortSignal): Promise<Result<TaskResult, GatewayFailure>>;
  upload(path: string, signal?: AbortSignal): Promise<Result<MediaFile, GatewayFailure>>;
  files(page?: Page, signal?: AbortSignal): Promise<Result<FileList, GatewayFailure>>;
  deleteFile(fileId: string, signal?: AbortSignal): Promise<Result<void, GatewayFailure>>;
  download(
    url: string,
    destination: string,
    options?: DownloadOptions,
    signal?: AbortSignal,
  ): Promise<Result<Downloaded, GatewayFailure>>;
  webSearch(
    request: WebSearchRequest,
    signal?: AbortSignal,
  ): Promise<Result<{ results: WebSearchResult[]; answer: string | null }, GatewayFailure>>;
  webFetch(urls: string[], signal?: AbortSignal): Promise<Result<WebFetchOutcome, GatewayFailure>>;
  toolLogs(page?: Page, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  llm(protocol: LlmProtocol, body: Json, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  close(): Promise<void>;
}

/** The client over HTTP: each endpoint lives with its kind (tasks, files, downloads, tools); they share one request core. */
export class HttpGatewayClient implements GatewayClient {
  private readonly core: GatewayRequester;
  private readonly uploadLimitBytes: number;

  constructor(options: GatewayClientOptions) {
    this.core = new GatewayRequester(options);
    this.uploadLimitBytes = options.uploadLimitBytes ?? UPLOAD_LIMIT_BYTES;
  }

  account(signal?: AbortSignal) {
    return account(this.core, signal);
  }

  models(signal?: AbortSignal) {
    return models(this.core, signal);
  }

  modelSchema(slug: string, signal?: AbortSignal) {
    return modelSchema(this.core, slug, signal);
  }

  submit(slug: string, input: Json, options: SubmitOptions = {}) {
    return submit(this.core, slug, input, options);
  }

  task(taskId: string, signal?: AbortSignal) {
    return task(this.core, taskId, signal);
  }

  upload(path: string, signal?: AbortSignal) {
    return upload(this.core, path, this.uploadLimitBytes, signal);
  }

  files(page: Page = {}, signal?: AbortSignal) {
    return listFiles(this.core, page, signal);
  }

  deleteFile(fileId: string, signal?: AbortSignal) {
    return deleteFile(this.core, fileId, signal);
  }

  download(url: string, destination: string, options: DownloadOptions = {}, signal?: AbortSignal) {
    return download(this.core, url, destination, options, signal);
  }

  webSearch(request: WebSearchRequest, signal?: AbortSignal) {
    return webSearch(this.core, request, signal);
  }

  webFetch(urls: string[], signal?: AbortSignal) {
    return webFetch(this.core, urls, signal);
  }

  toolLogs(page: Page = {}, signal?: AbortSignal) {
    return toolLogs(this.core, page, signal);
  }

  llm(protocol: LlmProtocol, body: Json, signal?: AbortSignal) {
    return llm(this.core, protocol, body, signal);
  }

  close(): Promise<void> {
    return this.core.close();
  }
}
