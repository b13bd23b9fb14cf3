'use strict'
// initWhisperVad / detectSpeech / detectSpeechData against whisper.cpp's segments for the shared
// clip (../shared/vad: the Silero v6.2.0 model, vad-three-clips.wav, and the reference segments
// in vad-three-clips.silero-probs.txt); skipped with the reason when ../shared/vad is missing.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const hark = require('..')
const { sharedVad, wavInt16, wavFloat32, micro, fast } = require('./helpers')

const model = sharedVad('silero-v6.2.0-ggml.bin')
const clip = sharedVad('vad-three-clips.wav')
const refFile = sharedVad('vad-three-clips.silero-probs.txt')
const skip = !(model && clip && refFile) && '../shared/vad not found (set HARK_SHARED_DIR)'

// "# segment 32.00 691.00" lines: whisper.cpp's segments in centiseconds (10 ms units).
function referenceSegments() {
  return fs
    .readFileSync(refFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('# segment '))
    .map((l) => {
      const [t0, t1] = l.slice('# segment '.length).trim().split(/\s+/).map(Number)
      return { t0: Math.round(t0), t1: Math.round(t1) }
    })
}

test('detectSpeech on the shared clip gives whisper.cpp\'s segments', { skip }, async () => {
  const vad = await hark.initWhisperVad({ filePath: model, nThreads: 1 })
  assert.equal(typeof vad.id, 'number')
  assert.equal(vad.gpu, false)
  const ref = referenceSegments()
  assert.equal(ref.length, 3)
  assert.deepEqual(await vad.detectSpeech(clip), ref)
  const uri = 'data:audio/wav;base64,' + fs.readFileSync(clip).toString('base64')
  assert.deepEqual(await vad.detectSpeech(uri), ref)
  // the same audio as PCM: base64 float32 (pcmFormat 'float32'), a Float32Array: the same samples
  const f32 = wavFloat32(clip)
  assert.deepEqual(await vad.detectSpeechData(Buffer.from(f32.buffer).toString('base64'), { pcmFormat: 'float32' }), ref)
  assert.deepEqual(await vad.detectSpeechData(f32), ref)
  // base64 without pcmFormat is 16-bit PCM, as whisper.rn's native code reads it
  const b64int16 = await vad.detectSpeechData(Buffer.from(wavInt16(clip).buffer).toString('base64'))
  assert.equal(b64int16.length, ref.length)
  // an ArrayBuffer of int16 (whisper.rn's): the clip cut to 16 bits, the segments within a frame
  const from16 = await vad.detectSpeechData(wavInt16(clip).buffer)
  assert.equal(from16.length, ref.length)
  for (let i = 0; i < ref.length; i++) {
    assert.ok(Math.abs(from16[i].t0 - ref[i].t0) <= 4 && Math.abs(from16[i].t1 - ref[i].t1) <= 4, JSON.stringify(from16))
  }
  // options reach the segments: a long minimum silence joins the three
  const joined = await vad.detectSpeech(clip, {
    threshold: 0.5,
    minSpeechDurationMs: 250,
    minSilenceDurationMs: 2000,
    speechPadMs: 30,
    maxSpeechDurationS: 100,
    samplesOverlap: 0.1,
  })
  assert.equal(joined.length, 1)
  assert.equal(joined[0].t0, ref[0].t0)
  await assert.rejects(vad.detectSpeech(clip, { threshold: 2 }), /option 'threshold' must be a number in \[0, 1\]/)
  await vad.release()
  await assert.rejects(vad.detectSpeech(clip), /has been released/)
})

test('releaseAllWhisperVad; VAD-assisted transcription through the same model', { skip }, async () => {
  const a = await hark.initWhisperVad({ filePath: model })
  const b = await hark.initWhisperVad({ filePath: model })
  await hark.releaseAllWhisperVad()
  await assert.rejects(a.detectSpeechData(new Int16Array(512).buffer), /released/)
  await assert.rejects(b.detectSpeechData(new Int16Array(512).buffer), /released/)
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const r = await ctx.transcribe(clip, { ...fast, vad: true, vadModelPath: model, vadThreshold: 0.5, vadMinSilenceDurationMs: 100 })
    .promise
  for (const s of r.segments) assert.ok(s.t0 >= 0 && s.t1 <= 1800, JSON.stringify(s))
  const batched = await ctx.transcribe(clip, { ...fast, batchSize: 2, vadModelPath: model }).promise
  assert.equal(batched.isAborted, false)
  await ctx.release()
})
