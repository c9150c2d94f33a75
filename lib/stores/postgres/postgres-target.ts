/**
 * The server a connection string or a pool's options lead to, for messages: `host:port/database`, never the
 * user's password (nor the user: a log line needs neither).
 */
export function describeTarget(config: string | object | undefined): string {
  if (config === undefined) return 'PostgreSQL';
  if (typeof config === 'string') return fromUrl(config);
  const options = config as { connectionString?: unknown; host?: unknown; port?: unknown; database?: unknown };
  if (typeof options.connectionString === 'string') return fromUrl(options.connectionString);
  const host = typeof options.host === 'string' ? options.host : (process.env.PGHOST ?? 'localhost');
  const port = typeof options.port === 'number' || typeof options.port === 'string' ? options.port : 5432;
  const database = typeof options.database === 'string' ? options.database : (process.env.PGDATABASE ?? '');
  return `${host}:${port}/${database}`;
}

function fromUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || new URLSearchParams(parsed.search).get('host') || 'localhost';
    return `${host}:${parsed.port || 5432}${parsed.pathname || '/'}`;
  } catch {
    return 'PostgreSQL (a connection string that is no URL)';
  }
}
