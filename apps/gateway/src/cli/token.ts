import { resolve } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { maxTokenLifetime } from '../config';

/**
 * `npm run token -- <userId>`: prints (only) a token that the embedded gateway started on the same DATA_DIR
 * accepts. Creates the signing secret if the system has not started yet.
 */
async function main(): Promise<void> {
  const userId = process.argv[2];
  if (!userId) {
    process.stderr.write('usage: npm run token -- <userId>\n');
    process.exit(2);
  }
  const secret = process.env.AUTH_JWT_SECRET ?? fileSecret(resolve(process.env.DATA_DIR ?? './data'), 'jwt-signing');
  // As long-lived as the gateway started with the same environment accepts.
  const lifetime = maxTokenLifetime.safeParse(process.env.AUTH_MAX_TOKEN_LIFETIME_S || undefined);
  if (!lifetime.success) throw new Error('AUTH_MAX_TOKEN_LIFETIME_S must be a whole number of seconds from 60 to 31536000');
  process.stdout.write(`${await signDevToken(secret, userId, lifetime.data)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`token: ${error.message}\n`);
  process.exit(1);
});
