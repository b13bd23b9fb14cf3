#!/usr/bin/env node
'use strict'
// `npm install`'s step: builds build/hark.node against hark with cmake, from this repository
// (bindings/node sits inside hark's source tree). Only the addon and the library it links are
// built (no tests, no benchmarks). Offline: the Node-API headers come from node_modules
// (node-addon-api, node-api-headers), never from nodejs.org.
//
// HARK_NODE_SKIP_BUILD=1 skips it (hark's own build makes build/hark.node in its build folder,
// which index.js also finds). HARK_NODE_JOBS sets the parallel jobs (default: the cores).
const { execFileSync } = require('child_process')
const fs = require('fs')
const os = require('os')
const path = require('path')

const here = path.join(__dirname, '..')
const root = path.join(here, '..', '..')
const buildDir = path.join(here, 'build')

if (process.env.HARK_NODE_SKIP_BUILD) {
  console.log('hark-whisper: HARK_NODE_SKIP_BUILD set, not building the addon')
  process.exit(0)
}
if (!fs.existsSync(path.join(root, 'include', 'hark', 'hark.hpp'))) {
  console.error(`hark-whisper: hark's source tree is not at ${root}; build the addon with hark's cmake build`)
  process.exit(1)
}
const run = (args) => execFileSync('cmake', args, { stdio: 'inherit' })
run(['-S', root, '-B', buildDir, '-DCMAKE_BUILD_TYPE=Release', '-DHARK_BUILD_TESTS=OFF', '-DHARK_BUILD_BENCH=OFF'])
run(['--build', buildDir, '--target', 'hark_node', '-j', String(process.env.HARK_NODE_JOBS || os.cpus().length)])
console.log(`hark-whisper: built ${path.join(buildDir, 'hark.node')}`)
