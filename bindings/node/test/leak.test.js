'use strict'
// 1,000 initWhisper / transcribeData / release cycles on the micro model: the process's resident
// memory stays flat. Each job runs on a new thread, and glibc gives threads malloc arenas (and
// keeps freed thread stacks) that stay with the process: RSS climbs for the first ~200 cycles,
// then holds (run.sh caps the arenas with MALLOC_ARENA_MAX=2: about 100 MB, +2-3 MB after).
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const { micro } = require('./helpers')

const CYCLES = 1000
const MARKS = [200, 600, 1000] // RSS is read after these many cycles

// A leak grows RSS by the same amount every cycle, so it shows in both stretches between the
// marks; a one-off jump (a malloc arena, thread stacks kept by glibc, a late GC on a busy
// machine) shows in one. The smaller of the two growths must stay under 8 MB: one leaked
// context (the 8 MB model mapping plus a state's buffers) or 20 KB a cycle would pass it.
test(`no leak over ${CYCLES} init/transcribe/release cycles`, async (t) => {
  const audio = new Float32Array(1600) // 0.1 s of a tone
  for (let i = 0; i < audio.length; i++) audio[i] = 0.3 * Math.sin(i * 0.2)
  const options = { language: 'en', temperatureInc: 0, maxThreads: 1, maxTokensPerWindow: 2 }
  // After collections, with turns of the event loop between them so finalizers run.
  const settledRssMb = async () => {
    for (let k = 0; k < 3; k++) {
      global.gc?.()
      await new Promise((r) => setImmediate(r))
    }
    return process.memoryUsage().rss / (1 << 20)
  }
  const rss = []
  for (let i = 1; i <= CYCLES; i++) {
    const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
    const r = await ctx.transcribeData(audio, options).promise
    assert.equal(r.isAborted, false)
    await ctx.release()
    if (MARKS.includes(i)) rss.push(await settledRssMb())
  }
  const first = rss[1] - rss[0], second = rss[2] - rss[1]
  const line = `RSS after ${MARKS.join(' / ')} cycles: ${rss.map((x) => x.toFixed(1)).join(' / ')} MB ` +
               `(growth ${first.toFixed(1)} then ${second.toFixed(1)} MB)`
  t.diagnostic(line)
  console.log(`node.binding leak check: ${line}`)
  assert.ok(Math.min(first, second) < 8, line)
})
