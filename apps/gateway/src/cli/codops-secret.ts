import { resolve } from 'node:path';
import { codopsFileSecret, loadPersonalisationConfig } from '@udp/personalisation';

/**
 * `npm run codops-secret -- <codops>`: prints (only) the secret that unlocks the debug block of a configured codops
 * for the embedded gateway started on the same DATA_DIR (created if the system has not started yet).
 */
function main(): void {
  const codops = process.argv[2];
  const config = loadPersonalisationConfig(process.env);
  if (!codops || !Object.hasOwn(config.codops, codops)) {
    process.stderr.write(`usage: npm run codops-secret -- <codops>   (configured: ${Object.keys(config.codops).join(', ')})\n`);
    process.exit(2);
  }
  if (process.env.CODOPS_SECRETS) {
    process.stderr.write('codops-secret: CODOPS_SECRETS is set; the gateway uses those secrets, not the DATA_DIR ones\n');
    process.exit(2);
  }
  process.stdout.write(`${codopsFileSecret(resolve(process.env.DATA_DIR ?? './data'), codops)}\n`);
}

main();
