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
const nst = process.env.HARK_TEST_NST // micro whose weights write the non-speech token "(" now and then
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

// Runs fn({ dir, play(wav) }) with a PulseAudio daemon of the test's own (its socket in a
// temporary folder, a null sink 'hark_null' whose monitor is 'hark_null.monitor'), this process's
// libpulse pointed at it; play() plays a file into the sink and returns once it has played.
// Skips the test, saying why, where hark has no capture or the daemon cannot start.
async function withPulse(t, fn) {
  const { spawn, spawnSync } = require('child_process')
  if (!require('..').captureSupported) return t.skip('hark was built without PulseAudio (libpulse-dev)')
  if (!have('pulseaudio') || !have('paplay') || !have('pactl'))
    return t.skip('pulseaudio, pactl or paplay is not installed (Debian: pulseaudio pulseaudio-utils)')
  const dir = fs.mkdtempSync(path.join(tmp, 'pulse-'))
  const env = { ...process.env, XDG_RUNTIME_DIR: dir, HOME: dir, PULSE_RUNTIME_PATH: path.join(dir, 'run'),
                PULSE_SERVER: `unix:${dir}/sock` }
  const daemon = spawn('pulseaudio', ['--daemonize=no', '--exit-idle-time=-1', '-n', '--disable-shm=yes',
    `--load=module-native-protocol-unix auth-anonymous=1 socket=${dir}/sock`,
    '--load=module-null-sink sink_name=hark_null'], { env, stdio: 'ignore' })
  const saved = { PULSE_SERVER: process.env.PULSE_SERVER, PULSE_RUNTIME_PATH: process.env.PULSE_RUNTIME_PATH }
  try {
    let up = false
    for (let i = 0; i < 50 && !up; ++i) {
      up = spawnSync('pactl', ['info'], { env, stdio: 'ignore' }).status === 0
      if (!up) await new Promise((r) => setTimeout(r, 100))
    }
    if (!up) return t.skip('the PulseAudio daemon did not start here')
    process.env.PULSE_SERVER = env.PULSE_SERVER // libpulse in this process connects to the test's daemon
    process.env.PULSE_RUNTIME_PATH = env.PULSE_RUNTIME_PATH
    const play = (wav) =>
      new Promise((resolve) => spawn('paplay', ['--device=hark_null', wav], { env, stdio: 'ignore' }).once('exit', resolve))
    await fn({ dir, play })
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v
    daemon.kill()
    await new Promise((r) => daemon.once('exit', r).once('error', r))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { tmp, micro, tiny, tdrz, nst, speechWav, wavInt16, wavFloat32, sharedVad, fast, have, withPulse }
