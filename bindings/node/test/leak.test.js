'use strict'
// 1,000 initWhisper / transcribeData / release cycles on the micro model: the process's resident
// memory stays flat. Each job runs on a new thread, and glibc gives threads malloc arenas (and
// keeps freed thread stacks) that stay with the process: RSS climbs for the first ~200 cycles,
// then holds (measured: 155 MB at 200 cycles, 155-160 MB up to 700). So RSS is measured after
// 200 cycles and at the end, and may grow by 16 MB over the 800 between: one leaked context
// (the 8 MB model mapping plus a state's buffers) or even 20 KB a cycle would go past that.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro } = require('./helpers')

const CYCLES = 1000
const WARMUP = 200

test(`no leak over ${CYCLES} init/transcribe/release cycles`, async (t) => {
  const audio = new Float32Array(1600) // 0.1 s of a tone
  for (let i = 0; i < audio.length; i++) audio[i] = 0.3 * Math.sin(i * 0.2)
  const options = { language: 'en', temperatureInc: 0, maxThreads: 1, maxTokensPerWindow: 2 }
  const rssMb = () => process.memoryUsage().rss / (1 << 20)
  let base = 0
  for (let i = 0; i < CYCLES; i++) {
    if (i === WARMUP) {
      global.gc?.()
      base = rssMb()
    }
    const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
    const r = await ctx.transcribeData(audio, options).promise
    assert.equal(r.isAborted, false)
    await ctx.release()
  }
  global.gc?.()
  const end = rssMb()
  const line = `RSS after ${WARMUP} cycles ${base.toFixed(1)} MB, after ${CYCLES} ${end.toFixed(1)} MB (growth ${(end - base).toFixed(1)} MB)`
  t.diagnostic(line)
  console.log(`node.binding leak check: ${line}`)
  assert.ok(end - base < 16, line)
})
