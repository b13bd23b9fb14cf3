'use strict'
// Values whisper.rn's native code replaces instead of refusing (maxThreads <= 0, realtimeAudioSec
// <= 0, vadMs < 2000, realtimeAudioMinSec outside [0.5, slice], a VAD's nThreads 0): an app written
// for whisper.rn passes them, so they work here too, each with a warning in the native log. What
// whisper.rn would misbehave on (a string, NaN) is still refused. And a default that is
// whisper.rn's, not hark's CLI's: suppressNst off.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro, speechWav, wavInt16, sharedVad, fast } = require('./helpers')

async function withLog(fn) {
  const lines = []
  const sub = hark.addNativeLogListener((level, text) => lines.push({ level, text }))
  await hark.toggleNativeLog(true)
  try {
    await fn()
  } finally {
    await hark.toggleNativeLog(false)
    sub.remove()
  }
  return lines.filter((l) => l.level === 'warn').map((l) => l.text)
}

test('whisper.rn substitutions: maxThreads <= 0 is the default thread count, with a warning', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const ref = await ctx.transcribe(speechWav(), fast).promise
  const warnings = await withLog(async () => {
    for (const maxThreads of [0, -1]) {
      const r = await ctx.transcribe(speechWav(), { ...fast, maxThreads }).promise
      assert.deepEqual(r.segments, ref.segments, `maxThreads ${maxThreads}`)
    }
  })
  assert.equal(warnings.filter((w) => w.includes("option 'maxThreads'") && w.includes('as whisper.rn does')).length, 2)
  // still refused: not a number at all
  await assert.rejects(ctx.transcribe(speechWav(), { ...fast, maxThreads: 'two' }).promise, /maxThreads/)
  await assert.rejects(ctx.transcribe(speechWav(), { ...fast, maxThreads: NaN }).promise, /maxThreads/)
  await ctx.release()
})

test('whisper.rn substitutions: realtime audio lengths and vadMs', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  let events = []
  const warnings = await withLog(async () => {
    const rt = await ctx.transcribeRealtime({
      ...fast,
      audioSource: 'push',
      realtimeAudioSec: 0, // -> 30
      realtimeAudioMinSec: 0.1, // -> 1
      useVad: true,
      vadMs: 500, // -> 2000
    })
    rt.subscribe((e) => events.push(e))
    const pcm = wavInt16(speechWav())
    for (let at = 0; at < pcm.length; at += 1600) await rt.push(pcm.subarray(at, at + 1600))
    rt.end()
    await rt.done
  })
  for (const name of ['realtimeAudioSec', 'realtimeAudioMinSec', 'vadMs'])
    assert.ok(warnings.some((w) => w.includes(`option '${name}'`)), `${name}: ${JSON.stringify(warnings)}`)
  assert.ok(events.length > 0)
  const last = events[events.length - 1]
  assert.equal(last.isCapturing, false)
  assert.ok(last.data && typeof last.data.result === 'string')
  // still refused: a string
  await assert.rejects(ctx.transcribeRealtime({ ...fast, audioSource: 'push', vadMs: 'long' }), /vadMs/)
  await ctx.release()
})

test('whisper.rn substitutions: a VAD context with nThreads 0 gets the default', { skip: !sharedVad('silero-v6.2.0-ggml.bin') && 'no shared Silero VAD model' }, async () => {
  const warnings = await withLog(async () => {
    const vad = await hark.initWhisperVad({ filePath: sharedVad('silero-v6.2.0-ggml.bin'), nThreads: 0 })
    assert.ok(Array.isArray(await vad.detectSpeech(speechWav())))
    await vad.release()
  })
  assert.ok(warnings.some((w) => w.includes("option 'nThreads'")), JSON.stringify(warnings))
  await assert.rejects(hark.initWhisperVad({ filePath: sharedVad('silero-v6.2.0-ggml.bin'), nThreads: -1 }), /nThreads/)
})

test("suppressNst is off by default, as whisper.rn's (whisper.cpp's) is: non-speech tokens can be written", async (t) => {
  const { nst } = require('./helpers')
  if (!nst) return t.skip('HARK_TEST_NST is not set (run.sh makes it)')
  const ctx = await hark.initWhisper({ filePath: nst })
  const byDefault = await ctx.transcribe(speechWav(), fast).promise
  assert.ok(byDefault.result.includes('('), `the model's "(" was suppressed: ${JSON.stringify(byDefault.result)}`)
  const suppressed = await ctx.transcribe(speechWav(), { ...fast, suppressNst: true }).promise
  assert.ok(!suppressed.result.includes('('), JSON.stringify(suppressed.result))
  await ctx.release()
})
