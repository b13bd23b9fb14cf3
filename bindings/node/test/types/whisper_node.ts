// A program written against @fugood/whisper.node 1.1's types; only the import is changed.
import whisper, { initWhisper, initWhisperVad, type TranscribeResult, type BenchResult, type VadSegment } from 'hark-whisper/whisper.node'

async function main(): Promise<void> {
  await whisper.toggleNativeLog(true)
  console.log(whisper.isNativeLogEnabled())
  const ctx = await initWhisper({ filePath: 'ggml-base.en.bin', useGpu: false })
  const info = ctx.getModelInfo()
  console.log(info.filePath, info.useFlashAttn)
  const { stop, promise } = ctx.transcribeFile('talk.wav', { language: 'en', onProgress: (p: number) => console.log(p) })
  setTimeout(() => void stop(), 5000)
  const r: TranscribeResult = await promise
  for (const s of r.segments) console.log(`${s.t0 / 1000}s`, s.text)
  const data = await ctx.transcribeData(new ArrayBuffer(32000)).promise
  console.log(data.result)
  const b: BenchResult = await ctx.bench(4)
  console.log(b.batchdMs)
  const vad = await initWhisperVad({ filePath: 'ggml-silero-v6.2.0.bin' })
  const speech: VadSegment[] = await vad.detectSpeechFile('talk.wav', { threshold: 0.5 })
  console.log(speech.length)
  await vad.release()
  await ctx.release()
}

void main()
