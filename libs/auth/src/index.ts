export * from './internal-identity';
export * from './authenticator';
export * from './secrets';
