export { backoffDelayMs, type BackoffOptions } from './backoff';
