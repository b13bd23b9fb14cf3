'use strict'
// Jobs: stop() during a job resolves once it has stopped (isAborted), two contexts and several
// jobs run at once, release() with running jobs stops them first.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro, speechWav, fast } = require('./helpers')

// Long enough that a stop lands mid-job: 60 s of noise-like tones (two windows), fallback on.
function longAudio(seconds = 60) {
  const a = new Float32Array(seconds * 16000)
  let x = 1
  for (let i = 0; i < a.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    a[i] = 0.2 * Math.sin(i * 0.05) + 0.1 * (x / 0x7fffffff - 0.5)
  }
  return a
}
const slow = { language: 'en', maxThreads: 1 } // temperature fallback on: long on random weights

test('stop() during a job resolves after the job returned; the result says isAborted', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  let progressed
  const started = new Promise((r) => (progressed = r))
  const { stop, promise } = ctx.transcribeData(longAudio(), { ...slow, onProgress: () => progressed() })
  let settled = false
  promise.then(() => (settled = true))
  await started
  await stop()
  // stop() resolved: the job has returned, so its promise settles in this same turn of events.
  await new Promise((r) => setImmediate(r))
  assert.equal(settled, true, 'the promise is settled once stop() resolved')
  const r = await promise
  assert.equal(r.isAborted, true)
  await stop() // a second stop is harmless
  assert.equal(ctx._native.runningJobs(), 0)
  await ctx.release()
})

test('stop() before the job started and after it finished', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const early = ctx.transcribe(speechWav(), fast)
  await early.stop()
  assert.equal((await early.promise).isAborted, true)
  const done = ctx.transcribe(speechWav(), fast)
  const r = await done.promise
  assert.equal(r.isAborted, false)
  await done.stop()
  await ctx.release()
})

test('two contexts and several jobs at once give the results they give alone', async () => {
  const [a, b] = await Promise.all([
    hark.initWhisper({ filePath: micro, useFlashAttn: true }),
    hark.initWhisper({ filePath: micro, useFlashAttn: true }),
  ])
  const wav = speechWav()
  const alone = await a.transcribe(wav, fast).promise
  const jobs = [a.transcribe(wav, fast), b.transcribe(wav, fast), a.transcribe(wav, fast), b.transcribe(wav, fast)]
  assert.equal(new Set(jobs.map((j) => j.jobId)).size, 4, 'every job has its own id')
  const results = await Promise.all(jobs.map((j) => j.promise))
  for (const r of results) assert.deepEqual(r.segments, alone.segments)
  await Promise.all([a.release(), b.release()])
})

test('release() with running jobs stops them first, then frees the model', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const jobs = [ctx.transcribeData(longAudio(), slow), ctx.transcribeData(longAudio(), slow)]
  await new Promise((r) => setTimeout(r, 50))
  await ctx.release()
  for (const j of jobs) assert.equal((await j.promise).isAborted, true)
  await assert.rejects(ctx.transcribe(speechWav(), fast).promise, /released/)
  await ctx.release() // twice is harmless
})
