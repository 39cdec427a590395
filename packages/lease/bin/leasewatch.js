#!/usr/bin/env node
// A file that exists before the build, so npm links the command when the workspace is installed.
import "../dist/cli.js";
