import { type AnyRoute, z } from '@udp/contracts';

/**
 * A minimal valid request body of a route, made from its zod schema (through its JSON Schema), for tests that send
 * every route of the tables (the isolation matrix): a new route with a body needs no hand-written sample unless its
 * schema says more than this reads (then `sampleBody` says so, naming the route).
 *
 * Required fields get a plain value (`B-<name>` strings, the minimum of numbers, `false`); a string field that names an
 * id (`ID_FIELDS`) is present even when optional and holds the slot `{<kind>}`, which the caller fills with the ids
 * it tries. Every slot in the sample is listed in `slots`.
 */
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  minimum?: number;
  minLength?: number;
  additionalProperties?: unknown;
  anyOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

/** Body fields that name an id, by the kind of id they hold. */
export const ID_FIELDS: Record<string, string> = { item_id: 'itemId', media_id: 'itemId', itemId: 'itemId', businessId: 'businessId' };

export interface SampleBody {
  /** The body with `{<kind>}` in its id fields. */
  template: unknown;
  /** The kinds of ids its slots take. */
  slots: string[];
}

/** The body with its slots filled (`values` by kind). */
export function fillSlots(template: unknown, values: Record<string, string>): unknown {
  return JSON.parse(
    JSON.stringify(template).replace(/\{(\w+)\}/g, (slot, kind: string) =>
      kind in values ? JSON.stringify(values[kind]).slice(1, -1) : slot,
    ),
  );
}

export function sampleBody(route: AnyRoute): SampleBody | undefined {
  const body = route.request?.body;
  if (!body) return undefined;
  const schema = z.toJSONSchema(body, { unrepresentable: 'any', io: 'input' }) as JsonSchema;
  const slots = new Set<string>();
  const resolve = (s: JsonSchema): JsonSchema => (s.$ref ? resolve(schema.$defs?.[s.$ref.split('/').pop()!] ?? {}) : s);
  const sample = (raw: JsonSchema, name: string): unknown => {
    const s = resolve(raw);
    if (s.anyOf) return sample(s.anyOf.find((option) => resolve(option).type !== 'null') ?? s.anyOf[0], name);
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    switch (type) {
      case 'object': {
        const fields = Object.entries(s.properties ?? {}).filter(([field]) => s.required?.includes(field) || field in ID_FIELDS);
        if (fields.length === 0 && s.additionalProperties !== false) return { b: 'B-value' };
        return Object.fromEntries(fields.map(([field, property]) => [field, sample(property, field)]));
      }
      case 'array':
        return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => sample(s.items ?? {}, name));
      case 'string':
        if (name in ID_FIELDS) {
          slots.add(ID_FIELDS[name]);
          return `{${ID_FIELDS[name]}}`;
        }
        return `B-${name}`.padEnd(s.minLength ?? 0, 'x');
      case 'integer':
      case 'number':
        return s.minimum ?? 1;
      case 'boolean':
        return false;
      default:
        // Any JSON value, or one the JSON Schema cannot state (a refinement): an object fits both here.
        return { b: 'B-value' };
    }
  };
  const template = sample(schema, '');
  const parsed = body.safeParse(fillSlots(template, Object.fromEntries([...slots].map((kind) => [kind, 'urn:B:sample']))));
  if (!parsed.success)
    throw new Error(
      `no valid sample body for ${route.method.toUpperCase()} ${route.path} from its schema (${parsed.error.message}): teach sample-bodies.ts its shape`,
    );
  return { template, slots: [...slots] };
}
