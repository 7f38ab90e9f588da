import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi.generated';

export type { components, operations, paths } from './openapi.generated';

/** A client of the public API whose every call is typed by the OpenAPI document: path, parameters, body, answers. */
export type ApiClient = Client<paths>;

/**
 * openapi-fetch over the global fetch (Node 20+, browsers): `client.GET('/api/history/v2', { params: { query } })`
 * answers `{ data }` on 2xx or `{ error }` (the problem+json) otherwise, with `response` beside them.
 * Credentials go in `headers`, e.g. `{ authorization: 'Bearer <token>' }`.
 */
export function createApiClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): ApiClient {
  return createClient<paths>({ ...options, baseUrl });
}
