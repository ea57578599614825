/** What a listener gets of a notice PostgreSQL sent on one of the pool's connections. */
export interface DatabaseNotice {
  message?: string;
  detail?: string;
}

const listeners = new Set<(notice: DatabaseNotice) => void>();

/**
 * Listens to the notices of every connection of this process's pools (RAISE NOTICE in a trigger). A notice
 * arrives before the answer to the statement that raised it, so a listener has seen it by the time the
 * statement's promise settles.
 */
export function onDatabaseNotice(listener: (notice: DatabaseNotice) => void): void {
  listeners.add(listener);
}

export function emitDatabaseNotice(notice: DatabaseNotice): void {
  for (const listener of listeners) listener(notice);
}
