#!/usr/bin/env node
// The package bin: runs the compiled command line (`npm run build` produces dist/).
import '../dist/src/cli/main.js';
