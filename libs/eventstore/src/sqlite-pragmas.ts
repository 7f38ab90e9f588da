/**
 * The pragmas of every connection to an event store file, the readers' (sqlite.ts) and the writer's
 * (sqlite-writer.ts). WAL with synchronous=FULL: a commit is on disk (fsync) before it is answered, and readers
 * see every answered commit; a connection waits up to 5 s for another's lock instead of failing at once.
 */
export const CONNECTION_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000'];
