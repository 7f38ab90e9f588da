import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { catalogueApi } from './catalogue';
import { CHANGE_EVENTS, changeEventSchemaName, changesApi } from './changes';
import { exportApi } from './export';
import { historyApi } from './history';
import { personalisationApi } from './personalisation';
import { playlistApi } from './playlists';
import { preferenceApi } from './preference';
import { profileApi } from './profile';
import { type AnyRoute, registerRoute, routesIn } from './routes/define-route';
import { healthApi } from './routes/health';
import { withErasurePending, withRateLimit } from './routes/helpers';

/** Every public route, by API area, in the document's order; add an area here with one line. */
export const PUBLIC_ROUTES: AnyRoute[] = [
  healthApi,
  historyApi,
  playlistApi,
  preferenceApi,
  profileApi,
  catalogueApi,
  exportApi,
  personalisationApi,
  changesApi,
].flatMap(routesIn);

/** The published OpenAPI document, generated from the route tables (one per contract file): the same schemas that validate requests. */
export function buildOpenApiDocument(): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  registry.registerComponent('securitySchemes', 'sessionToken', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: '`sessionToken <token>`, as the mobile apps send it',
  });
  // The data of each live-sync event: a text/event-stream answer cannot reference them, so they are components.
  for (const [name, schema] of Object.entries(CHANGE_EVENTS)) registry.register(changeEventSchemaName(name), schema);
  for (const route of PUBLIC_ROUTES) {
    registerRoute(registry, { ...route, responses: withErasurePending(route, withRateLimit(route.responses)) });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'User-data platform',
      version: '3.0.0',
      description: 'History, playlists, preferences, profile and exports of a media app user.',
    },
    security: [{ bearer: [] }, { sessionToken: [] }],
  });
}
