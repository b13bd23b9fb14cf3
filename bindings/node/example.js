#!/usr/bin/env node
'use strict'
// Transcribes a file with hark-whisper, printing segments as they are final, then the same audio
// through a realtime stream fed from a Readable.
//   node example.js MODEL.bin AUDIO.wav
const fs = require('fs')
const { spawn } = require('child_process')
const { initWhisper, libVersion } = require('.')

async function main() {
  const [model, audio] = process.argv.slice(2)
  if (!model || !audio) {
    console.error('usage: node example.js MODEL.bin AUDIO.wav')
    process.exit(2)
  }
  console.log(`hark ${libVersion}`)
  const ctx = await initWhisper({ filePath: model })
  console.log(`context ${ctx.id} on ${ctx.device}${ctx.gpu ? '' : ` (${ctx.reasonNoGPU})`}`)

  const { promise } = ctx.transcribe(audio, {
    language: 'auto',
    onProgress: (p) => process.stderr.write(`\r${p}%`),
    onNewSegments: ({ segments }) => {
      for (const s of segments) console.log(`\n[${s.t0 / 100}s -> ${s.t1 / 100}s] ${s.text}`)
    },
  })
  const result = await promise
  console.log(`\nlanguage ${result.language}: ${result.result}`)

  // The same file as live audio: sox decodes it to 16 kHz mono 16-bit PCM on stdout.
  if (fs.existsSync('/usr/bin/sox')) {
    const sox = spawn('sox', [audio, '-t', 'raw', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed', '-'])
    const rt = await ctx.transcribeRealtime({ audioStream: sox.stdout, realtimeAudioSliceSec: 10 })
    rt.subscribe((e) => process.stderr.write(`\rrealtime ${(e.recordingTime / 1000).toFixed(1)} s: ${e.data.result}`))
    const last = await rt.done
    console.log(`\nrealtime: ${last ? last.data.result : ''}`)
  }
  await ctx.release()
}

main().catch((e) => {
  console.error(e.message)
  process.exit(1)
})
