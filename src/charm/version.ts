// The charm's version: stamped into the bundle by scripts/build.ts, "dev" when run from source.
declare const __CHARM_VERSION__: string | undefined;
export const CHARM_VERSION: string = typeof __CHARM_VERSION__ === 'string' ? __CHARM_VERSION__ : 'dev';
