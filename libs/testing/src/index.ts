export * from './specification';
export * from './environment';
export * from './process';
export * from './unzip';
