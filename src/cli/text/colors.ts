import picocolors from 'picocolors';

/**
 * Colours only for a person at a terminal. picocolors also turns them on whenever CI is set,
 * which would put escape codes into piped or redirected reports.
 */
export const pc = picocolors.createColors(process.stdout.isTTY === true && !('NO_COLOR' in process.env));
