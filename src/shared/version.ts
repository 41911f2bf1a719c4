// The release version, read once from package.json so that `fraud-scorer --version`, /healthz and
// the package agree without a second copy to keep in step. This module sits at
// dist/src/shared/version.js once built, three levels below the package root.
import { readFileSync } from 'node:fs';

export const kVersion: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
