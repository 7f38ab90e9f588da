export * from './report';
export { CHECKS, ITEMS_PATH, type CheckDefinition, type CheckRun } from './checks';
export { emptyValueElements, parseItemInfo, parseItems } from './catalogue-xml';
export { runConformance, type ConformanceOptions } from './run';
export { renderHtml, renderJson, renderText } from './render';
