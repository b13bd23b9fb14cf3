'use strict'
// The README's Node.js example, run as it is printed: saved as a file in a folder that has what it
// names (./bindings/node, ggml-base.en.bin, talk.wav), then `node transcribe.js`.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const path = require('path')
const { execFileSync } = require('child_process')
const { micro, speechWav, tmp } = require('./helpers')

function readmeNodeExample() {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('### From Node.js'))
  const m = /```js\n([\s\S]*?)```/.exec(section)
  assert.ok(m, 'the README has a js block under "From Node.js"')
  return m[1]
}

test('the README\'s Node.js example runs as printed', () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'readme-'))
  fs.mkdirSync(path.join(dir, 'bindings'))
  fs.symlinkSync(path.resolve(__dirname, '..'), path.join(dir, 'bindings', 'node'))
  fs.copyFileSync(micro, path.join(dir, 'ggml-base.en.bin'))
  fs.copyFileSync(speechWav(), path.join(dir, 'talk.wav'))
  fs.writeFileSync(path.join(dir, 'transcribe.js'), readmeNodeExample())
  const out = execFileSync(process.execPath, ['transcribe.js'], { cwd: dir, encoding: 'utf8', timeout: 120000 })
  assert.match(out, /\(\d+ segments\)/)
  fs.rmSync(dir, { recursive: true, force: true })
})
