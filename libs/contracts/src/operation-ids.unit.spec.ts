import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLIC_ROUTES, buildOpenApiDocument } from './openapi';

/**
 * Generated clients name their calls after the operationIds (libs/api-client), so each one is a public name: present on
 * every operation, unique, camelCase, with the API version as a suffix where one operation exists in two versions.
 * The names already published are those of the committed client (`libs/api-client/src/openapi.generated.ts`): the
 * document must give every operation of it the same name, so a rename fails here until the client is generated
 * again, and then shows in review as a change of the client. A new route needs no edit here.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

const operations = Object.entries(buildOpenApiDocument().paths ?? {}).flatMap(([path, item]) =>
  Object.entries(item ?? {})
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({
      key: key(method, path),
      path,
      method,
      operationId: (operation as { operationId?: string }).operationId,
    })),
);

/** `method path` -> operationId, as the committed client names them (`'<path>': { ... <method>: operations['<id>'];`). */
function publishedNames(): Record<string, string> {
  const client = readFileSync(join(__dirname, '..', '..', 'api-client', 'src', 'openapi.generated.ts'), 'utf8');
  const paths = client.slice(client.indexOf('export interface paths {'), client.indexOf('export type webhooks'));
  const names: Record<string, string> = {};
  let path = '';
  for (const line of paths.split('\n')) {
    const pathLine = /^ {2}'([^']+)': \{$/.exec(line);
    if (pathLine) path = pathLine[1];
    const operation = /^ {4}(\w+): operations\['([^']+)'\];$/.exec(line);
    if (operation) names[key(operation[1], path)] = operation[2];
  }
  return names;
}

/** The path without its version segment (`/v2`) and with its parameters unnamed: one operation's versions share it. */
const unversioned = (path: string) => path.replace(/\/v\d+(?=\/|$)/, '').replace(/\{[^}]+\}/g, '{}');
const versionOf = (path: string) => /\/v(\d+)(?=\/|$)/.exec(path)?.[1];

describe('operationIds of the OpenAPI document', () => {
  it('every route of the tables is in the document under its own operationId', () => {
    expect(operations.length).toBeGreaterThan(0);
    const inDocument = Object.fromEntries(operations.map((o) => [o.key, o.operationId]));
    const fromTables = Object.fromEntries(PUBLIC_ROUTES.map((r) => [key(r.method, r.path), r.operationId]));
    expect(inDocument).toEqual(fromTables);
  });

  it('every operation has one, in camelCase', () => {
    for (const { key, operationId } of operations)
      expect({ key, operationId }).toEqual({ key, operationId: expect.stringMatching(/^[a-z][a-zA-Z0-9]*$/) });
  });

  it('no two operations share one', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toStrictEqual([]);
  });

  it('a version suffix names the version of its path, and an operation in two versions has it in the newer ones', () => {
    const wrong: string[] = [];
    for (const { key, path, method, operationId = '' } of operations) {
      const suffix = /V(\d+)$/.exec(operationId)?.[1];
      if (suffix !== undefined && suffix !== versionOf(path)) wrong.push(`${key}: ${operationId} (path version ${versionOf(path)})`);
      const versions = operations.filter((o) => o.method === method && unversioned(o.path) === unversioned(path));
      const version = versionOf(path);
      if (versions.length > 1 && version !== undefined && suffix !== version) wrong.push(`${key}: ${operationId} lacks V${version}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the published names (the committed client) are kept: a rename or a removal regenerates the client on purpose', () => {
    const published = publishedNames();
    expect(Object.keys(published).length).toBeGreaterThan(0);
    expect(Object.fromEntries(operations.map((o) => [o.key, o.operationId]))).toEqual(published);
  });
});
