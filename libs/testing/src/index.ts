export * from './specification';
export * from './environment';
