import { err, ok, type Result } from '../result.js';

/** Where a webhook inbox listens. */
export interface ListenAddress {
  host: string;
  /** 0 takes a free port. */
  port: number;
}

/**
 * `HOST:PORT` (`127.0.0.1:9000`, `[::1]:9000`, `0.0.0.0:0`) or a port alone (on 127.0.0.1); a
 * message saying what is wrong otherwise. Checked before a run starts: a bad address would
 * otherwise stop the run after it had begun, or give the gateway a webhook URL it refuses.
 */
export function parseListenAddress(text: string): Result<ListenAddress, string> {
  const colon = text.lastIndexOf(':');
  const hostPart = colon < 0 ? '127.0.0.1' : text.slice(0, colon);
  const portPart = colon < 0 ? text : text.slice(colon + 1);
  const host = hostPart.startsWith('[') && hostPart.endsWith(']') ? hostPart.slice(1, -1) : hostPart;
  const port = /^\d{1,5}$/.test(portPart) ? Number(portPart) : Number.NaN;
  if (host === '' || /[\s/[\]]/.test(host) || !(port >= 0 && port <= 65535))
    return err(`must be HOST:PORT, such as 127.0.0.1:9000 (port 0 takes a free one), got ${JSON.stringify(text)}`);
  return ok({ host, port });
}
