'use strict'
// transcribeRealtime fed by the caller: push(chunk) / end(), and a Node Readable of PCM
// (audioStream); events in whisper.rn's TranscribeRealtimeEvent shape; stop() ends capture and
// resolves after the last event; releasing the context ends a running stream.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Readable } = require('node:stream')
const hark = require('..')
const { micro, speechWav, wavInt16, fast, withPulse } = require('./helpers')

// Every event of a stream, once its last one has been delivered.
async function collect(handle) {
  const events = []
  handle.subscribe((e) => events.push(e))
  const last = await handle.done
  assert.equal(handle.ended, true)
  assert.equal(last, events[events.length - 1])
  return events
}

function checkEvent(e, ctx) {
  assert.equal(e.contextId, ctx.id)
  assert.equal(typeof e.jobId, 'number')
  assert.equal(typeof e.isCapturing, 'boolean')
  assert.equal(e.code, 0, e.error)
  assert.equal(typeof e.processTime, 'number')
  assert.equal(typeof e.recordingTime, 'number')
  assert.ok(e.data && typeof e.data.result === 'string' && Array.isArray(e.data.segments))
  assert.ok(Array.isArray(e.slices))
}

test('push(): PCM pushed in chunks is transcribed in slices; end() finishes the stream', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const rt = await ctx.transcribeRealtime({
    ...fast,
    audioSource: 'push',
    realtimeAudioSec: 20,
    realtimeAudioSliceSec: 2,
    realtimeAudioMinSec: 0.5,
  })
  assert.equal(typeof rt.stop, 'function')
  assert.equal(typeof rt.subscribe, 'function')
  const done = collect(rt)
  const pcm = wavInt16(speechWav())
  for (let round = 0; round < 2; round++) {
    for (let at = 0; at < pcm.length; at += 1600) await rt.push(pcm.subarray(at, at + 1600))
  }
  rt.end()
  const events = await done
  assert.ok(events.length > 0)
  for (const e of events) checkEvent(e, ctx)
  const last = events[events.length - 1]
  assert.equal(last.isCapturing, false)
  assert.ok(last.slices.length >= 2, `${last.slices.length} slices for ${(2 * pcm.length) / 16000} s in 2 s slices`)
  assert.ok(last.slices.every((s) => s.final))
  assert.equal(last.data.result, last.slices.map((s) => s.data.result).join(''))
  assert.ok(Math.abs(last.recordingTime - (2 * pcm.length * 1000) / 16000) < 50, String(last.recordingTime))
  await ctx.release()
})

test('audioStream: a Readable of 16-bit PCM bytes (cut anywhere) at 8 kHz stereo', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const mono = wavInt16(speechWav())
  const stereo8k = new Int16Array(mono.length) // every other sample, twice: 8 kHz, 2 channels
  for (let i = 0; i < mono.length / 2; i++) stereo8k[2 * i] = stereo8k[2 * i + 1] = mono[2 * i]
  const bytes = Buffer.from(stereo8k.buffer)
  const chunks = []
  for (let at = 0; at < bytes.length; at += 777) chunks.push(bytes.subarray(at, at + 777)) // odd sizes
  const rt = await ctx.transcribeRealtime({
    ...fast,
    audioStream: Readable.from(chunks),
    sampleRate: 8000,
    channels: 2,
    realtimeAudioSliceSec: 5,
  })
  const events = await collect(rt)
  const last = events[events.length - 1]
  checkEvent(last, ctx)
  assert.equal(last.isCapturing, false)
  const seconds = mono.length / 2 / 8000
  assert.ok(Math.abs(last.recordingTime / 1000 - seconds) < 0.05, `${last.recordingTime} ms vs ${seconds} s`)
  await ctx.release()
})

test('the realtime options: energy VAD, partial results, a recording of the audio', async () => {
  const fs = require('fs')
  const path = require('path')
  const { tmp } = require('./helpers')
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const out = path.join(tmp, `realtime-${process.pid}.wav`)
  const pcm = wavInt16(speechWav())
  const rt = await ctx.transcribeRealtime({
    ...fast,
    audioSource: 'push',
    realtimeAudioSec: 30,
    realtimeAudioSliceSec: 8,
    realtimeAudioMinSec: 1,
    useVad: true,
    vadMs: 2000,
    vadThold: 0.6,
    vadFreqThold: 100,
    partialSec: 0.5,
    audioOutputPath: out,
    live: false,
  })
  const gap = new Int16Array(16000 * 2)
  await rt.push(pcm)
  await rt.push(gap)
  await rt.push(pcm)
  rt.end()
  const events = await collect(rt)
  for (const e of events) checkEvent(e, ctx)
  const seconds = (2 * pcm.length + gap.length) / 16000
  // the recording holds every sample pushed, as whisper.rn writes it: 16-bit PCM
  const wav = fs.readFileSync(out)
  assert.equal(wav.readUInt16LE(20), 1, 'PCM')
  assert.equal(wav.readUInt16LE(34), 16, 'bits per sample')
  assert.ok(Math.abs((wav.length - 44) / 2 / 16000 - seconds) < 0.05, `${wav.length} bytes for ${seconds} s`)
  // every slice reports its own code and transcription time
  const last = events[events.length - 1]
  assert.ok(last.slices.length >= 2)
  for (const s of last.slices) {
    assert.equal(s.code, 0, s.error)
    assert.equal(s.error, undefined)
    assert.ok(s.processTime > 0, `slice ${s.index}: processTime ${s.processTime}`)
  }
  assert.ok(new Set(last.slices.map((s) => s.processTime)).size > 1, 'each slice has its own processTime')
  await ctx.release()
})

test("audioOutputFormat 'float32' records the samples exactly as pushed", async () => {
  const fs = require('fs')
  const path = require('path')
  const { tmp } = require('./helpers')
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const out = path.join(tmp, `realtime-f32-${process.pid}.wav`)
  const rt = await ctx.transcribeRealtime({ ...fast, audioSource: 'push', pcmFormat: 'float32', audioOutputPath: out,
                                            audioOutputFormat: 'float32', partialSec: 0 })
  const pcm = new Float32Array(8000).map((_, i) => Math.sin(i / 7) * 0.3)
  await rt.push(pcm)
  rt.end()
  await collect(rt)
  const wav = fs.readFileSync(out)
  assert.equal(wav.readUInt16LE(34), 32, 'bits per sample')
  const data = wav.indexOf('data', 12) + 8 // a float WAV's header has more chunks than a PCM one
  const back = new Float32Array(wav.buffer.slice(wav.byteOffset + data, wav.byteOffset + wav.length))
  assert.deepEqual(Array.from(back), Array.from(pcm))
  await assert.rejects(ctx.transcribeRealtime({ audioSource: 'push', audioOutputFormat: 'f64' }), /audioOutputFormat/)
  await ctx.release()
})

test('subscribe() adds listeners, as whisper.rn does: each gets every event from then on', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const rt = await ctx.transcribeRealtime({ ...fast, audioSource: 'push', realtimeAudioSliceSec: 2 })
  const a = []
  const b = []
  rt.subscribe((e) => a.push(e))
  rt.subscribe((e) => b.push(e))
  await rt.push(wavInt16(speechWav()))
  rt.end()
  await rt.done
  assert.ok(a.length > 0)
  assert.deepEqual(b, a)
  await ctx.release()
})

test('abort() ends at once: the slice in progress is dropped with code -999 (whisper.rn\'s stop)', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const rt = await ctx.transcribeRealtime({ ...fast, audioSource: 'push', realtimeAudioSliceSec: 25, partialSec: 0.5,
                                            realtimeAudioMinSec: 0.5 })
  const events = []
  let partial
  const sawPartial = new Promise((resolve) => (partial = resolve))
  rt.subscribe((e) => {
    events.push(e)
    if (e.isCapturing && e.slices.length) partial()
  })
  await rt.push(wavInt16(speechWav()))
  await sawPartial // the open slice holds audio
  await rt.abort()
  const last = events[events.length - 1]
  assert.equal(last.isCapturing, false)
  assert.equal(last.isStoppedByAction, true)
  const open = last.slices[last.slices.length - 1]
  assert.equal(open.final, false)
  assert.equal(open.code, -999)
  await ctx.release()
})

test('stop() ends capture and resolves after the last event (isStoppedByAction)', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const rt = await ctx.transcribeRealtime({ ...fast, audioSource: 'push', realtimeAudioSec: 60 })
  const events = []
  rt.subscribe((e) => events.push(e))
  const pcm = wavInt16(speechWav())
  await rt.push(pcm)
  await rt.stop()
  assert.equal(rt.ended, true)
  const last = events[events.length - 1]
  assert.equal(last.isCapturing, false)
  assert.equal(last.isStoppedByAction, true)
  await rt.push(pcm) // after the end: ignored, not an error
  await rt.stop()
  await ctx.release()
})

test('release() ends a running stream; bad chunks and options are clear errors', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  await assert.rejects(ctx.transcribeRealtime({ audioSource: 'tape' }), /option 'audioSource' must be one of 'microphone', 'push'/)
  await assert.rejects(ctx.transcribeRealtime({ audioStream: 5 }), /audioStream must be a Readable/)
  // (a realtimeAudioSec <= 0 is whisper.rn's 30: whisper_rn_values.test.js; a string is refused)
  await assert.rejects(ctx.transcribeRealtime({ audioSource: 'push', realtimeAudioSec: 'long' }), /realtimeAudioSec/)
  const rt = await ctx.transcribeRealtime({ ...fast, audioSource: 'push' })
  await assert.rejects(rt.push('abc'), /push: expected a Float32Array/)
  await assert.rejects(rt.push(new Float32Array([0, NaN])), /NaN|finite/i)
  await rt.push(new Float32Array(16000))
  await ctx.release()
  assert.equal(rt.ended, true)
})

test('the microphone: a clear error where there is no sound server', async (t) => {
  const ctx = await hark.initWhisper({ filePath: micro })
  try {
    const rt = await ctx.transcribeRealtime({ ...fast, captureDevice: 'hark-test-no-such-device' })
    await rt.stop()
    t.diagnostic('a capture device of that name exists here')
  } catch (e) {
    assert.match(e.message, /transcribeRealtime: .*audioSource: 'push'/)
  }
  await ctx.release()
})

// What paplay plays into the test's PulseAudio null sink is what the stream records from the
// sink's monitor (helpers.withPulse).
test('the microphone: what is played into a PulseAudio null sink is captured and transcribed', async (t) => {
  const fs = require('fs')
  const path = require('path')
  await withPulse(t, async ({ dir, play }) => {
    const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
    const rec = path.join(dir, 'rec.wav')
    const rt = await ctx.transcribeRealtime({ ...fast, captureDevice: 'hark_null.monitor', realtimeAudioSec: 3,
                                              realtimeAudioSliceSec: 5, realtimeAudioMinSec: 0.5, audioOutputPath: rec })
    const events = []
    rt.subscribe((e) => events.push(e))
    await new Promise((r) => setTimeout(r, 300)) // capture has started
    play(speechWav())
    await rt.done // realtimeAudioSec ends the capture by itself
    const last = events[events.length - 1]
    assert.equal(last.isCapturing, false)
    assert.equal(last.code, 0, last.error)
    assert.ok(last.recordingTime > 2500, `recorded ${last.recordingTime} ms`)
    // The recording holds the clip: 16-bit samples well above silence somewhere.
    const pcm = new Int16Array(fs.readFileSync(rec).buffer.slice(44))
    let peak = 0
    for (const v of pcm) peak = Math.max(peak, Math.abs(v))
    assert.ok(peak > 1000, `the recording is silent (peak ${peak})`)
    await ctx.release()
  })
})
