import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerCatalogue } from './openapi/catalogue';
import { registerExport } from './openapi/export';
import { registerHealth } from './openapi/health';
import { registerHistory } from './openapi/history';
import { registerPersonalisation } from './openapi/personalisation';
import { registerPlaylists } from './openapi/playlists';
import { registerPreference } from './openapi/preference';
import { registerProfile } from './openapi/profile';

/** Each API area registers its paths; add an area here with one line. */
const AREAS: Array<(registry: OpenAPIRegistry) => void> = [
  registerHealth,
  registerHistory,
  registerPlaylists,
  registerPreference,
  registerProfile,
  registerCatalogue,
  registerExport,
];
AREAS.push(registerPersonalisation);

/** The published OpenAPI document, generated from the same schemas that validate requests. */
export function buildOpenApiDocument(): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  registry.registerComponent('securitySchemes', 'sessionToken', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: '`sessionToken <token>`, as the mobile apps send it',
  });
  for (const register of AREAS) register(registry);
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
