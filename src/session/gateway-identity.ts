/** The gateway a connection's tasks and files are on (see Connection.gateway). */
export function gatewayIdentity(local: boolean, baseUrl: string): string {
  if (local) return 'local';
  const url = new URL(baseUrl);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/$/, '');
}

/**
 * The gateway a run with these flags would connect to, before it connects (the plan's and the
 * estimate's look at the step cache): undefined when no address is set, or it is no URL.
 */
export function expectedGateway(
  flags: { local?: boolean; baseUrl?: string },
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (flags.local) return 'local';
  const baseText = flags.baseUrl ?? env.PIPELINE_BASE_URL;
  if (!baseText || !URL.canParse(baseText)) return undefined;
  return gatewayIdentity(false, baseText);
}
