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

// The samples of a mono 16- or 32-bit integer PCM WAV (sox, espeak-ng, the shared clip) as
// floats in [-1, 1], exactly as a decoder scales them.
function wavFloat32(file) {
  const b = fs.readFileSync(file)
  let bits = 16
  let at = 12
  while (at + 8 <= b.length) {
    const id = b.toString('ascii', at, at + 4)
    const size = b.readUInt32LE(at + 4)
    if (id === 'fmt ') bits = b.readUInt16LE(at + 22)
    if (id === 'data') {
      const bytes = b.subarray(at + 8, at + 8 + size)
      const n = size / (bits / 8)
      const out = new Float32Array(n)
      for (let i = 0; i < n; i++)
        out[i] = bits === 16 ? bytes.readInt16LE(2 * i) / 32768 : bytes.readInt32LE(4 * i) / 2147483648
      return out
    }
    at += 8 + size + (size & 1)
  }
  throw new Error(`${file}: no data chunk`)
}

// The same as 16-bit samples (whisper.rn's ArrayBuffer form).
function wavInt16(file) {
  return Int16Array.from(wavFloat32(file), (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32768))))
}

function sharedVad(name) {
  const p = path.join(process.env.HARK_SHARED_DIR || '', 'vad', name)
  return fs.existsSync(p) ? p : null
}

// Greedy, no temperature fallback, one thread: random-weight models otherwise decode long.
const fast = { language: 'en', temperatureInc: 0, maxThreads: 1 }

module.exports = { tmp, micro, tiny, tdrz, speechWav, wavInt16, wavFloat32, sharedVad, fast, have }
