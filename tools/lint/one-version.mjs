#!/usr/bin/env node
// Fails when the installed tree holds two versions of one package of a family that must move together
// (OpenTelemetry: two copies of `core` or `sdk-trace-base` mean two tracer providers' worth of globals and
// spans that one copy's processors never see). Reads `npm ls --all --json`, so it checks what is installed.
import { spawnSync } from 'node:child_process';

const FAMILIES = [/^@opentelemetry\//];

const ls = spawnSync('npm', ['ls', '--all', '--json'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
const tree = JSON.parse(ls.stdout || '{}');
const versions = new Map();
(function walk(deps) {
  for (const [name, node] of Object.entries(deps ?? {})) {
    if (FAMILIES.some((family) => family.test(name)) && node.version) {
      if (!versions.has(name)) versions.set(name, new Set());
      versions.get(name).add(node.version);
    }
    walk(node.dependencies);
  }
})(tree.dependencies);

const duplicated = [...versions].filter(([, set]) => set.size > 1);
if (versions.size === 0) {
  console.error('one-version: npm ls listed no @opentelemetry package; is node_modules installed?');
  process.exit(1);
}
if (duplicated.length) {
  for (const [name, set] of duplicated) console.error(`one-version: ${name} is installed as ${[...set].join(' and ')}`);
  console.error('Align the pins in package.json so that every package of the family resolves to one version.');
  process.exit(1);
}
console.log(`one-version: ${versions.size} @opentelemetry packages, one version each`);
