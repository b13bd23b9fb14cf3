'use strict'
// The native addon (build/hark.node), shared by this package's entry points.
const path = require('path')
const fs = require('fs')

// The addon: $HARK_NODE_ADDON, else this package's build (npm install), else hark's main build
// (the repository's build/, where scripts/test puts it).
function loadAddon() {
  const candidates = [
    process.env.HARK_NODE_ADDON,
    path.join(__dirname, 'build', 'hark.node'),
    path.join(__dirname, '..', '..', 'build', 'hark.node'),
  ].filter(Boolean)
  for (const file of candidates) {
    if (fs.existsSync(file)) return require(file)
  }
  throw new Error(
    `hark-whisper: the native addon hark.node was not found (looked in: ${candidates.join(', ')}); ` +
      'build it with `npm install` in bindings/node or with hark\'s cmake build',
  )
}
module.exports = loadAddon()
