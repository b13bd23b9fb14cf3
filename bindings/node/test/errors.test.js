'use strict'
// Bad input never crashes the process: every case is a rejected promise (or, for the few calls
// that return synchronously, a thrown TypeError) whose message names what is wrong.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const path = require('path')
const hark = require('..')
const { micro, tmp, speechWav, fast } = require('./helpers')

test('initWhisper: wrong types, a missing file, a file that is no model', async () => {
  await assert.rejects(hark.initWhisper(), /options|filePath/)
  await assert.rejects(hark.initWhisper({}), /filePath must be a non-empty string, got undefined/)
  await assert.rejects(hark.initWhisper({ filePath: 42 }), /asset ids/)
  await assert.rejects(hark.initWhisper({ filePath: '/no/such/model.bin' }), /\/no\/such\/model\.bin.*(No such file|cannot open)/)
  await assert.rejects(hark.initWhisper({ filePath: 'https://example.com/m.bin' }), /remote files are not supported/)
  await assert.rejects(hark.initWhisper({ filePath: micro, useGpu: 'yes' }), /option 'useGpu' must be a boolean, got a string/)
  await assert.rejects(hark.initWhisper({ filePath: micro, crossKvType: 'q4' }), /crossKvType must be 'f16' or 'q8_0', got 'q4'/)
  await assert.rejects(hark.initWhisper({ filePath: micro, crossKvType: 'q8_0' }), /q8_0 needs flash_attn/)
  const junk = path.join(tmp, 'junk.bin')
  fs.writeFileSync(junk, Buffer.from('this is not a whisper model at all'))
  await assert.rejects(hark.initWhisper({ filePath: junk }), (e) => e instanceof Error && e.message.includes('junk.bin'))
})

test('transcribe / transcribeData: wrong types, missing file, bad audio, bad options', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const cases = [
    [() => ctx.transcribe(undefined), /non-empty string/],
    [() => ctx.transcribe(123, fast), /asset ids/],
    [() => ctx.transcribe('/no/such/audio.wav', fast), /\/no\/such\/audio\.wav/],
    [() => ctx.transcribe('data:audio/wav;base64,AAAA', fast), /./],
    [() => ctx.transcribe(speechWav(), 'fast'), /options must be an object, got a string/],
    [() => ctx.transcribe(speechWav(), { onProgress: 3 }), /onProgress/],
    [() => ctx.transcribe(speechWav(), { language: 'xx' }), /xx/],
    [() => ctx.transcribe(speechWav(), { beamSize: 0 }), /beam_size must be in \[1, 64\].*\(option 'beamSize'\)/],
    [() => ctx.transcribe(speechWav(), { temperature: NaN }), /option 'temperature'/],
    [() => ctx.transcribe(speechWav(), { maxThreads: 1.5 }), /option 'maxThreads' must be an integer/],
    [() => ctx.transcribe(speechWav(), { vad: true }), /option 'vad' needs 'vadModelPath'/],
    [() => ctx.transcribe(speechWav(), { batchSize: 4 }), /option 'batchSize' needs 'vadModelPath'/],
    [() => ctx.transcribe(speechWav(), { vad: true, vadModelPath: '/no/such/silero.bin' }), /\/no\/such\/silero\.bin/],
    [() => ctx.transcribeData(null, fast), /expected an ArrayBuffer/],
    [() => ctx.transcribeData({ length: 3 }, fast), /expected an ArrayBuffer.*got an object/],
    [() => ctx.transcribeData(new ArrayBuffer(3), fast), /3 bytes is not a whole number of int16 samples/],
    [() => ctx.transcribeData(new ArrayBuffer(0), fast), /empty/],
    [() => ctx.transcribeData(new Float64Array(4), fast), /Float32Array, an Int16Array or a Buffer/],
    [() => ctx.transcribeData('@@not base64@@', fast), /not base64/],
    [() => ctx.transcribeData(new Float32Array([0, NaN, 0, 0]), fast), /NaN|finite/i],
    [() => ctx.transcribeData(new Int16Array(100), { ...fast, sampleRate: 12 }), /sampleRate/],
    [() => ctx.transcribeData(new Int16Array(100), { ...fast, pcmFormat: 'mp3' }), /pcmFormat.*'int16', 'float32'/],
  ]
  for (const [start, pattern] of cases) {
    const job = start()
    assert.equal(typeof job.stop, 'function')
    await assert.rejects(job.promise, (e) => {
      assert.ok(e instanceof Error, 'an Error')
      assert.match(e.message, pattern, start.toString())
      return true
    })
  }
  // the context still works after all that
  const r = await ctx.transcribe(speechWav(), fast).promise
  assert.equal(r.isAborted, false)
  await ctx.release()
})

test('a released context rejects every call; bench rejects bad thread counts', async () => {
  const ctx = await hark.initWhisper({ filePath: micro })
  await assert.rejects(ctx.bench(0), /maxThreads must be an integer in \[1, 256\]/)
  await ctx.release()
  await assert.rejects(ctx.transcribe(speechWav(), fast).promise, /WhisperContext \d+ has been released/)
  await assert.rejects(ctx.transcribeData(new Int16Array(16), fast).promise, /has been released/)
  await assert.rejects(ctx.bench(1), /has been released/)
  await assert.rejects(ctx.transcribeRealtime({ audioSource: 'push' }), /has been released/)
})

test('VAD and log: bad input is a clear error', async () => {
  await assert.rejects(hark.initWhisperVad({ filePath: '/no/such/vad.bin' }), /\/no\/such\/vad\.bin/)
  await assert.rejects(hark.initWhisperVad({ filePath: micro }), /./)  // a whisper model is no VAD model
  await assert.rejects(hark.initWhisperVad({ filePath: micro, nThreads: -1 }), /nThreads/)
  assert.throws(() => hark.addNativeLogListener('nope'), /listener must be a function/)
})
