/**
 * What the spec removes from every span, exported or shown in a debug block: query strings (they can hold
 * personal data), database statements and filter expressions (they hold ids and values).
 */
const REMOVED = new Set([
  'url.query',
  'http.query',
  'db.statement',
  'db.query.text',
  'db.query.summary',
  'db.mongodb.filter',
  'db.filter',
  'db.vector.filter',
  'messaging.kafka.message.key',
]);
const REMOVED_PREFIXES = ['db.query.parameter.', 'db.operation.parameter.'];
const URL_ATTRIBUTES = ['url.full', 'http.url', 'http.target'];

/** Redacts an attributes object in place (the SDK's ended spans keep theirs in a plain object). */
export function redactAttributes(attributes: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(attributes)) {
    if (REMOVED.has(key) || REMOVED_PREFIXES.some((p) => key.startsWith(p))) delete attributes[key];
  }
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string' && value.includes('?')) attributes[key] = value.slice(0, value.indexOf('?'));
  }
  return attributes;
}
