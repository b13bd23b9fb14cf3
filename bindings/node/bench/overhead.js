#!/usr/bin/env node
'use strict'
// The binding's overhead: the same job through transcribeData (JS -> addon -> hark, result back
// as JS objects) and through hark's C++ API (bench_transcribe's figures are the engine's own).
//   node bench/overhead.js MODEL.bin [SECONDS] [RUNS]
// Prints, per run, the wall time of the transcribeData call (from the call until the promise
// resolves) and the engine's own total_ms for the same job (Transcript.timings.total_ms, the
// time inside Context::transcribe); the difference is what the binding adds: copying the
// samples, a thread, the thread-safe call back, converting the result.
const { initWhisper } = require('..')

async function main() {
  const [model, seconds = '10', runs = '5'] = process.argv.slice(2)
  if (!model) {
    console.error('usage: node bench/overhead.js MODEL.bin [SECONDS] [RUNS]')
    process.exit(2)
  }
  const audio = new Float32Array(Number(seconds) * 16000)
  for (let i = 0; i < audio.length; i++) audio[i] = 0.3 * Math.sin(i * 0.05) * (Math.floor(i / 8000) % 2)
  const ctx = await initWhisper({ filePath: model, useFlashAttn: true })
  const options = { language: 'en', temperatureInc: 0, maxThreads: 2 }
  await ctx.transcribeData(audio, options).promise // warm-up: the state pool, page cache
  const rows = []
  for (let i = 0; i < Number(runs); i++) {
    const t0 = process.hrtime.bigint()
    const r = await ctx.transcribeData(audio, options).promise
    const wall = Number(process.hrtime.bigint() - t0) / 1e6
    rows.push({ wall, engine: r.timings.totalMs })
  }
  await ctx.release()
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const r of rows) console.log(`transcribeData ${r.wall.toFixed(2)} ms, engine ${r.engine.toFixed(2)} ms, overhead ${(r.wall - r.engine).toFixed(2)} ms`)
  const w = median(rows.map((r) => r.wall))
  const e = median(rows.map((r) => r.engine))
  const o = median(rows.map((r) => r.wall - r.engine))
  console.log(JSON.stringify({ audio_seconds: Number(seconds), runs: rows.length, transcribe_data_ms: w, engine_total_ms: e, overhead_ms: o }))
}

main().catch((e) => {
  console.error(e.message)
  process.exit(1)
})
