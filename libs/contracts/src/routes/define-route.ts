import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from '../zod';

/**
 * One public HTTP operation, declared once: its service mounts it (`mountRoute` in libs/http-kit validates the
 * request with these schemas) and the OpenAPI document registers it, so the two cannot say different things.
 */
export interface Route<Params extends z.ZodType = z.ZodType, Query extends z.ZodType = z.ZodType, Body extends z.ZodType = z.ZodType> {
  /**
   * The operation's stable name in the OpenAPI document (camelCase, unique): generated clients name their calls
   * after it, so renaming one breaks them. libs/contracts/src/operation-ids.unit.spec.ts checks them against the committed client.
   */
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  /** The OpenAPI template: `{name}` is a path parameter. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  /** `[]`: no credentials needed. Absent: the document's default (bearer or sessionToken). */
  security?: RouteConfig['security'];
  request?: {
    params?: Params;
    query?: Query;
    /** Documentation only: the gateway reads these headers, the service never sees them validated. */
    headers?: z.ZodObject;
    /** Always a required JSON body. */
    body?: Body;
  };
  responses: Record<number, ResponseConfig>;
  /** The path parameter (the last one) that runs to the end of the URL, slashes included (`x-rest-parameter`). */
  restParam?: string;
  /** A path parameter that fails its schema names no resource: 404 rather than 400 (an export key, a codops). */
  malformedPathIsNotFound?: boolean;
}

/** A route of any schemas: what tables hold and the document registers. */
export type AnyRoute = Route<z.ZodType, z.ZodType, z.ZodType>;

/** Declares a route; it only checks the shape and keeps the schemas' types for the handler that mounts it. */
export function defineRoute<Params extends z.ZodType = z.ZodType, Query extends z.ZodType = z.ZodType, Body extends z.ZodType = z.ZodType>(
  route: Route<Params, Query, Body>,
): Route<Params, Query, Body> {
  return route;
}

/** The routes of one API area, by name; a group of routes (e.g. one API version) may nest. */
export interface RouteTable {
  [name: string]: AnyRoute | RouteTable;
}

const isRoute = (entry: AnyRoute | RouteTable): entry is AnyRoute => typeof entry.method === 'string' && typeof entry.path === 'string';

/** Every route of a table, nested groups included, in the order declared. */
export function routesIn(table: RouteTable): AnyRoute[] {
  return Object.values(table).flatMap((entry) => (isRoute(entry) ? [entry] : routesIn(entry)));
}

/** Adds one route to the OpenAPI registry. */
export function registerRoute(registry: OpenAPIRegistry, route: AnyRoute): void {
  const { operationId, method, path, summary, description, tags, deprecated, security, request, responses, restParam } = route;
  const { params, query, headers, body } = request ?? {};
  registry.registerPath({
    operationId,
    method,
    path,
    tags,
    summary,
    ...(description !== undefined && { description }),
    ...(deprecated !== undefined && { deprecated }),
    ...(security !== undefined && { security }),
    // OpenAPI has no path parameter that holds slashes: the extension tells clients (libs/api-client) to send this
    // one's slashes as they are and encode each segment, where a generic client would encode them as %2F.
    ...(restParam !== undefined && { 'x-rest-parameter': restParam }),
    ...(request && {
      request: {
        ...(params && { params: params as z.ZodObject }),
        ...(query && { query: query as z.ZodObject }),
        ...(headers && { headers }),
        ...(body && { body: { required: true, content: { 'application/json': { schema: body } } } }),
      },
    }),
    responses,
  });
}
