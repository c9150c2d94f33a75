/**
 * How many single-character edits (insertion, deletion, substitution, or swap of two neighbours) turn `a`
 * into `b`, ignoring case: the optimal-string-alignment distance. `wiat` is 1 from `wait`, `fencng` 1 from
 * `fencing`, `holdAtleast` 0 from `holdAtLeast`.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // three rows of the dynamic-programming table are enough: the current one and the two before it
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const substitution = previous[j - 1] + (s[i - 1] === t[j - 1] ? 0 : 1);
      let best = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        best = Math.min(best, beforePrevious[j - 2] + 1);
      current.push(best);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[t.length];
}

/**
 * The known name `name` was most likely meant as: the nearest by {@link editDistance} when it is within
 * a third of the name's length (at least 1 edit), else a known name of 4 characters or more that `name`
 * starts with (`redisUrl` → `redis`, `timeoutMs` → `timeout`); `undefined` when none is close.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= allowed) return best;
  const lower = name.toLowerCase();
  return known
    .filter((candidate) => candidate.length >= 4 && lower.startsWith(candidate.toLowerCase()))
    .sort((a, b) => b.length - a.length)[0];
}
