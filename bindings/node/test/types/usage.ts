// A TypeScript program using the API as whisper.rn's README does; ctest node.binding runs
// `tsc --noEmit -p test/types` over it, so index.d.ts must describe what index.js offers.
import { Readable } from 'stream'
import {
  initWhisper,
  initWhisperVad,
  releaseAllWhisper,
  addNativeLogListener,
  toggleNativeLog,
  libVersion,
  type TranscribeResult,
  type TranscribeRealtimeEvent,
  type BenchResult,
  type VadSegment,
} from '../..'

async function main(): Promise<void> {
  const sub = addNativeLogListener((level: string, text: string) => console.log(level, text))
  await toggleNativeLog(true)
  const ctx = await initWhisper({ filePath: 'ggml-tiny.en.bin', useGpu: true, useFlashAttn: true })
  console.log(ctx.id, ctx.gpu, ctx.reasonNoGPU, libVersion)

  const { stop, promise } = ctx.transcribe('talk.wav', {
    language: 'en',
    maxLen: 1,
    tokenTimestamps: true,
    onProgress: (p: number) => console.log(p),
    onNewSegments: (r) => console.log(r.nNew, r.totalNNew, r.result, r.segments[0]?.t0),
  })
  setTimeout(() => void stop(), 1000)
  const result: TranscribeResult = await promise
  for (const s of result.segments) console.log(s.t0, s.t1, s.text)
  if (result.isAborted) console.log('stopped')

  const pcm = new Int16Array(16000)
  const data = await ctx.transcribeData(pcm.buffer, { beamSize: 5 }).promise
  console.log(data.result, data.language)
  await ctx.transcribeFile('talk.wav').promise
  await ctx.transcribeData(new Float32Array(16000), { sampleRate: 16000, pcmFormat: 'float32' }).promise

  const rt = await ctx.transcribeRealtime({ realtimeAudioSec: 60, realtimeAudioSliceSec: 25, audioSource: 'push' })
  rt.subscribe((e: TranscribeRealtimeEvent) => {
    if (!e.isCapturing) console.log('done', e.data?.result, e.slices?.length)
  })
  await rt.push(new Float32Array(1600))
  rt.end()
  const fromStream = await ctx.transcribeRealtime({ audioStream: Readable.from([Buffer.alloc(3200)]) })
  await fromStream.stop()

  const bench: BenchResult = await ctx.bench(4)
  console.log(bench.encodeMs.toFixed(1))
  await ctx.release()
  await releaseAllWhisper()

  const vad = await initWhisperVad({ filePath: 'ggml-silero-v6.2.0.bin', nThreads: 1 })
  const segments: VadSegment[] = await vad.detectSpeech('talk.wav', { threshold: 0.5, minSilenceDurationMs: 100 })
  console.log(segments.map((s) => s.t1 - s.t0))
  await vad.detectSpeechData(pcm.buffer)
  await vad.release()
  sub.remove()
}

void main()
