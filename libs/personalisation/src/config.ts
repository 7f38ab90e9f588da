import { readFileSync } from 'node:fs';
import { PersonalisationConfig } from '@udp/contracts';
import { BUILT_IN_COMPONENTS, builtInComponent } from './components';
import builtIn from './endpoints.json';

/** A personalisation configuration that cannot be used: start-up stops with this message. */
export class PersonalisationConfigError extends Error {
  override readonly name = 'PersonalisationConfigError';
}

/**
 * The endpoints of every codops: `endpoints.json` beside this file (shipped in the build), replaced as a whole by
 * the file named in PERSONALISATION_CONFIG_FILE or by the JSON in PERSONALISATION_CONFIG. Validated with zod; every
 * component named must exist.
 */
export function loadPersonalisationConfig(env: NodeJS.ProcessEnv = process.env): PersonalisationConfig {
  let raw: unknown = builtIn;
  let source = 'built-in endpoints.json';
  try {
    if (env.PERSONALISATION_CONFIG) {
      source = 'PERSONALISATION_CONFIG';
      raw = JSON.parse(env.PERSONALISATION_CONFIG);
    } else if (env.PERSONALISATION_CONFIG_FILE) {
      source = env.PERSONALISATION_CONFIG_FILE;
      raw = JSON.parse(readFileSync(env.PERSONALISATION_CONFIG_FILE, 'utf8'));
    }
  } catch (error) {
    throw new PersonalisationConfigError(`personalisation config (${source}): ${(error as Error).message}`);
  }
  const parsed = PersonalisationConfig.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new PersonalisationConfigError(`personalisation config (${source}) is invalid:\n${lines.join('\n')}`);
  }
  for (const [codops, c] of Object.entries(parsed.data.codops)) {
    for (const [name, endpoint] of Object.entries(c.endpoints)) {
      for (const component of [...Object.keys(endpoint.components), ...(endpoint.fallback ? [endpoint.fallback] : [])]) {
        if (!builtInComponent(component)) {
          throw new PersonalisationConfigError(
            `personalisation config (${source}): codops.${codops}.endpoints.${name}: unknown component ${component} (known: ${Object.keys(BUILT_IN_COMPONENTS).join(', ')})`,
          );
        }
      }
    }
  }
  return parsed.data;
}
