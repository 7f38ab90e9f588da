export * from './gateway';
export { serviceAnswers } from './proxy';
