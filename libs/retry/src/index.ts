export { backoffDelayMs, type BackoffOptions } from './backoff';
export * from './time-slices';
