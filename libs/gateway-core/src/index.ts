export * from './gateway';
export { authenticateCaller } from './edge-checks';
export { serviceHealth, type ServiceHealth } from './proxy';
export { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_S } from './cors';
export { RATE_LIMITED_TITLE, type RateLimits } from './rate-limits';
export * from './changes';
