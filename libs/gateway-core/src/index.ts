export * from './gateway';
export { authenticateCaller } from './edge-checks';
export { serviceHealth, type ServiceHealth } from './proxy';
export { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_S } from './cors';
export { RATE_LIMITED_TITLE, type PerUserLimit, type RateLimits, perUserLimit } from './rate-limits';
export { ErasureHolds, type ErasureEpochRow, type ErasureHoldsOptions } from './erasure-holds';
export * from './changes';
