import type { RequestRecord } from './report';

export interface Answer {
  status: number | null;
  headers: Headers;
  text: string;
  /** Why no answer came, when status is null. */
  error?: string;
}

/**
 * GET requests against the API under test. Each request is recorded on the check that made it, so the
 * report shows exactly what was asked. Bodies arrive decoded (fetch handles gzip and br).
 */
export class CatalogueClient {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 15_000,
  ) {}

  async get(path: string, log: RequestRecord[], headers: Record<string, string> = {}): Promise<Answer> {
    const url = `${this.baseUrl.replace(/\/$/, '')}${path}`;
    try {
      const res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
      const text = await res.text();
      log.push({ method: 'GET', path, status: res.status });
      return { status: res.status, headers: res.headers, text };
    } catch (error) {
      log.push({ method: 'GET', path, status: null });
      return { status: null, headers: new Headers(), text: '', error: (error as Error).message };
    }
  }
}
