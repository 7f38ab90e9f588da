// Which Node.js lines we support. Production runs the newest LTS line every dependency supports (26; see
// docs/deployment.md); development still works on the 20.19+ a developer may have, with a one-line notice.
export const PRODUCTION_NODE = 26;

/** Node 20 is past its end of life, odd lines are never LTS; 22 (maintenance), 24 and 26 are supported. */
export function nodeSupported(version = process.versions.node) {
  const major = Number(version.split('.')[0]);
  return major >= 22 && major % 2 === 0;
}

/** Prints one line on stderr when this Node is unsupported; runs anyway. */
export function noticeUnsupportedNode(tool) {
  if (nodeSupported()) return;
  process.stderr.write(
    `${tool}: Node.js ${process.version} is past its end of life and unsupported; it still runs for development, production uses Node ${PRODUCTION_NODE} (README "Quick start")\n`,
  );
}
