'use strict'
// What the binding's tests share: the models run.sh made, spoken audio (espeak-ng, else sox),
// the shared VAD reference, and the fast options (greedy, no fallback) the tests run with.
const fs = require('fs')
const path = require('path')
const { execFileSync } = require('child_process')

const tmp = process.env.HARK_TEST_TMP || fs.mkdtempSync('/tmp/hark-node-')
const micro = process.env.HARK_TEST_MICRO
const tiny = process.env.HARK_TEST_TINY
const tdrz = process.env.HARK_TEST_TDRZ // micro.en written with a speaker-turn token (--tdrz)
if (!micro) throw new Error('HARK_TEST_MICRO is not set: run the tests through test/run.sh (ctest node.binding)')

function have(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

// A spoken sentence as a 16 kHz mono WAV (made once per process).
let speechPath
function speechWav() {
  if (speechPath) return speechPath
  speechPath = path.join(tmp, `speech-${process.pid}.wav`)
  const raw = path.join(tmp, `speech-raw-${process.pid}.wav`)
  if (have('espeak-ng')) {
    execFileSync('espeak-ng', ['-w', raw, 'hark transcribes speech on your own machine'])
    if (have('sox')) execFileSync('sox', [raw, '-r', '16000', '-c', '1', speechPath])
    else fs.copyFileSync(raw, speechPath)
  } else {
    execFileSync('sox', ['-n', '-r', '16000', '-c', '1', speechPath, 'synth', '2', 'sine', '300-900'])
  }
  return speechPath
}

// The samples of a 16-bit mono WAV written by sox/espeak-ng (data chunk found by its tag).
function wavInt16(file) {
  const b = fs.readFileSync(file)
  let at = 12
  while (at + 8 <= b.length) {
    const id = b.toString('ascii', at, at + 4)
    const size = b.readUInt32LE(at + 4)
    if (id === 'data') return new Int16Array(b.buffer.slice(b.byteOffset + at + 8, b.byteOffset + at + 8 + size))
    at += 8 + size + (size & 1)
  }
  throw new Error(`${file}: no data chunk`)
}

function sharedVad(name) {
  const p = path.join(process.env.HARK_SHARED_DIR || '', 'vad', name)
  return fs.existsSync(p) ? p : null
}

// Greedy, no temperature fallback, one thread: random-weight models otherwise decode long.
const fast = { language: 'en', temperatureInc: 0, maxThreads: 1 }

module.exports = { tmp, micro, tiny, tdrz, speechWav, wavInt16, sharedVad, fast, have }
