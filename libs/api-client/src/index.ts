import createClient, { defaultPathSerializer, type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import { REST_PARAMETERS, type paths } from './openapi.generated';

export type { components, operations, paths } from './openapi.generated';

/** A client of the public API whose every call is typed by the OpenAPI document: path, parameters, body, answers. */
export type ApiClient = Client<paths>;

/**
 * A parameter that holds slashes (`{path}` of the preferences: `favorites/urn:show:1/date`) is sent segment by
 * segment, each encoded, with its slashes as they are; every other parameter is one segment, `/` encoded as `%2F`.
 */
function pathSerializer(url: string, pathParams: Record<string, unknown>): string {
  // openapi-fetch hands over the base URL and the OpenAPI path joined: the path is the end of it.
  const schemaPath = Object.keys(REST_PARAMETERS).find((path) => url.endsWith(path));
  const rest = schemaPath === undefined ? undefined : REST_PARAMETERS[schemaPath];
  if (rest === undefined || pathParams?.[rest] === undefined) return defaultPathSerializer(url, pathParams);
  const at = url.lastIndexOf(`{${rest}}`);
  const segments = String(pathParams[rest]).split('/').map(encodeURIComponent).join('/');
  return defaultPathSerializer(url.slice(0, at) + segments + url.slice(at + rest.length + 2), pathParams);
}

/**
 * A segment `.` or `..` is resolved away by fetch, and an empty parameter addresses the collection: either would send
 * the request to another resource (GET /api/preference/{key} with key `.` answers the list of keys, 200, as if it
 * were the document). No such id, key or path segment can be addressed in a URL, so the client refuses it.
 */
const refuseUnaddressablePathParameters: Middleware = {
  onRequest({ schemaPath, params }) {
    for (const [name, value] of Object.entries(params.path ?? {})) {
      const segments = REST_PARAMETERS[schemaPath] === name ? String(value).split('/') : [String(value)];
      if (String(value) === '' || segments.some((segment) => segment === '.' || segment === '..')) {
        throw new TypeError(`path parameter ${name} of ${schemaPath} is ${JSON.stringify(value)}: the URL would address another resource`);
      }
    }
    return undefined;
  },
};

/**
 * openapi-fetch over the global fetch (Node 20+, browsers): `client.GET('/api/history/v2', { params: { query } })`
 * answers `{ data }` on 2xx or `{ error }` (the problem+json) otherwise, with `response` beside them.
 * Credentials go in `headers`, e.g. `{ authorization: 'Bearer <token>' }`.
 */
export function createApiClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): ApiClient {
  const client = createClient<paths>({ pathSerializer, ...options, baseUrl });
  client.use(refuseUnaddressablePathParameters);
  return client;
}
export * from './changes';
