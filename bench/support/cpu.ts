/** User + system CPU this process has used since `before` (a `process.cpuUsage()` reading), ms. */
export function cpuMsSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}
