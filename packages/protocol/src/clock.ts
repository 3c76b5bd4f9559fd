/**
 * Milliseconds since this process began, for a start's own clock (its steps, its helpers' times):
 * process.uptime(), not performance.now(), whose first use loads Node.js's perf_hooks (about 1 ms
 * of every start). Its origin is Node.js's own start, about 1 ms before performance's time origin.
 */
export function sinceStartMs(): number {
  return process.uptime() * 1000;
}
