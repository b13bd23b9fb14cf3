'use strict'
// faster-whisper's decoding options, which hark has in the engine, as this package's extras:
// hotwords, prefix, multilingual, repetitionPenalty, noRepeatNgramSize, lengthPenaltyPower and
// clipTimestamps reach the engine, and a value of the wrong type is a TypeError naming it.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro, speechWav, fast } = require('./helpers')

test('faster-whisper options reach the engine', async () => {
  const ctx = await hark.initWhisper({ filePath: micro })
  try {
    const base = { ...fast, language: 'en' }
    const prefixed = await ctx.transcribe(speechWav(), { ...base, prefix: 'Hello hark' }).promise
    assert.ok(prefixed.result.trim().startsWith('Hello hark'), prefixed.result)
    const hot = await ctx.transcribe(speechWav(), { ...base, hotwords: 'Kubernetes' }).promise
    assert.ok(!hot.result.includes('Kubernetes'), hot.result)
    const clipped = await ctx.transcribe(speechWav(), { ...base, clipTimestamps: [0.5, 1.5] }).promise
    for (const s of clipped.segments) assert.ok(s.t0 >= 50 && s.t1 <= 150, JSON.stringify(s))
    const shaped = await ctx.transcribe(speechWav(), {
      ...base, repetitionPenalty: 1.3, noRepeatNgramSize: 3, multilingual: true, lengthPenaltyPower: true,
    }).promise
    assert.equal(typeof shaped.result, 'string')
    for (const [bad, name] of [[{ clipTimestamps: 'x' }, /clipTimestamps/], [{ clipTimestamps: [1, 'x'] }, /clipTimestamps/],
                               [{ hotwords: 5 }, /hotwords/]])
      await assert.rejects(ctx.transcribe(speechWav(), { ...base, ...bad }).promise, name)
  } finally {
    await ctx.release()
  }
})
