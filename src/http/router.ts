// Matches a method and path against the route table. Static paths are one map lookup; paths with
// parameters (`/v1/scores/:event_id`) are tried segment by segment. Built once at start.
//
// A known path with another method is reported as such, so the server can answer 405 with an
// Allow header instead of 404. A static path wins over a pattern that would match it.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface Routable {
  readonly method: HttpMethod;
  readonly pattern: string;
}

export type RouteMatch<R> =
  | { readonly kind: 'found'; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: 'method_not_allowed'; readonly allowed: readonly HttpMethod[]; readonly routes: readonly R[] }
  | { readonly kind: 'not_found' };

interface PatternEntry<R> {
  readonly segments: readonly string[];
  /** Index of each `:param` segment and its name. */
  readonly paramNames: ReadonlyArray<readonly [number, string]>;
  readonly byMethod: Map<HttpMethod, R>;
}

const kNoParams: Readonly<Record<string, string>> = Object.freeze(Object.create(null));
const kNotFound = { kind: 'not_found' } as const;

export class Router<R extends Routable> {
  readonly #static = new Map<string, Map<HttpMethod, R>>();
  readonly #patterns: PatternEntry<R>[] = [];

  constructor(routes: readonly R[]) {
    for (const route of routes) this.#add(route);
  }

  #add(route: R): void {
    if (!route.pattern.startsWith('/')) throw new Error(`route pattern must start with /: ${route.pattern}`);
    if (!route.pattern.includes(':')) {
      const byMethod = this.#static.get(route.pattern) ?? new Map<HttpMethod, R>();
      if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
      byMethod.set(route.method, route);
      this.#static.set(route.pattern, byMethod);
      return;
    }
    const segments = route.pattern.split('/');
    let entry = this.#patterns.find((candidate) => candidate.segments.join('/') === segments.join('/'));
    if (entry === undefined) {
      const paramNames: Array<[number, string]> = [];
      segments.forEach((segment, index) => {
        if (segment.startsWith(':')) paramNames.push([index, segment.slice(1)]);
      });
      entry = { segments, paramNames, byMethod: new Map() };
      this.#patterns.push(entry);
    }
    if (entry.byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
    entry.byMethod.set(route.method, route);
  }

  match(method: string, path: string): RouteMatch<R> {
    // A static path is its routes' alone: GET /v1/rules/publish is 405 (Allow: POST), not the rule
    // "publish", an id no rule may take (rules-request.ts, kReservedRuleIds).
    const byMethod = this.#static.get(path);
    return byMethod !== undefined ? pick(byMethod, method, kNoParams) : this.#matchPatterns(method, path);
  }

  #matchPatterns(method: string, path: string): RouteMatch<R> {
    const segments = path.split('/');
    let notAllowed: RouteMatch<R> | null = null;
    for (const entry of this.#patterns) {
      const params = matchSegments(entry, segments);
      if (params === null) continue;
      const found = pick(entry.byMethod, method, params);
      if (found.kind === 'found') return found;
      notAllowed = notAllowed === null ? found : mergeNotAllowed(notAllowed, found);
    }
    return notAllowed ?? kNotFound;
  }
}

function pick<R>(byMethod: Map<HttpMethod, R>, method: string, params: Readonly<Record<string, string>>): RouteMatch<R> {
  const route = byMethod.get(method as HttpMethod);
  if (route !== undefined) return { kind: 'found', route, params };
  return { kind: 'method_not_allowed', allowed: [...byMethod.keys()], routes: [...byMethod.values()] };
}

function mergeNotAllowed<R>(a: RouteMatch<R>, b: RouteMatch<R>): RouteMatch<R> {
  if (a.kind !== 'method_not_allowed' || b.kind !== 'method_not_allowed') return a;
  return { kind: 'method_not_allowed', allowed: [...new Set([...a.allowed, ...b.allowed])], routes: [...a.routes, ...b.routes] };
}

function matchSegments<R>(entry: PatternEntry<R>, segments: readonly string[]): Record<string, string> | null {
  if (segments.length !== entry.segments.length) return null;
  for (let i = 0; i < segments.length; i++) {
    const expected = entry.segments[i]!;
    if (expected.startsWith(':')) {
      if (segments[i] === '') return null;
    } else if (expected !== segments[i]) {
      return null;
    }
  }
  const params: Record<string, string> = Object.create(null);
  for (const [index, name] of entry.paramNames) {
    try {
      params[name] = decodeURIComponent(segments[index]!);
    } catch {
      return null; // malformed percent-encoding: no route has such a path
    }
  }
  return params;
}
